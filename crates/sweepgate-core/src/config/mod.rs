//! The per-repository configuration (`.github/sweepgate.toml`).
pub mod repo;

pub use repo::{ConfigError, RepoConfig, SignoffSettings, SweepMode};
