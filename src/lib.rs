//! sweepgate: a deterministic GitHub App that gates pull requests of a
//! GPU-inference benchmark repository. This crate is the service and the
//! command line; the rules it applies are the pure domain crate
//! `sweepgate_core`.
//!
//! The module layout follows the architecture: HTTP intake (`server`) knows
//! nothing of checks; `events` types the payloads and `queue` runs the
//! durable jobs; `handlers` gather a PR's facts (through `github` or the
//! local `repo`), call the domain and publish through `comments`, `lint`
//! and `verdict` (texts in `templates/`); `store` is the one home of SQL.

pub mod app;
pub mod cli;
pub mod comments;
pub mod config;
pub mod dashboard;
#[cfg(feature = "demo")]
pub(crate) mod demo;
pub mod deploy;
pub mod events;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod github;
pub mod handlers;
pub mod lint;
pub(crate) mod progress;
pub mod queue;
pub mod recovery;
pub mod repo;
pub mod server;
pub mod snapshot;
pub mod store;
pub mod telemetry;
pub mod verdict;
