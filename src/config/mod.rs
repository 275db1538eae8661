//! The server configuration (flags, environment, TOML file). The
//! per-repository configuration is `sweepgate_core::config`.
pub mod server;
