//! A completed sweep run: find its pull request and post the result links
//! once per run id.
use crate::comments::{Results, render, results_marker};
use crate::events::{Event, Handler, HandlerError, JobContext};
use crate::handlers::{Scope, Services, publish};
use async_trait::async_trait;
use serde_json::json;
use sweepgate_core::config::RepoConfig;
use sweepgate_core::sweep::results::{Canary, summarize};

/// Whether a run belongs to the repository's sweep workflow.
fn is_sweep_run(cfg: &RepoConfig, path: Option<&str>) -> bool {
    let expected = format!(".github/workflows/{}", cfg.sweep.workflow);
    path.is_some_and(|p| p.split('@').next() == Some(expected.as_str()))
}

/// Posts the result links once per run id.
pub(crate) struct RunResults {
    services: Services,
}

impl RunResults {
    pub(crate) fn new(services: Services) -> Self {
        Self { services }
    }
}

#[async_trait]
impl Handler for RunResults {
    fn id(&self) -> crate::events::HandlerId {
        crate::events::HandlerId::RunResults
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        let Event::WorkflowRun(ev) = event else {
            return Ok(());
        };
        let run = &ev.workflow_run;
        let Scope {
            repo,
            api,
            cfg,
            default_branch: _,
        } = self.services.scope(ctx).await?;
        if !is_sweep_run(&cfg, run.path.as_deref()) {
            return Ok(());
        }
        // A run sweepgate dispatched: its sweep follows it.
        let swept_pr = crate::handlers::dispatch::on_run(
            &ctx.store,
            &repo,
            run.id,
            run.status.as_deref().unwrap_or(""),
            run.conclusion.as_deref(),
        )
        .await?;
        let swept_pr = match swept_pr {
            crate::handlers::dispatch::SweptRun::Cancelled => return Ok(()),
            crate::handlers::dispatch::SweptRun::Of(pr) => Some(pr),
            crate::handlers::dispatch::SweptRun::NotDispatched => None,
        };
        if ev.action != "completed" {
            return Ok(());
        }
        // Fork PR runs carry no `pull_requests`, nor does a run on a commit
        // the PR has since moved past: find the PR by head, else by branch
        // and commit.
        let pr = match run.pull_requests.as_slice() {
            _ if swept_pr.is_some() => swept_pr,
            [one] => Some(one.number),
            _ => {
                let open = api.open_pulls(&repo).await?;
                let mut found = open
                    .iter()
                    .find(|p| p.head.sha == run.head_sha)
                    .map(|p| p.number);
                for p in open
                    .iter()
                    .filter(|p| run.head_branch.as_deref() == Some(p.head.name.as_str()))
                {
                    if found.is_some() {
                        break;
                    }
                    if api
                        .pr_commit_shas(&repo, p.number)
                        .await?
                        .contains(&run.head_sha)
                    {
                        found = Some(p.number);
                    }
                }
                found
            }
        };
        let Some(pr) = pr else {
            return Ok(());
        };
        let jobs = api.run_jobs(&repo, run.id).await?;
        let (families, canary) = summarize(&jobs);
        let canary = match canary {
            Canary::None => "none in this run",
            Canary::Passed => "passed",
            Canary::Failed => "failed",
            Canary::Cancelled => "cancelled",
        };
        let body = render(&Results {
            run: run.id.0,
            site: cfg.links.results_site.trim_end_matches('/'),
            run_url: run.html_url.as_deref().unwrap_or(""),
            conclusion: run.conclusion.as_deref().unwrap_or("unknown"),
            families: &families,
            canary,
        });
        publish::post_once(&api, &repo, pr, &results_marker(run.id.0), &body, &[]).await?;
        crate::handlers::record_activity(
            &ctx.store,
            &repo,
            pr,
            Some(&run.head_sha),
            "sweep",
            &format!(
                "run {} completed: {}",
                run.id,
                run.conclusion.as_deref().unwrap_or("unknown")
            ),
            &json!({ "run": run.id, "run_url": run.html_url, "families": families.len() }),
        )
        .await?;
        Ok(())
    }
}
