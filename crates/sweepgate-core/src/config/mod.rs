//! The per-repository configuration (`.github/sweepgate.toml`, [`sources`]:
//! the files it replaces), and the
//! benchmark repository's layout over its history ([`layout`]).
pub mod layout;
pub mod repo;
pub mod sources;

pub use repo::{ConfigError, Legacy, RepoConfig, SignoffSettings, SweepMode, WriteMode};
pub use sources::{CONFIG_FILES, Deprecation, Resolved};
