//! The contribution guide (`docs/contracts.md` §4): once per PR that touches a
//! master config, a benchmark script or the changelog, on opened, reopened
//! and ready for review.
use super::{Services, publish, repo_of};
use crate::comments::{GUIDE_MARKER, Guide, render};
use crate::events::{Event, Handler, HandlerError, JobContext};
use async_trait::async_trait;
use sweepgate_core::config::RepoConfig;

pub(crate) struct ContributionGuide {
    services: Services,
}

impl ContributionGuide {
    pub(crate) fn new(services: Services) -> Self {
        Self { services }
    }
}

/// Whether a changed path is one the guide is about.
pub(crate) fn touches_recipes(cfg: &RepoConfig, path: &str) -> bool {
    let p = &cfg.paths;
    p.master_configs.iter().any(|m| m == path)
        || path == p.changelog
        || path.starts_with(p.benchmarks.as_str())
}

/// The team on the catch-all `*` line of CODEOWNERS.
fn catch_all_team(codeowners: &str) -> Option<String> {
    codeowners.lines().rev().find_map(|line| {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut parts = line.split_whitespace();
        (parts.next() == Some("*"))
            .then(|| parts.find(|o| o.contains('/')).map(String::from))
            .flatten()
    })
}

#[async_trait]
impl Handler for ContributionGuide {
    fn id(&self) -> crate::events::HandlerId {
        crate::events::HandlerId::ContributionGuide
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        let Event::PullRequest(ev) = event else {
            return Ok(());
        };
        let repo = repo_of(ctx)?;
        let pr = ev.pull_request.number;
        let branch = ev
            .pull_request
            .base
            .as_ref()
            .and_then(|b| b.repo.as_ref())
            .and_then(|r| r.default_branch.clone())
            .unwrap_or_else(|| "main".into());
        let (api, loaded) = self.services.api_in_mode(ctx, &repo, &branch).await?;
        let cfg = loaded.config;
        let files = api.pr_files(&repo, pr).await?;
        if !files.iter().any(|f| touches_recipes(&cfg, &f.filename)) {
            return Ok(());
        }
        let blob = |path: &str| format!("https://github.com/{repo}/blob/{branch}/{path}");
        let core_team = if cfg.policy.core_team.is_empty() {
            let owners = api.file_at(&repo, &cfg.paths.codeowners, &branch).await?;
            owners
                .and_then(|b| catch_all_team(&String::from_utf8_lossy(&b)))
                .unwrap_or_else(|| "the core team".into())
        } else {
            cfg.policy.core_team.clone()
        };
        let label_docs = if cfg.links.label_docs.is_empty() {
            blob("README.md")
        } else {
            cfg.links.label_docs.clone()
        };
        let body = render(&Guide {
            core_team: &core_team,
            codeowners_url: &blob(&cfg.paths.codeowners),
            checklist_url: &blob(&cfg.paths.checklist_template),
            contact: &cfg.links.maintainer_contact,
            changelog: &cfg.paths.changelog,
            primary: &cfg.labels.primary,
            modifiers: &cfg.labels.modifiers,
            roles: &cfg.labels.roles,
            label_docs_url: &label_docs,
            rerun_docs_url: &cfg.links.rerun_docs,
        });
        // The replaced automation's guide (legacy logins) counts: no second one.
        publish::post_once(&api, &repo, pr, GUIDE_MARKER, &body, &cfg.legacy.logins).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catch_all_team_is_read() {
        let text =
            "# owners\n* @SemiAnalysisAI/core @someone\n/configs/amd-master.yaml @amd/team\n";
        assert_eq!(
            catch_all_team(text).as_deref(),
            Some("@SemiAnalysisAI/core")
        );
        assert_eq!(catch_all_team("/x @a/b\n"), None);
    }

    #[test]
    fn recipe_paths() {
        let cfg = RepoConfig::default();
        assert!(touches_recipes(&cfg, "configs/nvidia-master.yaml"));
        assert!(touches_recipes(&cfg, "perf-changelog.yaml"));
        assert!(touches_recipes(
            &cfg,
            "benchmarks/single_node/fixed_seq_len/x.sh"
        ));
        assert!(!touches_recipes(&cfg, "docs/README.md"));
        assert!(!touches_recipes(&cfg, "configs/runners.yaml"));
    }
}
