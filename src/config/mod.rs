//! The server configuration (flags, environment, TOML file), and reading
//! the per-repository configuration (`sweepgate_core::config`) at a
//! revision ([`repo`]).
pub mod repo;
pub mod server;
