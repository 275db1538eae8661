//! The dashboard: server-rendered HTML (no scripts, no external assets)
//! showing what sweepgate did and why. Its pages need a login with the
//! admin token (`auth`), unless the server runs with `--dashboard-public`;
//! the one action, retrying a dead-lettered job, always needs the token.
//! The sweep matrix and signed plot links (`links`) need no login.
//!
//! It only reads the store: deliveries, jobs, and the activity handlers
//! record per PR (verdict rows with the Pareto curves, lint findings,
//! commands, sweeps).
pub(crate) mod api;
pub(crate) mod auth;
pub(crate) mod compare;
pub mod links;
pub mod svg;

use crate::config::server::Secret;
use crate::store::{ActivityRow, JobState, QueueCounts, Store, StoreError, SweepState, now_ms};
use askama::Template;
use auth::token_matches;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use sweepgate_core::checks::c14_pareto::Series;
use sweepgate_core::ids::JobId;
use tokio::sync::Notify;

/// What the dashboard needs.
#[derive(Clone)]
pub struct DashState {
    pub store: Store,
    /// Required by actions; `None` makes the dashboard read-only.
    pub admin_token: Option<Arc<Secret>>,
    /// Path prefix of the public base URL (`""` at the root), so links work
    /// behind a proxy that mounts sweepgate under a path.
    pub base: String,
    /// Woken when a retried job is back in the queue.
    pub wake: Arc<Notify>,
    /// Pages readable without a login (`--dashboard-public`).
    pub public: bool,
    /// Cookies only over https (the public URL is https).
    secure: bool,
    /// The key of signed links, read from the store once.
    link_key: Arc<tokio::sync::OnceCell<Vec<u8>>>,
    /// Shadow mode's intended writes ("would post"), when the server keeps them.
    pub shadow: Option<crate::store::shadow::ShadowLog>,
}

impl DashState {
    pub fn new(
        store: Store,
        admin_token: Option<Secret>,
        public_url: Option<&str>,
        wake: Arc<Notify>,
    ) -> Self {
        Self {
            store,
            admin_token: admin_token.map(Arc::new),
            base: base_path(public_url),
            wake,
            public: false,
            secure: public_url.is_some_and(|u| u.starts_with("https://")),
            link_key: Arc::default(),
            shadow: None,
        }
    }

    /// Shows shadow mode's intended writes on the PR pages.
    pub fn with_shadow(mut self, log: Option<crate::store::shadow::ShadowLog>) -> Self {
        self.shadow = log;
        self
    }

    /// Pages readable by anyone, read-only (`--dashboard-public`).
    pub fn public(mut self, public: bool) -> Self {
        self.public = public;
        self
    }

    async fn link_key(&self) -> Result<&[u8], StoreError> {
        self.link_key
            .get_or_try_init(|| links::link_key(&self.store))
            .await
            .map(Vec::as_slice)
    }
}

/// `https://x.example/sweepgate/` → `/sweepgate`; no URL → `""`.
pub(crate) fn base_path(public_url: Option<&str>) -> String {
    public_url
        .and_then(|u| url::Url::parse(u).ok())
        .map(|u| u.path().trim_end_matches('/').to_owned())
        .unwrap_or_default()
}

pub fn router(state: DashState) -> Router {
    let pages = Router::new()
        .route("/", get(overview))
        .route("/queue", get(queue))
        .route("/compare", get(compare::overview))
        .route("/repos/{owner}/{repo}/pulls/{number}", get(pr_page))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_login,
        ));
    Router::new()
        .merge(pages)
        .route("/login", get(auth::login_get).post(auth::login_post))
        // The action checks the admin token itself.
        .route("/queue/{id}/retry", post(retry))
        // A signed link, or a login (checked inside).
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/pareto.svg",
            get(pareto),
        )
        .route("/api/sweeps/{id}/matrix", get(api::matrix))
        .with_state(state)
}

/// Unix milliseconds as `2026-12-03 12:00:00Z`.
fn time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%SZ").to_string())
        .unwrap_or_else(|| ms.to_string())
}

fn page(t: &impl Template) -> Response {
    match t.render() {
        Ok(html) => Html(html).into_response(),
        Err(e) => failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("rendering: {e}"),
        ),
    }
}

fn failure(status: StatusCode, message: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{message}\n"),
    )
        .into_response()
}

fn unavailable(e: &StoreError) -> Response {
    failure(StatusCode::SERVICE_UNAVAILABLE, &e.to_string())
}

// ---------------------------------------------------------------- overview

struct InstallationLine {
    installation: String,
    repository: String,
    deliveries: i64,
    last: String,
}

struct PrLine {
    repository: String,
    number: i64,
    verdict: String,
    verdict_class: String,
    events: i64,
    last: String,
}

struct DeliveryLine {
    at: String,
    id: String,
    event: String,
    repository: String,
    pr: String,
    pr_link: String,
    outcome: String,
    outcome_class: String,
}

#[derive(Template)]
#[template(path = "dashboard/overview.html")]
struct Overview {
    base: String,
    counts: QueueCounts,
    installations: Vec<InstallationLine>,
    prs: Vec<PrLine>,
    deliveries: Vec<DeliveryLine>,
}

/// The newest verdict of a PR as a word and a CSS class.
fn latest_verdict(verdict: Option<&ActivityRow>) -> (String, String) {
    match verdict {
        Some(a) => {
            let word = a.summary.split(' ').next().unwrap_or("").to_owned();
            (format!("{} at {}", a.summary, short(&a.head_sha)), word)
        }
        None => ("none".into(), "na".into()),
    }
}

fn short(sha: &Option<String>) -> String {
    sha.as_deref()
        .map(|s| s[..s.len().min(12)].to_owned())
        .unwrap_or_default()
}

async fn overview(State(st): State<DashState>) -> Response {
    match overview_page(&st).await {
        Ok(p) => page(&p),
        Err(e) => unavailable(&e),
    }
}

async fn overview_page(st: &DashState) -> Result<Overview, StoreError> {
    let counts = st.store.queue_counts().await?;
    let installations = st
        .store
        .installations()
        .await?
        .into_iter()
        .map(|i| InstallationLine {
            installation: i.installation_id.map_or("—".into(), |i| i.to_string()),
            repository: i.repository.unwrap_or_else(|| "—".into()),
            deliveries: i.deliveries,
            last: time(i.last_at),
        })
        .collect();
    let mut prs = Vec::new();
    for p in st.store.recent_prs(50).await? {
        let last = st
            .store
            .last_activity(&p.repository, p.pr_number, "verdict")
            .await?;
        let (verdict, verdict_class) = latest_verdict(last.as_ref());
        prs.push(PrLine {
            repository: p.repository,
            number: p.pr_number,
            verdict,
            verdict_class,
            events: p.events,
            last: time(p.last_at),
        });
    }
    let mut deliveries = Vec::new();
    for d in st.store.recent_deliveries(50).await? {
        let (outcome, class) = delivery_outcome(&st.store, &d).await?;
        let repository = d.repository.clone().unwrap_or_default();
        let pr_link = match d.pr_number {
            Some(n) if !repository.is_empty() => {
                format!("{}/repos/{repository}/pulls/{n}", st.base)
            }
            _ => String::new(),
        };
        deliveries.push(DeliveryLine {
            at: time(d.received_at),
            id: d.delivery_id,
            event: match &d.action {
                Some(a) => format!("{}.{a}", d.event),
                None => d.event,
            },
            repository,
            pr: d.pr_number.map(|n| n.to_string()).unwrap_or_default(),
            pr_link,
            outcome,
            outcome_class: class,
        });
    }
    Ok(Overview {
        base: st.base.clone(),
        counts,
        installations,
        prs,
        deliveries,
    })
}

/// What became of a delivery: ignored (and why), or its job's state.
async fn delivery_outcome(
    store: &Store,
    d: &crate::store::DeliveryRow,
) -> Result<(String, String), StoreError> {
    if d.outcome == "ignored" {
        let why = d.reason.clone().unwrap_or_default();
        return Ok((format!("ignored: {why}"), "ignored".into()));
    }
    let id = sweepgate_core::ids::DeliveryId(d.delivery_id.clone());
    let jobs = store.jobs_for_delivery(&id).await?;
    Ok(match jobs.first() {
        Some(j) => {
            let text = match (&j.outcome, &j.last_error) {
                (Some(o), _) if j.state == "done" => format!("done: {o}"),
                (_, Some(e)) if j.state == "dead" => format!("dead: {e}"),
                _ => j.state.clone(),
            };
            (text, j.state.clone())
        }
        None => ("queued".into(), "queued".into()),
    })
}

// ----------------------------------------------------------------- PR page

struct RowLine {
    number: u8,
    name: String,
    outcome: String,
    class: String,
    reason: String,
}

struct VerdictView {
    sha: String,
    signer: String,
    outcome: String,
    run: String,
    at: String,
    comment_url: String,
    rows: Vec<RowLine>,
    svg: String,
    plot_link: String,
    /// The old verifier's verdict of the same commit, check by check.
    beside: Vec<compare::BesideLine>,
    legacy_verdict: String,
    legacy_url: String,
}

struct FindingLine {
    severity: String,
    rule: String,
    location: String,
    message: String,
}

struct EventLine {
    at: String,
    sha: String,
    kind: String,
    summary: String,
}

#[derive(Template)]
#[template(path = "dashboard/pr.html")]
struct PrPage {
    base: String,
    repository: String,
    number: u64,
    verdicts: Vec<VerdictView>,
    lint_sha: String,
    lint_title: String,
    lint: Vec<FindingLine>,
    commands: Vec<EventLine>,
    dispatched: Vec<SweepLine>,
    sweeps: Vec<EventLine>,
    timeline: Vec<EventLine>,
    would_post: Vec<WouldPost>,
}

/// A write shadow mode would have sent, in full.
struct WouldPost {
    seq: u64,
    at: String,
    kind: String,
    request: String,
    body: String,
}

/// Shadow mode's writes about a PR, oldest first.
async fn would_post(
    st: &DashState,
    repository: &str,
    number: u64,
) -> Result<Vec<WouldPost>, StoreError> {
    let Some(log) = &st.shadow else {
        return Ok(Vec::new());
    };
    // Check runs and statuses are about a commit: the PR's heads.
    let heads: Vec<String> = st
        .store
        .pr_heads(repository, number as i64)
        .await?
        .into_iter()
        .map(|h| h.head_sha)
        .collect();
    Ok(log
        .list(repository, None)
        .await?
        .into_iter()
        .filter(|w| match w.write.pr_number {
            Some(n) => n == number,
            None => heads
                .iter()
                .any(|h| w.write.path.contains(h.as_str()) || w.write.body.contains(h.as_str())),
        })
        .map(|w| {
            let v: Value = serde_json::from_str(&w.write.body).unwrap_or(Value::Null);
            // A comment shows as its text; anything else as its JSON.
            let body = match v.get("body").and_then(Value::as_str) {
                Some(text) if w.write.kind.starts_with("comment") => text.to_owned(),
                _ if v.is_null() => String::new(),
                _ => serde_json::to_string_pretty(&v).unwrap_or_default(),
            };
            let target = w
                .created_id()
                .or(w.write.target)
                .map(|id| format!(" → #{id}"))
                .unwrap_or_default();
            WouldPost {
                seq: w.seq,
                at: time(w.at),
                kind: format!("{}{target}", w.write.kind),
                request: format!("{} {}", w.write.method, w.write.path),
                body,
            }
        })
        .collect())
}

/// A sweep sweepgate dispatched, with its jobs counted.
struct SweepLine {
    id: String,
    sha: String,
    labels: String,
    state: String,
    run: String,
    jobs: String,
}

fn sweep_line(s: &crate::store::SweepRow, jobs: &[crate::store::SweepJob]) -> SweepLine {
    let done = |c: &str| {
        jobs.iter()
            .filter(|j| j.status == "completed" && j.conclusion.as_deref() == Some(c))
            .count()
    };
    let failed = jobs
        .iter()
        .filter(|j| {
            j.status == "completed"
                && !matches!(j.conclusion.as_deref(), Some("success" | "skipped"))
        })
        .count();
    let open = jobs.iter().filter(|j| j.status != "completed").count();
    let mut labels = s.primary_label.clone();
    if !s.modifiers.is_empty() {
        labels.push_str(&format!(" + {}", s.modifiers.replace(',', ", ")));
    }
    SweepLine {
        id: s.sweep_id.clone(),
        sha: s.head_sha.get(..12).unwrap_or(&s.head_sha).to_owned(),
        labels,
        state: match (&s.conclusion, &s.reason) {
            (_, Some(r)) if s.state == SweepState::Cancelled => format!("cancelled: {r}"),
            (Some(c), _) => format!("{} ({c})", s.state),
            _ => s.state.to_string(),
        },
        run: s.run_id.map(|r| r.to_string()).unwrap_or_default(),
        jobs: format!(
            "{} passed, {failed} failed, {open} running or queued",
            done("success")
        ),
    }
}

/// The parts of a stored verdict the pages use.
#[derive(Deserialize)]
struct StoredVerdict {
    head_sha: String,
    signer: String,
    rows: Vec<sweepgate_core::checks::CheckResult>,
    #[serde(default)]
    run: Option<u64>,
    #[serde(default)]
    pareto: Vec<Series>,
}

#[derive(Deserialize)]
struct StoredVerdictActivity {
    verdict: StoredVerdict,
    #[serde(default)]
    comment_url: String,
}

fn stored_verdict(a: &ActivityRow) -> Option<StoredVerdictActivity> {
    serde_json::from_str(&a.detail).ok()
}

fn caption(v: &StoredVerdict) -> String {
    match v.run {
        Some(run) => format!("run {run} · {}", v.head_sha),
        None => format!("no run · {}", v.head_sha),
    }
}

fn event_line(a: &ActivityRow) -> EventLine {
    EventLine {
        at: time(a.at),
        sha: short(&a.head_sha),
        kind: a.kind.clone(),
        summary: a.summary.clone(),
    }
}

/// Everything recorded about a PR, oldest first.
async fn pr_activity(
    st: &DashState,
    repository: &str,
    number: u64,
) -> Result<Vec<ActivityRow>, Response> {
    st.store
        .pr_activity(repository, number as i64, 10_000)
        .await
        .map_err(|e| unavailable(&e))
}

async fn pr_page(
    State(st): State<DashState>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
) -> Response {
    let repository = format!("{owner}/{repo}");
    let activity = match pr_activity(&st, &repository, number).await {
        Ok(a) => a,
        Err(resp) => return resp,
    };
    let deliveries = match st
        .store
        .pr_deliveries(&repository, number as i64, 500)
        .await
    {
        Ok(d) => d,
        Err(e) => return unavailable(&e),
    };
    let shadowed = match &st.shadow {
        Some(log) => match log.list(&repository, Some(number)).await {
            Ok(w) => !w.is_empty(),
            Err(e) => return unavailable(&e),
        },
        None => false,
    };
    if activity.is_empty() && deliveries.is_empty() && !shadowed {
        return failure(
            StatusCode::NOT_FOUND,
            &format!("sweepgate has no record of {repository}#{number}"),
        );
    }
    let pr_base = format!("{}/repos/{repository}/pulls/{number}", st.base);
    let mut verdicts = Vec::new();
    for a in activity.iter().rev().filter(|a| a.kind == "verdict") {
        let Some(sv) = stored_verdict(a) else {
            continue;
        };
        let v = &sv.verdict;
        let passed = !v.rows.iter().any(|r| r.is_blocking());
        let old = compare::legacy_for(&activity, &v.head_sha);
        verdicts.push(VerdictView {
            beside: old
                .as_ref()
                .map(|o| compare::beside(&compare::compare_rows(&v.rows, &o.legacy)))
                .unwrap_or_default(),
            legacy_verdict: old
                .as_ref()
                .map(|o| o.legacy.verdict.clone())
                .unwrap_or_default(),
            legacy_url: old
                .as_ref()
                .and_then(|o| o.comment_url.clone())
                .unwrap_or_default(),
            sha: v.head_sha.clone(),
            signer: v.signer.clone(),
            outcome: if passed { "PASS" } else { "REJECTED" }.into(),
            run: v.run.map(|r| r.to_string()).unwrap_or_default(),
            at: time(a.at),
            comment_url: sv.comment_url.clone(),
            rows: v
                .rows
                .iter()
                .map(|r| RowLine {
                    number: r.number,
                    name: r.name.clone(),
                    outcome: if r.acknowledged.is_some() {
                        "PASS (acknowledged)".into()
                    } else {
                        r.outcome.as_str().into()
                    },
                    class: match r.outcome.as_str() {
                        "N/A" => "na".into(),
                        o => o.to_owned(),
                    },
                    reason: r.reason.clone(),
                })
                .collect(),
            svg: if v.pareto.is_empty() {
                String::new()
            } else {
                svg::pareto(&v.pareto, &caption(v))
            },
            plot_link: format!("{pr_base}/pareto.svg?sha={}", v.head_sha),
        });
    }
    let lint_row = activity.iter().rev().find(|a| a.kind == "lint");
    let lint = lint_row
        .and_then(|a| serde_json::from_str::<Value>(&a.detail).ok())
        .and_then(|d| d.get("findings").and_then(Value::as_array).cloned())
        .unwrap_or_default()
        .iter()
        .map(|f| {
            let s = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            FindingLine {
                severity: s("severity"),
                rule: s("rule"),
                location: format!(
                    "{}:{}",
                    s("file"),
                    f.get("line").and_then(Value::as_u64).unwrap_or(0)
                ),
                message: s("message"),
            }
        })
        .collect();
    let of_kind = |k: &str| -> Vec<EventLine> {
        activity
            .iter()
            .filter(|a| a.kind == k)
            .map(event_line)
            .collect()
    };
    let mut dispatched = Vec::new();
    let swept = match st.store.pr_sweeps(&repository, number as i64).await {
        Ok(s) => s,
        Err(e) => return unavailable(&e),
    };
    for s in swept.iter().rev() {
        match st.store.sweep_jobs(&s.sweep_id).await {
            Ok(jobs) => dispatched.push(sweep_line(s, &jobs)),
            Err(e) => return unavailable(&e),
        }
    }
    let mut timeline: Vec<(i64, EventLine)> =
        activity.iter().map(|a| (a.at, event_line(a))).collect();
    for d in &deliveries {
        timeline.push((
            d.received_at,
            EventLine {
                at: time(d.received_at),
                sha: String::new(),
                kind: "delivery".into(),
                summary: format!(
                    "{}{} ({})",
                    d.event,
                    d.action
                        .as_ref()
                        .map(|a| format!(".{a}"))
                        .unwrap_or_default(),
                    match &d.reason {
                        Some(r) => format!("ignored: {r}"),
                        None => d.outcome.clone(),
                    }
                ),
            },
        ));
    }
    timeline.sort_by_key(|(at, _)| *at);
    let would_post = match would_post(&st, &repository, number).await {
        Ok(w) => w,
        Err(e) => return unavailable(&e),
    };
    page(&PrPage {
        base: st.base.clone(),
        repository,
        number,
        verdicts,
        lint_sha: lint_row.map(|a| short(&a.head_sha)).unwrap_or_default(),
        lint_title: lint_row.map(|a| a.summary.clone()).unwrap_or_default(),
        lint,
        commands: of_kind("command"),
        dispatched,
        sweeps: of_kind("sweep"),
        timeline: timeline.into_iter().map(|(_, e)| e).collect(),
        would_post,
    })
}

#[derive(Deserialize)]
struct PlotQuery {
    sha: Option<String>,
    sig: Option<String>,
}

/// The Pareto plot of the newest verdict (of `sha`, when given): with a
/// login, or through a link signed for this repository, PR and SHA.
async fn pareto(
    State(st): State<DashState>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    Query(q): Query<PlotQuery>,
    headers: HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    let repository = format!("{owner}/{repo}");
    match (&q.sig, &q.sha) {
        (Some(sig), Some(sha)) => {
            let key = match st.link_key().await {
                Ok(k) => k,
                Err(e) => return unavailable(&e),
            };
            if !links::plot_signature_valid(key, &repository, number, sha, sig) {
                tracing::warn!(%repository, number, "plot link with a wrong signature");
                return failure(
                    StatusCode::FORBIDDEN,
                    "this link's signature does not match its repository, PR and SHA",
                );
            }
        }
        _ if auth::may_read(&st, &headers) => {}
        _ => {
            let wanted = uri.path_and_query().map_or("/", |p| p.as_str());
            return auth::refuse(&st, &format!("{}{wanted}", st.base));
        }
    }
    let activity = match pr_activity(&st, &repository, number).await {
        Ok(a) => a,
        Err(resp) => return resp,
    };
    let found = activity
        .iter()
        .rev()
        .filter(|a| a.kind == "verdict")
        .filter(|a| q.sha.is_none() || a.head_sha == q.sha)
        .find_map(stored_verdict);
    match found {
        Some(sv) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "image/svg+xml")],
            svg::pareto(&sv.verdict.pareto, &caption(&sv.verdict)),
        )
            .into_response(),
        None => failure(
            StatusCode::NOT_FOUND,
            &format!(
                "no verdict of {repository}#{number}{}",
                q.sha.map(|s| format!(" at {s}")).unwrap_or_default()
            ),
        ),
    }
}

// ------------------------------------------------------------------- queue

struct JobLine {
    id: i64,
    kind: String,
    serial: String,
    attempts: String,
    updated: String,
    error: String,
}

struct JobGroup {
    state: &'static str,
    title: &'static str,
    retry: bool,
    jobs: Vec<JobLine>,
}

#[derive(Template)]
#[template(path = "dashboard/queue.html")]
struct QueuePage {
    base: String,
    counts: QueueCounts,
    groups: Vec<JobGroup>,
    admin: bool,
    notice: String,
}

#[derive(Deserialize)]
struct QueueQuery {
    retried: Option<i64>,
}

async fn queue(State(st): State<DashState>, Query(q): Query<QueueQuery>) -> Response {
    let counts = match st.store.queue_counts().await {
        Ok(c) => c,
        Err(e) => return unavailable(&e),
    };
    let mut groups = Vec::new();
    for (state, title, retry) in [
        (JobState::Pending, "Pending", false),
        (JobState::Running, "Running", false),
        (JobState::Dead, "Dead-lettered", true),
    ] {
        let jobs = match st.store.jobs(Some(state), 200).await {
            Ok(j) => j,
            Err(e) => return unavailable(&e),
        };
        groups.push(JobGroup {
            state: state.as_str(),
            title,
            retry,
            jobs: jobs
                .into_iter()
                .map(|j| JobLine {
                    id: j.id,
                    kind: j.kind,
                    serial: j.serial_key.unwrap_or_default(),
                    attempts: format!("{}/{}", j.attempts, j.max_attempts),
                    updated: time(j.updated_at),
                    error: j.last_error.unwrap_or_default(),
                })
                .collect(),
        });
    }
    page(&QueuePage {
        base: st.base.clone(),
        counts,
        groups,
        admin: st.admin_token.is_some(),
        notice: q
            .retried
            .map(|id| format!("Job {id} is back in the queue."))
            .unwrap_or_default(),
    })
}

/// The token from `Authorization: Bearer …` or the form's `token` field.
/// (A session cookie is not enough for an action: a form on another site
/// could send it.)
fn presented_token(headers: &HeaderMap, body: &[u8]) -> Option<String> {
    if let Some(bearer) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        return Some(bearer.trim().to_owned());
    }
    url::form_urlencoded::parse(body)
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.into_owned())
}

async fn retry(
    State(st): State<DashState>,
    Path(id): Path<i64>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(expected) = &st.admin_token else {
        return failure(
            StatusCode::FORBIDDEN,
            "the dashboard is read-only: start sweepgate with --admin-token to enable actions",
        );
    };
    match presented_token(&headers, &body) {
        None => return failure(StatusCode::UNAUTHORIZED, "the admin token is required"),
        Some(t) if !token_matches(expected, &t) => {
            tracing::warn!(job = id, "dashboard retry with a wrong admin token");
            return failure(StatusCode::FORBIDDEN, "wrong admin token");
        }
        Some(_) => {}
    }
    let job = JobId(id.max(0) as u64);
    match st.store.retry_dead(job, now_ms()).await {
        Ok(true) => {
            tracing::info!(job = id, "dead-lettered job retried from the dashboard");
            st.wake.notify_one();
            Redirect::to(&format!("{}/queue?retried={id}", st.base)).into_response()
        }
        Ok(false) => failure(
            StatusCode::CONFLICT,
            &format!("job {id} is not dead-lettered (or does not exist)"),
        ),
        Err(e) => unavailable(&e),
    }
}
