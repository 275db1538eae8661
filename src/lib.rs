//! sweepgate: a deterministic GitHub App that gates pull requests of a
//! GPU-inference benchmark repository.
//!
//! The module layout follows the architecture: HTTP intake (`server`) knows
//! nothing of checks; `checks` are pure functions over a PR snapshot;
//! GitHub access (`github`), storage (`store`), templates (`verdict`,
//! `templates/`) and parsers (`recipe`) each have one home.

pub mod app;
pub mod bench;
pub mod checks;
pub mod cli;
pub mod commands;
pub mod comments;
pub mod config;
pub mod dashboard;
pub mod demo;
pub mod deploy;
pub mod events;
pub mod fuzzing;
pub mod github;
pub mod handlers;
pub mod ids;
pub mod matrix;
pub mod progress;
pub mod queue;
pub mod recipe;
pub mod reliability;
pub mod repo;
pub mod sandbox;
pub mod server;
pub mod signoff;
pub mod store;
pub mod sweep;
pub mod telemetry;
pub mod verdict;
