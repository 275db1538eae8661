//! The recipe lint in the service: reading a PR's files ([`gather`]) and
//! rendering the summary comment ([`summary`]). The rules themselves are
//! `sweepgate_core::checks::lint`.
pub(crate) mod gather;
pub mod summary;
