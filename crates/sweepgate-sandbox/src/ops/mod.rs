//! State changes shared by the HTTP handlers and the scenario API. Each one
//! validates like GitHub, mutates the world and emits the webhook GitHub
//! would send for it.
//!
//! The operations are grouped by GitHub area, as the routes are:
//! repositories and git data, pull requests, issue conversation (comments
//! and labels), checks and statuses, and Actions.
mod actions;
mod checks;
mod issues;
mod pulls;
mod repos;

pub use actions::RunSpec;
pub use pulls::PullRequestSpec;
pub use repos::Change;

use serde_json::{Map, Value};

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
