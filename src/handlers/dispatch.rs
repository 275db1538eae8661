//! `dispatch` mode (`docs/contracts.md` §5): sweepgate starts the sweep of a
//! head the gate allowed, serves its job matrix, cancels a superseded
//! sweep, and follows the run. A timer re-reads open sweeps so a lost
//! `workflow_run` webhook never leaves one pending.
use super::{Scope, Services, read_at, record_activity};
use crate::events::{Event, Handler, HandlerError, JobContext};
use crate::github::GitHubSource;
use crate::store::{
    DeliveryBody, DeliveryOutcome, NewDelivery, NewJob, Store, SweepJob, SweepRow, SweepState,
    SweepUpdate, now_ms,
};
use serde_json::json;
use sweepgate_core::checks::c01_sweep::run_id_of;
use sweepgate_core::ids::{PrNumber, RepoName, RunId};
use sweepgate_core::matrix::{self, jobs};
use sweepgate_core::recipe::{changelog::Entry, master, runners};
use sweepgate_core::sweep::dispatch as pure;

/// How long a sweep's matrix URL stays valid.
const TOKEN_LIFETIME_MS: i64 = 7 * 24 * 3600 * 1000;

/// What the gate decided for the head, as dispatch needs it.
pub(crate) struct Decision<'a> {
    pub pr: PrNumber,
    pub head_sha: &'a str,
    pub base_sha: &'a str,
    /// `Some((primary, modifiers))` when a sweep may run.
    pub allowed: Option<(&'a str, &'a [String])>,
    /// Why no sweep may run (for the cancellation record).
    pub refused: &'a str,
    pub appended: &'a [Entry],
    /// The head's master configs as the gate parsed them (`None` when the
    /// PR does not touch the changelog, so nothing is appended).
    pub master: Option<&'a Result<master::MasterConfig, sweepgate_core::recipe::ParseError>>,
    pub installation_id: Option<u64>,
}

/// Acts on the gate's decision in `dispatch` mode; the line the gate's
/// check run adds about it.
pub(crate) async fn on_gate(
    services: &Services,
    store: &Store,
    scope: &Scope,
    d: &Decision<'_>,
) -> Result<String, HandlerError> {
    let Scope {
        repo,
        api,
        cfg,
        default_branch,
    } = scope;
    let open: Vec<SweepRow> = store
        .pr_sweeps(&repo.0, d.pr.0 as i64)
        .await?
        .into_iter()
        .filter(SweepRow::is_open)
        .collect();
    let Some((primary, modifiers)) = d.allowed else {
        cancel_all(scope, store, d.pr, &open, "", d.refused).await?;
        return Ok(String::new());
    };
    // The safety rule: a workflow that also runs on `pull_request` would
    // run every sweep twice.
    let src = GitHubSource::new(api.clone(), repo.clone())?;
    let wf_path = format!(".github/workflows/{}", cfg.sweep.workflow);
    let wf = read_at(&src, default_branch, &wf_path).await?;
    let unsafe_reason = match &wf {
        None => Some(format!("{wf_path} does not exist on {default_branch}")),
        Some(bytes) => pure::unsafe_trigger(&String::from_utf8_lossy(bytes)),
    };
    if let Some(why) = unsafe_reason {
        return Ok(format!("Dispatch mode is off: {why}."));
    }
    let Some(base_url) = services.public_url.as_deref() else {
        return Ok(
            "Dispatch mode is off: sweepgate has no public URL (--public-url) to serve the matrix from."
                .into(),
        );
    };
    let id = pure::sweep_id(&repo.0, d.pr.0, d.head_sha, primary, modifiers);
    let superseded: Vec<SweepRow> = open.into_iter().filter(|s| s.sweep_id != id).collect();
    cancel_all(
        scope,
        store,
        d.pr,
        &superseded,
        &id,
        "superseded by a new push or label change",
    )
    .await?;
    let mut resume = false;
    if let Some(existing) = store.sweep(&id).await? {
        // Stored but perhaps never sent: a crash came between storing and
        // dispatching. Such a sweep is finished below, its run looked up by
        // title first so it never starts twice.
        resume = existing.state == SweepState::Dispatched
            && existing.run_id.is_none()
            && existing.dispatch_sent_at.is_none();
        if resume {
            tracing::info!(sweep = %id, "resuming a sweep stored but not known to be dispatched");
        } else {
            // Redelivered, or a replica already started it.
            return Ok(format!(
                "Sweep `{id}` was dispatched{}.",
                existing
                    .run_id
                    .map(|r| format!(" as run {r}"))
                    .unwrap_or_default()
            ));
        }
    }
    let job_list = match job_list(&src, scope, d, primary, modifiers).await? {
        Ok(j) => j,
        Err(why) => return Ok(format!("No sweep dispatched: {why}.")),
    };
    let total = job_list.throughput_len() + job_list.eval_len();
    if total == 0 {
        return Ok("No sweep dispatched: the appended changelog entries produce no jobs.".into());
    }
    let (token, digest) = pure::new_token(rand::random());
    let doc = pure::matrix_document(&id, &job_list, cfg.sweep.chunk_size);
    let now = now_ms();
    let row = SweepRow {
        sweep_id: id.clone(),
        repository: repo.0.clone(),
        installation_id: d.installation_id.map(|i| i as i64),
        pr_number: d.pr.0 as i64,
        head_sha: d.head_sha.to_owned(),
        base_sha: d.base_sha.to_owned(),
        primary_label: primary.to_owned(),
        modifiers: modifiers.join(","),
        matrix: doc.to_string(),
        token_sha256: digest.clone(),
        expires_at: now + TOKEN_LIFETIME_MS,
        state: SweepState::Dispatched,
        run_id: None,
        conclusion: None,
        reason: None,
        created_at: now,
        updated_at: now,
        dispatch_sent_at: None,
    };
    if resume {
        // Only the first attempt's token digest was kept: serve a new token.
        let change = SweepUpdate {
            token_sha256: Some(&digest),
            ..SweepUpdate::default()
        };
        store.update_sweep(&id, &change, now).await?;
    } else if !store.create_sweep(&row).await? {
        return Ok(format!("Sweep `{id}` was dispatched."));
    }
    // A restart between storing and dispatching must not start it twice.
    let run = match api
        .dispatched_run_titled(repo, &cfg.sweep.workflow, &id)
        .await?
    {
        Some(run) => Some(run),
        None => {
            let matrix_url = format!("{base_url}/api/sweeps/{id}/matrix?token={token}");
            let inputs = pure::inputs(&pure::DispatchInputs {
                sweep_id: &id,
                matrix_url: &matrix_url,
                pr: d.pr.0,
                head_sha: d.head_sha,
                base_sha: d.base_sha,
                primary,
                modifiers,
                roles: &cfg.labels.roles,
            });
            // The workflow definition comes from the default branch, never
            // from the PR; the PR's commit is an input.
            match api
                .workflow_dispatch(repo, &cfg.sweep.workflow, default_branch, &inputs)
                .await?
            {
                Some(run) => Some(run),
                None => {
                    api.dispatched_run_titled(repo, &cfg.sweep.workflow, &id)
                        .await?
                }
            }
        }
    };
    store.mark_dispatch_sent(&id, now_ms()).await?;
    if let Some(run) = run {
        store
            .update_sweep(
                &id,
                &SweepUpdate {
                    run_id: Some(run.0 as i64),
                    ..SweepUpdate::default()
                },
                now_ms(),
            )
            .await?;
    }
    let run_txt = run.map(|r| format!(" as run {r}")).unwrap_or_default();
    record_activity(
        store,
        repo,
        d.pr,
        Some(d.head_sha),
        "sweep",
        &format!("dispatched sweep {id} ({total} jobs){run_txt}"),
        &json!({ "sweep": id, "run": run, "jobs": total, "primary": primary, "modifiers": modifiers }),
    )
    .await?;
    Ok(format!(
        "Sweep `{id}` dispatched{run_txt} with {total} jobs."
    ))
}

/// The job list of the appended entries under these labels, or why there
/// is none.
async fn job_list(
    src: &GitHubSource,
    scope: &Scope,
    d: &Decision<'_>,
    primary: &str,
    modifiers: &[String],
) -> Result<Result<jobs::JobList, String>, HandlerError> {
    let cfg = &scope.cfg;
    let master = match d.master {
        // Nothing appended: the job list is empty.
        None => return Ok(Ok(jobs::JobList::default())),
        Some(Err(e)) => return Ok(Err(e.to_string())),
        Some(Ok(m)) => m.clone(),
    };
    let Some(rb) = read_at(src, d.head_sha, &cfg.paths.runners).await? else {
        return Ok(Err(format!("{} is missing", cfg.paths.runners)));
    };
    let runners = match runners::parse(&cfg.paths.runners, &rb) {
        Ok(r) => r,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let inputs = matrix::Inputs { master, runners };
    let entries = pure::entry_flags(d.appended);
    Ok(jobs::jobs_for_entries(
        &inputs,
        &entries,
        pure::label_flags(&cfg.labels.roles, primary, modifiers),
    )
    .map_err(|e| e.to_string()))
}

/// Cancels open sweeps (their runs too) and records why.
async fn cancel_all(
    scope: &Scope,
    store: &Store,
    pr: PrNumber,
    sweeps: &[SweepRow],
    by: &str,
    why: &str,
) -> Result<(), HandlerError> {
    for s in sweeps {
        if let Some(run) = s.run_id {
            scope.api.cancel_run(&scope.repo, RunId(run as u64)).await?;
        }
        let reason = if by.is_empty() {
            why.to_owned()
        } else {
            format!("{why} ({by})")
        };
        store
            .update_sweep(
                &s.sweep_id,
                &SweepUpdate {
                    state: Some(SweepState::Cancelled),
                    reason: Some(&reason),
                    ..SweepUpdate::default()
                },
                now_ms(),
            )
            .await?;
        record_activity(
            store,
            &scope.repo,
            pr,
            Some(&s.head_sha),
            "sweep",
            &format!("cancelled sweep {}: {reason}", s.sweep_id),
            &json!({ "sweep": s.sweep_id, "run": s.run_id, "reason": reason }),
        )
        .await?;
    }
    Ok(())
}

/// What a `workflow_run` event means for a dispatched sweep.
pub(crate) enum SweptRun {
    /// Not a run sweepgate dispatched.
    NotDispatched,
    /// sweepgate cancelled it (superseded or refused): no result links.
    Cancelled,
    /// The PR whose sweep it runs: a dispatched run's head is the default
    /// branch, so only the sweep knows which PR it tests.
    Of(PrNumber),
}

/// A `workflow_run` event for a run sweepgate dispatched: the sweep's state.
pub(crate) async fn on_run(
    store: &Store,
    repo: &RepoName,
    run: RunId,
    status: &str,
    conclusion: Option<&str>,
) -> Result<SweptRun, HandlerError> {
    let Some(sweep) = store.sweep_by_run(&repo.0, run.0 as i64).await? else {
        return Ok(SweptRun::NotDispatched);
    };
    if sweep.state == SweepState::Cancelled {
        return Ok(SweptRun::Cancelled);
    }
    let pr = PrNumber(sweep.pr_number as u64);
    // Deliveries come out of order: a finished sweep never moves back to
    // running.
    let state = match (sweep.state, status) {
        (SweepState::Completed, _) => None,
        (_, "completed") => Some(SweepState::Completed),
        _ => Some(SweepState::Running),
    };
    let conclusion = conclusion.filter(|_| status == "completed");
    if state.is_some() || conclusion.is_some() {
        store
            .update_sweep(
                &sweep.sweep_id,
                &SweepUpdate {
                    state,
                    conclusion,
                    ..SweepUpdate::default()
                },
                now_ms(),
            )
            .await?;
    }
    Ok(SweptRun::Of(pr))
}

/// Follows the jobs of dispatched sweeps (`workflow_job` and `check_run`
/// events), so a sweep's progress is known before its run completes.
pub(crate) struct SweepJobs;

#[async_trait::async_trait]
impl Handler for SweepJobs {
    fn id(&self) -> crate::events::HandlerId {
        crate::events::HandlerId::SweepJobs
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        let Some(repo) = ctx.envelope.repository.as_ref() else {
            return Ok(());
        };
        // A job's check run carries the same name and points at its run.
        let (run, name, attempt, status, conclusion) = match event {
            Event::WorkflowJob(e) => {
                let j = &e.workflow_job;
                (
                    Some(j.run_id),
                    &j.name,
                    j.run_attempt,
                    j.status.as_deref(),
                    j.conclusion.as_deref(),
                )
            }
            Event::CheckRun(e) => {
                let c = &e.check_run;
                let run = c.details_url.as_deref().and_then(run_id_of).map(RunId);
                (
                    run,
                    &c.name,
                    None,
                    c.status.as_deref(),
                    c.conclusion.as_deref(),
                )
            }
            _ => return Ok(()),
        };
        let Some(run) = run else { return Ok(()) };
        let Some(sweep) = ctx.store.sweep_by_run(&repo.0, run.0 as i64).await? else {
            return Ok(());
        };
        let status = match (status, conclusion) {
            (_, Some(_)) => "completed",
            (Some(s @ ("queued" | "in_progress" | "completed")), None) => s,
            _ => "queued",
        };
        let attempt = match attempt {
            Some(a) => a as i64,
            // A check run names no attempt: it belongs to the newest known.
            None => ctx
                .store
                .sweep_jobs(&sweep.sweep_id)
                .await?
                .iter()
                .find(|j| &j.name == name)
                .map_or(1, |j| j.attempt),
        };
        ctx.store
            .record_sweep_job(&SweepJob {
                sweep_id: sweep.sweep_id.clone(),
                name: name.clone(),
                attempt,
                status: status.to_owned(),
                conclusion: conclusion.map(str::to_owned),
                updated_at: now_ms(),
            })
            .await?;
        // The first job to start means the run is under way.
        if sweep.state == SweepState::Dispatched {
            store_running(&ctx.store, &sweep.sweep_id).await?;
        }
        Ok(())
    }
}

async fn store_running(store: &Store, sweep_id: &str) -> Result<(), HandlerError> {
    store
        .update_sweep(
            sweep_id,
            &SweepUpdate {
                state: Some(SweepState::Running),
                ..SweepUpdate::default()
            },
            now_ms(),
        )
        .await?;
    Ok(())
}

/// One pass of the timer: every open sweep's run is read from the API; a
/// run that completed without its webhook arriving gets that delivery
/// rebuilt, stored and queued like any other (its id makes it once only).
/// The number of deliveries it rebuilt.
pub async fn refresh_open_sweeps(services: &Services, store: &Store) -> anyhow::Result<usize> {
    let mut rebuilt = 0;
    for s in store.open_sweeps().await? {
        let (Some(run), Some(inst)) = (s.run_id, s.installation_id) else {
            continue;
        };
        let repo = sweepgate_core::ids::RepoName(s.repository.clone());
        let api = services
            .github
            .installation(sweepgate_core::ids::InstallationId(inst as u64))?;
        let Some(run_json) = api.run_json(&repo, RunId(run as u64)).await? else {
            continue;
        };
        if run_json["status"] != "completed" {
            continue;
        }
        let attempt = run_json["run_attempt"].as_u64().unwrap_or(1);
        let body = json!({
            "action": "completed",
            "workflow_run": run_json,
            "repository": { "full_name": s.repository, "name": s.repository.split('/').nth(1).unwrap_or(""), "owner": { "login": s.repository.split('/').next().unwrap_or("") } },
            "installation": { "id": inst },
        });
        let now = now_ms();
        let delivery = NewDelivery {
            delivery_id: sweepgate_core::ids::DeliveryId(format!(
                "sweepgate-timer-{run}-{attempt}"
            )),
            event: "workflow_run".into(),
            action: Some("completed".into()),
            repository: Some(s.repository.clone()),
            installation_id: Some(inst),
            pr_number: Some(s.pr_number),
            body: DeliveryBody::compress(body.to_string().as_bytes()),
            received_at: now,
        };
        let job = NewJob {
            kind: "workflow_run.completed".into(),
            serial_key: Some(format!("{}#{}", s.repository, s.pr_number)),
            payload: crate::events::JobPayload::delivery("workflow_run", Some("completed"))
                .to_json(),
            max_attempts: crate::queue::QueueConfig::default().max_attempts,
            run_after: now,
        };
        if store
            .record_delivery(&delivery, &DeliveryOutcome::Queued, Some(&job))
            .await?
            == crate::store::Inserted::New
        {
            tracing::info!(sweep = %s.sweep_id, run, "rebuilt a lost workflow_run delivery");
            rebuilt += 1;
        }
    }
    Ok(rebuilt)
}

/// Runs `refresh_open_sweeps` every `period` until the process ends; the
/// workers find the rebuilt jobs on their next poll.
pub(crate) fn spawn_timer(
    services: Services,
    store: Store,
    period: std::time::Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.tick().await;
        loop {
            tick.tick().await;
            if let Err(e) = refresh_open_sweeps(&services, &store).await {
                tracing::warn!(error = %e, "re-reading open sweeps failed");
            }
        }
    })
}
