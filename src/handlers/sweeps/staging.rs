//! The results repository's staging callbacks: the command's reply (or one
//! comment per run and state) says how staging went, with the run's curves.
use super::RecipeState;
use crate::comments::{Reply, Staging, render};
use crate::events::{Event, Handler, HandlerError, JobContext};
use crate::github::{Api, GitHubSource};
use crate::handlers::{Scope, Services, publish};
use async_trait::async_trait;
use sweepgate_core::config::RepoConfig;
use sweepgate_core::ids::{PrNumber, RepoName, RunId};
use sweepgate_core::recipe::changelog;
use sweepgate_core::sweep::curves;
use sweepgate_core::sweep::staging::{Progress, parse_callback};

/// The results repository's `stage-results-started` / `-completed`.
pub(crate) struct StagingCallback {
    services: Services,
}

impl StagingCallback {
    pub(crate) fn new(services: Services) -> Self {
        Self { services }
    }
}

#[async_trait]
impl Handler for StagingCallback {
    fn id(&self) -> crate::events::HandlerId {
        crate::events::HandlerId::StagingCallback
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        let Event::RepositoryDispatch(ev) = event else {
            return Ok(());
        };
        let Scope {
            repo,
            api,
            cfg,
            default_branch: _,
        } = self.services.scope(ctx).await?;
        let callback = match parse_callback(
            &ev.action,
            &ev.client_payload,
            &cfg.sweep.results_repository,
        ) {
            Ok(Some(c)) => c,
            Ok(None) => return Ok(()),
            // A forged or broken callback changes nothing; say why in the job.
            Err(e) => return Err(HandlerError::Permanent(e.to_string())),
        };
        // Who sent it is what GitHub says (`sender`), never a payload
        // field: sweepgate itself or a configured staging sender.
        let sender = ev.sender.as_ref().map_or("", |u| u.login.as_str());
        let me = api.own_login().await?;
        let known = sender.eq_ignore_ascii_case(&me)
            || cfg
                .sweep
                .staging_senders
                .iter()
                .any(|s| s.eq_ignore_ascii_case(sender));
        if sender.is_empty() || !known {
            return Err(HandlerError::Permanent(format!(
                "staging callback refused: sender `{sender}` is not sweepgate nor one of sweep.staging-senders"
            )));
        }
        // And only for a staging sweepgate asked for and still expects.
        let reply_facts = match callback.reply {
            Some(id) => ctx.store.staging_reply(id).await?,
            None => None,
        };
        if reply_facts.map(|f| f.run) != Some(callback.run) {
            return Err(HandlerError::Permanent(format!(
                "staging callback refused: no staging of run {} is pending for reply {}",
                callback.run,
                callback
                    .reply
                    .map_or_else(|| "(none)".to_owned(), |r| r.0.to_string())
            )));
        }
        let (state, curves) = match callback.progress {
            Progress::Started => ("started", Vec::new()),
            Progress::Completed { succeeded: false } => ("failed", Vec::new()),
            Progress::Completed { succeeded: true } => {
                let curves = run_curves(
                    &api,
                    &repo,
                    callback.pr,
                    callback.run,
                    &cfg,
                    &callback.run_date,
                )
                .await?;
                ("staged", curves)
            }
        };
        let text = render(&Staging {
            state,
            user: &callback.requested_by,
            run: callback.run.0,
            curves: &curves,
            link: callback.app_run_url.as_deref(),
        });
        let command_comment = reply_facts.and_then(|f| f.command_comment);
        match (callback.reply, command_comment) {
            (Some(reply), Some(cmd)) => {
                let body = render(&Reply {
                    comment_id: cmd.0,
                    answers: &[text],
                });
                api.update_comment(&repo, reply, &body).await?;
            }
            // No reply of ours to edit: one comment per run and state.
            _ => {
                let marker = format!(
                    "<!-- sweepgate:staging run={} state={state} -->",
                    callback.run
                );
                let body = format!("{marker}\n{text}\n");
                publish::post_once(&api, &repo, callback.pr, &marker, &body, &[]).await?;
            }
        }
        Ok(())
    }
}

/// The curves of the run: the changelog entries the PR appends, as of the
/// run's commit, against the master configs there.
async fn run_curves(
    api: &Api,
    repo: &RepoName,
    pr: PrNumber,
    run: RunId,
    cfg: &RepoConfig,
    date: &str,
) -> Result<Vec<String>, HandlerError> {
    let Some(facts) = api.workflow_run(repo, run).await? else {
        return Ok(Vec::new());
    };
    let pull = api.pull(repo, pr).await?;
    let src = GitHubSource::new(api.clone(), repo.clone())?;
    let state = RecipeState::read(&src, cfg, &pull.base.sha, &facts.head_sha).await?;
    let (base, head) = (state.changelog_before, state.changelog_after);
    let report = changelog::pr_gate(&cfg.paths.changelog, &base, &head, &Default::default());
    let master = state
        .master
        .map_err(|e| HandlerError::Permanent(e.to_string()))?;
    // Names come from the PR's files: quoted, they mention nobody.
    Ok(curves::bullets(&report.appended, &master, date)
        .iter()
        .map(|b| crate::comments::quote(b))
        .collect())
}
