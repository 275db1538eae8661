//! Gathering a PR's snapshot (`sweepgate_core::checks::snapshot`), the
//! facts the verifier judges, apart from rendering the verdict
//! (`crate::verdict`): from a local git range or files ([`local`]: the
//! command line and fixtures) and from GitHub ([`remote`]: the server and
//! `sweepgate verify`), with the run artifacts ([`artifacts`]). Argument
//! parsing is `crate::cli`'s.
pub(crate) mod artifacts;
pub mod local;
pub(crate) mod remote;

pub use local::{
    GithubFacts, LocalCheck, LocalError, Trees, check_local, check_repo, read_artifacts,
    snapshot_from_trees,
};
