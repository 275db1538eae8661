//! GitHub Actions: workflows, dispatch, runs (list with filters, get,
//! cancel, re-run), jobs, artifacts (list, download zip), and repository
//! dispatch.
use super::{
    ApiResult, Req, Sh, json_response, no_content, ok, paged_object, paginate, parse_body,
};
use crate::state::{SandboxError, WorkflowRun, World};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::collections::HashMap;

pub(crate) fn routes(r: Router<Sh>) -> Router<Sh> {
    r.route(
        "/repos/{owner}/{repo}/actions/workflows",
        get(list_workflows),
    )
    .route(
        "/repos/{owner}/{repo}/actions/workflows/{workflow_id}",
        get(get_workflow),
    )
    .route(
        "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
        post(dispatch),
    )
    .route(
        "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
        get(list_workflow_runs),
    )
    .route("/repos/{owner}/{repo}/actions/runs", get(list_runs))
    .route("/repos/{owner}/{repo}/actions/runs/{run_id}", get(get_run))
    .route(
        "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt}",
        get(get_attempt),
    )
    .route(
        "/repos/{owner}/{repo}/actions/runs/{run_id}/cancel",
        post(cancel),
    )
    .route(
        "/repos/{owner}/{repo}/actions/runs/{run_id}/rerun",
        post(rerun_all),
    )
    .route(
        "/repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs",
        post(rerun_failed),
    )
    .route(
        "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
        get(list_jobs),
    )
    .route(
        "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts",
        get(run_artifacts),
    )
    .route("/repos/{owner}/{repo}/actions/jobs/{job_id}", get(get_job))
    .route(
        "/repos/{owner}/{repo}/actions/artifacts",
        get(repo_artifacts),
    )
    .route(
        "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}",
        get(get_artifact),
    )
    .route(
        "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}",
        get(download_artifact),
    )
    .route(
        "/repos/{owner}/{repo}/dispatches",
        post(repository_dispatch),
    )
    .route(
        "/_sandbox/blobs/artifacts/{artifact_id}",
        get(artifact_blob),
    )
}

async fn list_workflows(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let repo = w.repo(&key)?;
    let items: Vec<Value> = repo
        .workflows
        .keys()
        .map(|id| w.workflow_json(&key, *id))
        .collect();
    let total = items.len();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged_object("workflows", total, page, link)
}

async fn get_workflow(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let id = w.find_workflow(&key, r.param("workflow_id"))?;
    ok(w.workflow_json(&key, id))
}

async fn dispatch(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let body = parse_body(&body)?;
    let mut w = s.lock_world();
    let key = r.repo_key();
    let sender = r.caller.login(&w);
    let run_id = w.dispatch_workflow(&key, r.param("workflow_id"), &body, &sender)?;
    if body.get("return_run_details").and_then(Value::as_bool) == Some(true) {
        let full = w.repo(&key)?.full_name();
        return ok(json!({
            "workflow_run_id": run_id,
            "run_url": format!("{}/repos/{full}/actions/runs/{run_id}", w.settings.api_base),
            "html_url": format!("{}/{full}/actions/runs/{run_id}", w.settings.html_base),
        }));
    }
    no_content()
}

/// The filters of `GET /actions/runs`.
fn run_matches(w: &World, run: &WorkflowRun, r: &Req) -> bool {
    let q = |k: &str| r.q(k).filter(|v| !v.is_empty());
    if q("actor").is_some_and(|a| !a.eq_ignore_ascii_case(&run.actor)) {
        return false;
    }
    if q("branch").is_some_and(|b| b != run.head_branch) {
        return false;
    }
    if q("event").is_some_and(|e| e != run.event) {
        return false;
    }
    if q("head_sha").is_some_and(|h| h != run.head_sha) {
        return false;
    }
    if let Some(st) = q("status") {
        let hit = st == run.status || run.conclusion.as_deref() == Some(st);
        if !hit {
            return false;
        }
    }
    if let Some(created) = q("created")
        && !date_filter(created, run.created_at)
    {
        return false;
    }
    let _ = w;
    true
}

/// `YYYY-MM-DD`, `>=YYYY-MM-DD`, `<=…`, `>…`, `<…` and `A..B`.
fn date_filter(expr: &str, at: chrono::DateTime<chrono::Utc>) -> bool {
    let parse = |s: &str| {
        let s = s.trim();
        chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&chrono::Utc))
            .ok()
            .or_else(|| {
                chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                    .ok()
                    .and_then(|d| d.and_hms_opt(0, 0, 0))
                    .map(|t| t.and_utc())
            })
    };
    let day = chrono::Duration::days(1);
    if let Some((a, b)) = expr.split_once("..") {
        let lo = if a == "*" { None } else { parse(a) };
        let hi = if b == "*" {
            None
        } else {
            parse(b).map(|t| if b.len() == 10 { t + day } else { t })
        };
        return lo.is_none_or(|l| at >= l) && hi.is_none_or(|h| at < h);
    }
    if let Some(x) = expr.strip_prefix(">=") {
        return parse(x).is_some_and(|t| at >= t);
    }
    if let Some(x) = expr.strip_prefix("<=") {
        return parse(x).is_some_and(|t| at < t + day);
    }
    if let Some(x) = expr.strip_prefix('>') {
        return parse(x).is_some_and(|t| at >= t + day);
    }
    if let Some(x) = expr.strip_prefix('<') {
        return parse(x).is_some_and(|t| at < t);
    }
    parse(expr).is_some_and(|t| at >= t && at < t + day)
}

fn runs_response(w: &World, r: &Req, key: &str, workflow: Option<u64>) -> ApiResult {
    let mut runs: Vec<&WorkflowRun> = w
        .runs
        .values()
        .filter(|x| x.repo == key && workflow.is_none_or(|id| x.workflow_id == id))
        .filter(|x| run_matches(w, x, r))
        .collect();
    runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    let total = runs.len();
    let exclude_prs = r.q("exclude_pull_requests") == Some("true");
    let items: Vec<Value> = runs
        .iter()
        .map(|x| {
            let mut v = w.run_json(x.id);
            if exclude_prs && let Some(obj) = v.as_object_mut() {
                obj.insert("pull_requests".into(), json!([]));
            }
            v
        })
        .collect();
    let (page, link) = paginate(&w.settings.api_base, r, items, 30, 100);
    paged_object("workflow_runs", total, page, link)
}

async fn list_runs(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    w.repo(&key)?;
    runs_response(&w, &r, &key, None)
}

async fn list_workflow_runs(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let id = w.find_workflow(&key, r.param("workflow_id"))?;
    runs_response(&w, &r, &key, Some(id))
}

fn run_in_repo(w: &World, key: &str, id: u64) -> Result<(), SandboxError> {
    match w.runs.get(&id) {
        Some(x) if x.repo == key => Ok(()),
        _ => Err(SandboxError::not_found()),
    }
}

async fn get_run(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("run_id")?;
    run_in_repo(&w, &r.repo_key(), id)?;
    ok(w.run_json(id))
}

async fn get_attempt(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("run_id")?;
    let attempt = r.num("attempt")?;
    run_in_repo(&w, &r.repo_key(), id)?;
    let current = w.runs.get(&id).map(|x| x.run_attempt).unwrap_or(0);
    if attempt == current {
        return ok(w.run_json(id));
    }
    let old = w
        .run_attempts
        .get(&(id, attempt))
        .ok_or_else(SandboxError::not_found)?;
    // Render the stored attempt through the same shape.
    let mut v = w.run_json(id);
    if let Some(obj) = v.as_object_mut() {
        obj.insert("run_attempt".into(), json!(old.run_attempt));
        obj.insert("status".into(), json!(old.status));
        obj.insert("conclusion".into(), json!(old.conclusion));
        obj.insert("updated_at".into(), json!(crate::state::ts(old.updated_at)));
        obj.insert(
            "run_started_at".into(),
            json!(crate::state::ts(old.run_started_at)),
        );
    }
    ok(v)
}

async fn cancel(State(s): State<Sh>, r: Req) -> ApiResult {
    let mut w = s.lock_world();
    let id = r.num("run_id")?;
    w.cancel_run(&r.repo_key(), id)?;
    Ok(json_response(StatusCode::ACCEPTED, json!({})))
}

async fn rerun_all(State(s): State<Sh>, r: Req) -> ApiResult {
    let mut w = s.lock_world();
    let id = r.num("run_id")?;
    let actor = r.caller.login(&w);
    w.rerun(&r.repo_key(), id, true, &actor)?;
    Ok(json_response(StatusCode::CREATED, json!({})))
}

async fn rerun_failed(State(s): State<Sh>, r: Req) -> ApiResult {
    let mut w = s.lock_world();
    let id = r.num("run_id")?;
    let actor = r.caller.login(&w);
    w.rerun(&r.repo_key(), id, false, &actor)?;
    Ok(json_response(StatusCode::CREATED, json!({})))
}

async fn list_jobs(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("run_id")?;
    run_in_repo(&w, &r.repo_key(), id)?;
    let attempt = w.runs.get(&id).map(|x| x.run_attempt).unwrap_or(1);
    let filter = r.q("filter").unwrap_or("latest");
    if filter != "latest" && filter != "all" {
        return Err(SandboxError::validation("WorkflowJob", "filter", "invalid"));
    }
    let items: Vec<Value> = w
        .jobs
        .values()
        .filter(|j| j.run_id == id && (filter == "all" || j.run_attempt == attempt))
        .map(|j| w.job_json(j.id))
        .collect();
    let total = items.len();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged_object("jobs", total, page, link)
}

async fn get_job(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("job_id")?;
    let key = r.repo_key();
    let job = w.jobs.get(&id).ok_or_else(SandboxError::not_found)?;
    run_in_repo(&w, &key, job.run_id)?;
    ok(w.job_json(id))
}

fn artifacts_response(
    w: &World,
    r: &Req,
    filter: impl Fn(&crate::state::Artifact) -> bool,
) -> ApiResult {
    let items: Vec<Value> = w
        .artifacts
        .values()
        .filter(|a| filter(a))
        .filter(|a| r.q("name").is_none_or(|n| a.name == n))
        .rev()
        .map(|a| w.artifact_json(a.id))
        .collect();
    let total = items.len();
    let (page, link) = paginate(&w.settings.api_base, r, items, 30, 100);
    paged_object("artifacts", total, page, link)
}

async fn run_artifacts(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("run_id")?;
    run_in_repo(&w, &r.repo_key(), id)?;
    artifacts_response(&w, &r, |a| a.run_id == id)
}

async fn repo_artifacts(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    w.repo(&key)?;
    artifacts_response(&w, &r, |a| a.repo == key)
}

fn artifact_in_repo(w: &World, key: &str, id: u64) -> Result<(), SandboxError> {
    match w.artifacts.get(&id) {
        Some(a) if a.repo == key => Ok(()),
        _ => Err(SandboxError::not_found()),
    }
}

async fn get_artifact(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("artifact_id")?;
    artifact_in_repo(&w, &r.repo_key(), id)?;
    ok(w.artifact_json(id))
}

/// 302 to a short-lived blob URL, as GitHub redirects to its storage.
async fn download_artifact(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("artifact_id")?;
    artifact_in_repo(&w, &r.repo_key(), id)?;
    if r.param("archive_format") != "zip" {
        return Err(SandboxError::not_found());
    }
    if w.artifacts.get(&id).is_some_and(|a| a.expired) {
        return Err(SandboxError::new(410, "Artifact has expired"));
    }
    let location = format!("{}/_sandbox/blobs/artifacts/{id}", w.settings.api_base);
    let mut resp = StatusCode::FOUND.into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    Ok(resp)
}

async fn artifact_blob(State(s): State<Sh>, Path(p): Path<HashMap<String, String>>) -> ApiResult {
    let w = s.lock_world();
    let id: u64 = p
        .get("artifact_id")
        .and_then(|v| v.parse().ok())
        .ok_or_else(SandboxError::not_found)?;
    let a = w.artifacts.get(&id).ok_or_else(SandboxError::not_found)?;
    if a.expired {
        return Err(SandboxError::new(410, "Artifact has expired"));
    }
    let mut resp = (StatusCode::OK, a.zip.as_ref().clone()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    Ok(resp)
}

async fn repository_dispatch(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let body = parse_body(&body)?;
    let mut w = s.lock_world();
    let key = r.repo_key();
    let sender = r.caller.login(&w);
    w.repository_dispatch(&key, &body, &sender)?;
    no_content()
}
