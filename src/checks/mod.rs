//! Checks: pure functions over the PR facts. `lint` holds the recipe lint
//! rules (one file each).
pub mod lint;
