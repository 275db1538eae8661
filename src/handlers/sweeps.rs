//! Sweep runs: the result links when a run completes, pinning and staging
//! a run (`/use`, `/reuse-sweep-run`, `/stage-results`), and the results
//! repository's staging callbacks.
use super::{Scope, Services, publish, read_at, repo_config};
use crate::comments::{Reply, Results, RunRefused, Staging, render, results_marker};
use crate::events::{Event, Handler, HandlerError, JobContext};
use crate::github::{Api, GitHubSource};
use crate::store::{Store, now_ms};
use async_trait::async_trait;
use serde_json::json;
use std::collections::HashSet;
use sweepgate_core::config::RepoConfig;
use sweepgate_core::ids::{CommentId, PrNumber, RepoName, RunId};
use sweepgate_core::recipe::{changelog, master};
use sweepgate_core::sweep::curves;
use sweepgate_core::sweep::gate::{self, GateOutcome};
use sweepgate_core::sweep::results::{Canary, summarize};
use sweepgate_core::sweep::runs::{self, Purpose, RunFacts, labels_at};
use sweepgate_core::sweep::staging::{Progress, StageRequest, parse_callback};

const NS_PIN: &str = "pin";
const NS_STAGED: &str = "staging-sent";
const NS_REPLY: &str = "staging-reply";
const NS_FORK_BOUND: &str = "fork-sweep-bound";

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
    fn name(&self) -> &'static str {
        "run-results"
    }

    fn accepts(&self, kind: &str) -> bool {
        matches!(kind, "workflow_run.completed" | "workflow_run.in_progress")
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
        let swept_pr = super::dispatch::on_run(
            &ctx.store,
            &repo,
            run.id,
            run.status.as_deref().unwrap_or(""),
            run.conclusion.as_deref(),
        )
        .await?;
        let swept_pr = match swept_pr {
            super::dispatch::SweptRun::Cancelled => return Ok(()),
            super::dispatch::SweptRun::Of(pr) => Some(pr),
            super::dispatch::SweptRun::NotDispatched => None,
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
        publish::post_once(&api, &repo, pr, &results_marker(run.id.0), &body).await?;
        super::record_activity(
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
            api.completed_sweep_runs(repo, &cfg.sweep.workflow, &pull.head.name, &swept)
                .await?
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
    let pin_key = format!("{repo}#{pr}");
    if stage.pin {
        let newer = match store.kv_get(NS_PIN, &pin_key).await? {
            Some(old) => serde_json::from_str::<serde_json::Value>(&old)
                .ok()
                .and_then(|v| v["comment"].as_u64())
                .is_none_or(|c| c <= stage.command_comment.0),
            None => true,
        };
        if newer {
            let value = serde_json::json!({
                "run": stage.run.id.0,
                "by": stage.user,
                "comment": stage.command_comment.0,
            });
            store
                .kv_put(NS_PIN, &pin_key, &value.to_string(), now_ms())
                .await?;
        }
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
    let key = request.idempotency_key();
    if store.kv_get(NS_STAGED, &key).await?.is_some() {
        return Ok(());
    }
    // Remember what the callback will need to edit this reply.
    let reply_facts = serde_json::json!({
        "command_comment": stage.command_comment.0,
        "run": stage.run.id.0,
    });
    store
        .kv_put(
            NS_REPLY,
            &reply.0.to_string(),
            &reply_facts.to_string(),
            now_ms(),
        )
        .await?;
    let results_repo = RepoName(cfg.sweep.results_repository.clone());
    services
        .api_for_repo(&results_repo)
        .await?
        .repository_dispatch(
            &results_repo,
            &request.dispatch_body(&cfg.sweep.staging_event),
        )
        .await?;
    store.kv_put(NS_STAGED, &key, "sent", now_ms()).await?;
    Ok(())
}

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
    fn name(&self) -> &'static str {
        "staging-callback"
    }

    fn accepts(&self, kind: &str) -> bool {
        kind == "repository_dispatch"
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
        let reply_facts = match callback.reply {
            Some(id) => ctx
                .store
                .kv_get(NS_REPLY, &id.0.to_string())
                .await?
                .and_then(|v| serde_json::from_str::<serde_json::Value>(&v).ok()),
            None => None,
        };
        let command_comment = reply_facts
            .as_ref()
            .and_then(|v| v["command_comment"].as_u64());
        match (callback.reply, command_comment) {
            (Some(reply), Some(cmd)) => {
                let body = render(&Reply {
                    comment_id: cmd,
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
                publish::post_once(&api, &repo, callback.pr, &marker, &body).await?;
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
    Ok(curves::bullets(&report.appended, &master, date))
}

/// The sweep gate on every push and label change (`docs/contracts.md` §2, §5):
/// in `track` mode a check run and one comment, edited in place.
pub(crate) struct SweepGate {
    services: Services,
}

impl SweepGate {
    pub(crate) fn new(services: Services) -> Self {
        Self { services }
    }
}

pub(crate) const GATE_CHECK: &str = "sweepgate / sweep-gate";

#[async_trait]
impl Handler for SweepGate {
    fn name(&self) -> &'static str {
        "sweep-gate"
    }

    fn accepts(&self, kind: &str) -> bool {
        matches!(
            kind,
            "pull_request.opened"
                | "pull_request.reopened"
                | "pull_request.synchronize"
                | "pull_request.labeled"
                | "pull_request.unlabeled"
                | "pull_request.ready_for_review"
        )
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        let Event::PullRequest(ev) = event else {
            return Ok(());
        };
        let scope = self.services.scope(ctx).await?;
        let Scope { repo, api, cfg, .. } = &scope;
        // A label that is neither primary nor modifier changes nothing.
        if let Some(label) = &ev.label
            && !cfg.labels.primary.contains(&label.name)
            && !cfg.labels.modifiers.contains(&label.name)
        {
            return Ok(());
        }
        let pr = &ev.pull_request;
        let (Some(head), Some(base)) = (pr.head.as_ref(), pr.base.as_ref()) else {
            return Ok(());
        };
        // The labels as they are now, not as the (possibly stale) payload says.
        let pull = api.pull(repo, pr.number).await?;
        if pull.head.sha != head.sha {
            // A newer push is on its way with its own delivery.
            return Ok(());
        }
        let labels: Vec<String> = pull.labels.iter().map(|l| l.name.clone()).collect();
        let files = api.pr_files(repo, pr.number).await?;
        let touches = files.iter().any(|f| f.filename == cfg.paths.changelog);
        // The head's master configs, parsed once for the gate and (in
        // dispatch mode) the job list.
        let (report, master) = if touches {
            let src = GitHubSource::new(api.clone(), repo.clone())?;
            let state = RecipeState::read(&src, cfg, &base.sha, &head.sha).await?;
            let (before, after) = (state.changelog_before, state.changelog_after);
            let master = state.master;
            let keys: Vec<&str> = master
                .as_ref()
                .map(|m| m.keys().collect())
                .unwrap_or_default();
            let has = |l: &str| labels.iter().any(|x| x == l);
            let opts = changelog::GateOptions {
                all_evals_label: has("all-evals"),
                evals_only_label: has("evals-only"),
                master_keys: master.as_ref().ok().map(|_| keys.as_slice()),
            };
            let report = changelog::pr_gate(&cfg.paths.changelog, &before, &after, &opts);
            (Some(report), Some(master))
        } else {
            (None, None)
        };
        let message = api.commit_message(repo, &head.sha).await?;
        let fork = pr.is_fork();
        let labeler = if fork {
            let primary = labels.iter().find(|l| cfg.labels.primary.contains(l));
            let events = api.label_events(repo, pr.number).await?;
            let who = primary.and_then(|p| {
                events
                    .iter()
                    .filter(|e| e.added && &e.label == p)
                    .max_by_key(|e| e.at)
                    .and_then(|e| e.actor.clone())
            });
            match who {
                Some(who) => {
                    let perm = api.collaborator_permission(repo, &who).await?;
                    let role = perm.map_or(sweepgate_core::commands::RepoRole::None, |p| {
                        sweepgate_core::commands::RepoRole::from_api(
                            &p.permission,
                            p.role_name.as_deref(),
                        )
                    });
                    Some((who, role))
                }
                None => None,
            }
        } else {
            None
        };
        let fork_bound = if fork {
            fork_binding(ctx, ev, cfg, repo, pr.number, &head.sha, labeler.as_ref()).await?
        } else {
            None
        };
        let outcome = gate::decide(&gate::GateInput {
            cfg,
            labels: &labels,
            draft: pr.draft,
            fork,
            head_message: &message,
            changelog: report.as_ref(),
            labeler: labeler.as_ref().map(|(w, r)| (w.as_str(), *r)),
            head_sha: &head.sha,
            fork_bound: fork_bound.as_deref(),
        });
        let dispatch_note = if cfg.sweep.mode == sweepgate_core::config::SweepMode::Dispatch {
            let (allowed, refused) = match &outcome {
                GateOutcome::Allowed { primary, modifiers } => (
                    Some((primary.as_str(), modifiers.as_slice())),
                    String::new(),
                ),
                GateOutcome::Refused(r) => {
                    (None, format!("the sweep gate refused: {}", r.join("; ")))
                }
                GateOutcome::Skipped(why) => (None, why.clone()),
                GateOutcome::NotASweep => (None, "no sweep label or changelog entry".to_owned()),
            };
            let appended = report
                .as_ref()
                .map(|r| r.appended.as_slice())
                .unwrap_or(&[]);

            super::dispatch::on_gate(
                &self.services,
                &ctx.store,
                &scope,
                &super::dispatch::Decision {
                    pr: pr.number,
                    head_sha: &head.sha,
                    base_sha: &base.sha,
                    allowed,
                    refused: &refused,
                    appended,
                    master: master.as_ref(),
                    installation_id: ctx.envelope.installation_id,
                },
            )
            .await?
        } else {
            String::new()
        };
        let short = &head.sha[..head.sha.len().min(12)];
        let author = pr.user.as_ref().map_or("", |u| u.login.as_str());
        let track = cfg.sweep.mode == sweepgate_core::config::SweepMode::Track;
        let (conclusion, title, summary, reasons) = match &outcome {
            GateOutcome::NotASweep => return Ok(()),
            GateOutcome::Skipped(why) => (
                "neutral",
                "No sweep for this commit".to_owned(),
                why.clone(),
                Vec::new(),
            ),
            GateOutcome::Allowed { primary, modifiers } => {
                let mods = if modifiers.is_empty() {
                    String::new()
                } else {
                    format!(
                        " with {}",
                        modifiers
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                (
                    "success",
                    "Sweep may run".to_owned(),
                    format!("`{primary}`{mods}"),
                    Vec::new(),
                )
            }
            GateOutcome::Refused(r) => (
                "failure",
                format!(
                    "No sweep: {} problem{}",
                    r.len(),
                    if r.len() == 1 { "" } else { "s" }
                ),
                r.join("\n"),
                r.clone(),
            ),
        };
        let summary = if dispatch_note.is_empty() {
            summary
        } else {
            format!("{summary}\n\n{dispatch_note}")
        };
        let body = render(&crate::comments::SweepGate {
            author,
            sha: short,
            reasons: &reasons,
            summary: &summary,
            track,
        });
        let existing =
            publish::find_marked(api, repo, pr.number, crate::comments::SWEEP_GATE_MARKER).await?;
        if !reasons.is_empty() || existing.is_some() {
            publish::upsert(
                api,
                repo,
                pr.number,
                crate::comments::SWEEP_GATE_MARKER,
                &body,
            )
            .await?;
        }
        api.completed_check_run(repo, GATE_CHECK, &head.sha, conclusion, &title, &summary)
            .await?;
        super::record_activity(
            &ctx.store,
            repo,
            pr.number,
            Some(&head.sha),
            "sweep",
            &format!("sweep gate: {title}"),
            &json!({ "conclusion": conclusion, "labels": labels, "summary": summary }),
        )
        .await?;
        Ok(())
    }
}

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

/// The commit a fork PR's sweep is bound to: a primary label applied by a
/// user with write access binds the head it was applied on (stored, so a
/// later push cannot inherit it; `docs/contracts.md` §3).
async fn fork_binding(
    ctx: &JobContext,
    ev: &crate::events::payload::PullRequestEvent,
    cfg: &RepoConfig,
    repo: &RepoName,
    pr: PrNumber,
    head: &str,
    labeler: Option<&(String, sweepgate_core::commands::RepoRole)>,
) -> Result<Option<String>, HandlerError> {
    let key = format!("{repo}#{pr}");
    let applied_now = ev.action == "labeled"
        && ev
            .label
            .as_ref()
            .is_some_and(|l| cfg.labels.primary.contains(&l.name));
    if applied_now
        && let Some((_, role)) = labeler
        && *role >= sweepgate_core::commands::RepoRole::Write
    {
        ctx.store
            .kv_put(NS_FORK_BOUND, &key, head, now_ms())
            .await?;
        return Ok(Some(head.to_owned()));
    }
    Ok(ctx.store.kv_get(NS_FORK_BOUND, &key).await?)
}
