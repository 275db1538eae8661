//! The scenario API: the `Sandbox` methods that seed and drive the world
//! and read it back for assertions, in `impl Sandbox` blocks by GitHub area.
mod actions;
mod apps;
mod checks;
mod pulls;
mod repos;

pub use checks::{CheckRunView, StatusView};
pub use pulls::{CommentView, Pr};
