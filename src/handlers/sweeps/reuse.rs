//! The run commands (`/use`, `/reuse-sweep-run`, `/stage-results`):
//! checking the run, pinning it and sending the staging request.
use crate::comments::{RunRefused, Staging, render};
use crate::events::HandlerError;
use crate::github::{Api, GitHubError};
use crate::handlers::{Services, repo_config};
use crate::store::{Pin, StagingKey, StagingReply, Store, SweepRow, SweepState, now_ms};
use std::collections::HashSet;
use sweepgate_core::ids::{CommentId, PrNumber, RepoName, RunId};
use sweepgate_core::sweep::runs::{self, Purpose, RunFacts, labels_at};
use sweepgate_core::sweep::staging::StageRequest;

/// A run command that passed authorization.
pub(crate) struct RunCommand<'a> {
    pub user: &'a str,
    pub run: Option<RunId>,
    pub purpose: Purpose,
    pub command_comment: CommentId,
}

/// What the commands handler does after posting its reply.
pub(crate) struct PendingStage {
    pub run: RunFacts,
    pub user: String,
    pub pin: bool,
    pub command_comment: CommentId,
}

/// Validates the run for a command; the answer line and, when valid, the
/// staging to send once the reply exists.
pub(crate) async fn prepare(
    api: &Api,
    store: &Store,
    repo: &RepoName,
    pr: PrNumber,
    default_branch: &str,
    cmd: &RunCommand<'_>,
) -> Result<(String, Option<PendingStage>), HandlerError> {
    let cfg = repo_config::load(api, store, repo, default_branch)
        .await?
        .config;
    let pull = api.pull(repo, pr).await?;
    let commits: HashSet<String> = api.pr_commit_shas(repo, pr).await?.into_iter().collect();
    let timeline = api.label_events(repo, pr).await?;
    // A run sweepgate dispatched ran on the default branch; the commit it
    // tested is its sweep's head.
    let swept = store.pr_sweeps(&repo.0, pr.0 as i64).await?;
    let candidates: Vec<RunFacts> = match cmd.run {
        Some(id) => match api.workflow_run(repo, id).await? {
            Some(mut r) => {
                runs::tested_head(
                    &mut r,
                    swept.iter().map(|s| (s.run_id, s.head_sha.as_str())),
                );
                vec![r]
            }
            None => {
                return Ok((
                    render(&RunRefused {
                        user: cmd.user,
                        run: Some(id.0),
                        checked: 0,
                        reason: "no such workflow run in this repository",
                    }),
                    None,
                ));
            }
        },
        None => {
            completed_sweep_runs(api, repo, &cfg.sweep.workflow, &pull.head.name, &swept).await?
        }
    };
    let mut first_reason = None;
    for run in &candidates {
        let artifacts = api.run_artifacts(repo, run.id).await?;
        let labels = labels_at(&timeline, run.created_at);
        let verdict = runs::check(
            run,
            &runs::Context {
                cfg: &cfg,
                pr_number: pr.0,
                pr_commits: &commits,
                labels_at_start: &labels,
                artifacts: &artifacts,
            },
            cmd.purpose,
        );
        match verdict {
            Ok(()) => {
                let answer = render(&Staging {
                    state: "requested",
                    user: cmd.user,
                    run: run.id.0,
                    curves: &[],
                    link: None,
                });
                let pin = matches!(cmd.purpose, Purpose::PinExplicit | Purpose::PinNewest);
                return Ok((
                    answer,
                    Some(PendingStage {
                        run: run.clone(),
                        user: cmd.user.to_owned(),
                        pin,
                        command_comment: cmd.command_comment,
                    }),
                ));
            }
            Err(why) => {
                if first_reason.is_none() {
                    first_reason = Some(format!("run {}: {why}", run.id));
                }
                if cmd.run.is_some() {
                    return Ok((
                        render(&RunRefused {
                            user: cmd.user,
                            run: Some(run.id.0),
                            checked: 1,
                            reason: &why.to_string(),
                        }),
                        None,
                    ));
                }
            }
        }
    }
    Ok((
        render(&RunRefused {
            user: cmd.user,
            run: None,
            checked: candidates.len(),
            reason: first_reason.as_deref().unwrap_or(""),
        }),
        None,
    ))
}

/// The pull request a command was typed on.
pub(crate) struct PrAt<'a> {
    pub repo: &'a RepoName,
    pub pr: PrNumber,
    pub default_branch: &'a str,
}

/// Pins (newest command wins) and sends the staging request, once per
/// idempotency key.
pub(crate) async fn dispatch(
    services: &Services,
    api: &Api,
    store: &Store,
    at: &PrAt<'_>,
    reply: CommentId,
    stage: &PendingStage,
) -> Result<(), HandlerError> {
    let cfg = repo_config::load(api, store, at.repo, at.default_branch)
        .await?
        .config;
    let (repo, pr) = (at.repo, at.pr);
    if stage.pin {
        // A later command's pin wins, whatever order the jobs ran in.
        let pin = Pin {
            run: stage.run.id,
            by: stage.user.clone(),
            command_comment: Some(stage.command_comment),
        };
        store.put_pin(repo, pr, &pin, now_ms()).await?;
    }
    let request = StageRequest {
        source_repository: repo.0.clone(),
        pr,
        run: stage.run.id,
        attempt: stage.run.run_attempt,
        run_date: stage.run.created_at.format("%Y-%m-%d").to_string(),
        requested_by: stage.user.clone(),
        reply,
    };
    let key = StagingKey {
        run: request.run,
        attempt: request.attempt,
        reply,
    };
    if store.staging_sent(&key).await? {
        return Ok(());
    }
    // Remember what the callback will need to edit this reply.
    let facts = StagingReply {
        command_comment: Some(stage.command_comment),
        run: stage.run.id,
    };
    store.put_staging_reply(reply, &facts, now_ms()).await?;
    let results_repo = RepoName(cfg.sweep.results_repository.clone());
    // A repository in shadow mode stages nothing either.
    let staging = services.staging_api(&results_repo).await?;
    services
        .in_mode(staging, &cfg)?
        .repository_dispatch(
            &results_repo,
            &request.dispatch_body(&cfg.sweep.staging_event),
        )
        .await?;
    store.mark_staging_sent(&key, now_ms()).await?;
    Ok(())
}

/// The runs a PR's sweep may be picked from: completed runs of `workflow`
/// on `branch`, and the runs of the PR's completed dispatched sweeps (which
/// ran on the default branch), each with the commit it tested; newest first.
pub(crate) async fn completed_sweep_runs(
    api: &Api,
    repo: &RepoName,
    workflow: &str,
    branch: &str,
    swept: &[SweepRow],
) -> Result<Vec<RunFacts>, GitHubError> {
    let mut runs = api.completed_runs(repo, workflow, branch).await?;
    for s in swept.iter().filter(|s| s.state == SweepState::Completed) {
        let Some(id) = s.run_id else { continue };
        if !runs.iter().any(|r| r.id.0 as i64 == id)
            && let Some(r) = api.workflow_run(repo, RunId(id as u64)).await?
        {
            runs.push(r);
        }
    }
    for r in runs.iter_mut() {
        runs::tested_head(r, swept.iter().map(|s| (s.run_id, s.head_sha.as_str())));
    }
    runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    Ok(runs)
}
