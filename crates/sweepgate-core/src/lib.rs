//! sweepgate's pure domain: everything sweepgate decides about a pull
//! request, as functions over data. No async runtime, HTTP, database or
//! GitHub client here; the service (`sweepgate`) gathers the facts and
//! publishes the results.
//!
//! - [`recipe`]: parsers of the benchmark repository's data files;
//! - [`matrix`]: the sweep job matrix, identical to the reference generator;
//! - [`commands`]: the PR comment grammar and the permission table;
//! - [`signoff`]: sign-off detection and checklist parsing;
//! - [`checks`]: the verifier checks 0–17 and the recipe lint rules;
//! - [`sweep`]: the sweep gate, run eligibility, dispatch and staging rules;
//! - [`config`]: the per-repository configuration;
//! - [`diff`]: line diffs (the one diff algorithm);
//! - [`ids`]: newtypes for GitHub ids.

pub mod checks;
pub mod commands;
pub mod config;
pub mod diff;
pub mod files;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod ids;
pub mod legacy;
pub(crate) mod markdown;
pub mod matrix;
pub mod recipe;
pub mod signoff;
pub mod sweep;
