//! The sweep gate on every push and label change: the decision, a fork
//! PR's bound commit, the check run, the comment and the `dispatch` hand-off.
use super::RecipeState;
use crate::comments::render;
use crate::events::{Event, Handler, HandlerError, JobContext};
use crate::github::GitHubSource;
use crate::handlers::{Scope, Services, publish};
use crate::store::now_ms;
use async_trait::async_trait;
use serde_json::json;
use sweepgate_core::config::RepoConfig;
use sweepgate_core::ids::{PrNumber, RepoName};
use sweepgate_core::recipe::changelog;
use sweepgate_core::sweep::gate::{self, GateOutcome};

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
    fn id(&self) -> crate::events::HandlerId {
        crate::events::HandlerId::SweepGate
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
                all_evals_label: has(&cfg.labels.roles.all_evals),
                evals_only_label: has(&cfg.labels.roles.evals_only),
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

            crate::handlers::dispatch::on_gate(
                &self.services,
                &ctx.store,
                &scope,
                &crate::handlers::dispatch::Decision {
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
        // GitHub refuses (422) a summary over its limit: a changelog replaced
        // wholesale gives one reason per removed line. The comment is cut by
        // `publish::upsert`.
        let fitted = crate::comments::fit(&summary, crate::comments::SUMMARY_LIMIT, None);
        api.completed_check_run(repo, GATE_CHECK, &head.sha, conclusion, &title, &fitted)
            .await?;
        crate::handlers::record_activity(
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
    let applied_now = ev.action == "labeled"
        && ev
            .label
            .as_ref()
            .is_some_and(|l| cfg.labels.primary.contains(&l.name));
    if applied_now
        && let Some((_, role)) = labeler
        && *role >= sweepgate_core::commands::RepoRole::Write
    {
        ctx.store.bind_fork(repo, pr, head, now_ms()).await?;
        return Ok(Some(head.to_owned()));
    }
    Ok(ctx.store.fork_binding(repo, pr).await?)
}
