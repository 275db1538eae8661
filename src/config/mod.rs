//! Configuration: the per-repository configuration (`repo`) and the server
//! configuration (`server`).
pub mod repo;
pub mod server;

pub use repo::{ConfigError, RepoConfig, SweepMode};
