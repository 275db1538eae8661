//! The per-repository configuration (`.github/sweepgate.toml`), and the
//! benchmark repository's layout over its history ([`layout`]).
pub mod layout;
pub mod repo;

pub use repo::{ConfigError, RepoConfig, SignoffSettings, SweepMode};
