//! Sweep runs: the sweep gate on pushes and label changes, the result
//! links when a run completes, pinning and staging a run (`/use`,
//! `/reuse-sweep-run`, `/stage-results`), and the results repository's
//! staging callbacks. Here: what the gate and the staging callbacks share.
mod gate;
mod results;
pub(crate) mod reuse;
mod staging;

pub(crate) use gate::SweepGate;
pub(crate) use results::RunResults;
pub(crate) use reuse::{PrAt, RunCommand, dispatch, prepare};
pub(crate) use staging::StagingCallback;

use super::read_at;
use crate::events::HandlerError;
use crate::github::GitHubSource;
use sweepgate_core::config::RepoConfig;
use sweepgate_core::recipe::master;

/// The changelog on both sides and the master configs at the head.
struct RecipeState {
    changelog_before: Vec<u8>,
    changelog_after: Vec<u8>,
    master: Result<master::MasterConfig, sweepgate_core::recipe::ParseError>,
}

impl RecipeState {
    async fn read(
        src: &GitHubSource,
        cfg: &RepoConfig,
        base: &str,
        head: &str,
    ) -> Result<RecipeState, HandlerError> {
        let log = &cfg.paths.changelog;
        let changelog_before = read_at(src, base, log).await?.unwrap_or_default();
        let changelog_after = read_at(src, head, log).await?.unwrap_or_default();
        let mut files = Vec::new();
        for p in &cfg.paths.master_configs {
            if let Some(b) = read_at(src, head, p).await? {
                files.push((p.clone(), b));
            }
        }
        let master = master::parse_many(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
        Ok(RecipeState {
            changelog_before,
            changelog_after,
            master,
        })
    }
}
