//! Check runs (create, update with output and annotations, list for a ref
//! with `filter=latest|all`) and commit statuses.
use super::{ApiResult, Caller, Req, Sh, created, ok, paged, paged_object, paginate, parse_body};
use crate::state::{SandboxError, World};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::collections::HashMap;

pub(crate) fn routes(r: Router<Sh>) -> Router<Sh> {
    r.route("/repos/{owner}/{repo}/check-runs", post(create_check_run))
        .route(
            "/repos/{owner}/{repo}/check-runs/{id}",
            get(get_check_run).patch(update_check_run),
        )
        .route(
            "/repos/{owner}/{repo}/check-runs/{id}/annotations",
            get(annotations),
        )
        .route(
            "/repos/{owner}/{repo}/commits/{ref}/check-runs",
            get(list_for_ref),
        )
        .route("/repos/{owner}/{repo}/statuses/{sha}", post(create_status))
        .route(
            "/repos/{owner}/{repo}/commits/{ref}/statuses",
            get(list_statuses),
        )
        .route(
            "/repos/{owner}/{repo}/commits/{ref}/status",
            get(combined_status),
        )
}

fn app_of(w: &World, caller: &Caller) -> Result<u64, SandboxError> {
    match caller {
        Caller::Installation(_) => Ok(w.settings.app.id),
        // Only GitHub Apps may write check runs.
        _ => Err(SandboxError::new(
            403,
            "You must authenticate via a GitHub App.",
        )),
    }
}

async fn create_check_run(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let body = parse_body(&body)?;
    let mut w = s.lock_world();
    let app = app_of(&w, &r.caller)?;
    let sender = r.caller.login(&w);
    let id = w.create_check_run(&r.repo_key(), &body, app, &sender)?;
    created(w.check_run_json(id))
}

fn check_in_repo(w: &World, key: &str, id: u64) -> Result<(), SandboxError> {
    match w.check_runs.get(&id) {
        Some(c) if c.repo == key => Ok(()),
        _ => Err(SandboxError::not_found()),
    }
}

async fn get_check_run(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("id")?;
    check_in_repo(&w, &r.repo_key(), id)?;
    ok(w.check_run_json(id))
}

async fn update_check_run(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let body = parse_body(&body)?;
    let mut w = s.lock_world();
    let id = r.num("id")?;
    let key = r.repo_key();
    check_in_repo(&w, &key, id)?;
    let app = app_of(&w, &r.caller)?;
    // An app may only update its own check runs.
    if w.check_runs.get(&id).is_some_and(|c| c.app_id != app) {
        return Err(SandboxError::forbidden_integration());
    }
    let sender = r.caller.login(&w);
    w.update_check_run(&key, id, &body, &sender)?;
    ok(w.check_run_json(id))
}

async fn annotations(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("id")?;
    check_in_repo(&w, &r.repo_key(), id)?;
    let items = w
        .check_runs
        .get(&id)
        .map(|c| c.annotations.clone())
        .unwrap_or_default();
    let items: Vec<Value> = items
        .into_iter()
        .map(|mut a| {
            if let Some(obj) = a.as_object_mut() {
                obj.entry("blob_href").or_insert(json!(""));
                obj.entry("title").or_insert(Value::Null);
                obj.entry("raw_details").or_insert(Value::Null);
                obj.entry("start_column").or_insert(Value::Null);
                obj.entry("end_column").or_insert(Value::Null);
            }
            a
        })
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn list_for_ref(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let sha = w.resolve_ref(&key, r.param("ref")).map_err(|_| {
        SandboxError::unprocessable(format!("No commit found for SHA: {}", r.param("ref")))
    })?;
    let filter = r.q("filter").unwrap_or("latest");
    if filter != "latest" && filter != "all" {
        return Err(SandboxError::validation("CheckRun", "filter", "invalid"));
    }
    let mut runs: Vec<&crate::state::CheckRun> = w
        .check_runs
        .values()
        .filter(|c| c.repo == key && c.head_sha == sha)
        .filter(|c| r.q("check_name").is_none_or(|n| c.name == n))
        .filter(|c| r.q("status").is_none_or(|st| c.status == st))
        .filter(|c| {
            r.q("app_id")
                .and_then(|a| a.parse::<u64>().ok())
                .is_none_or(|a| c.app_id == a)
        })
        .collect();
    // Newest first; `latest` keeps the newest run per (app, name), which is
    // how re-run jobs replace their earlier attempts.
    runs.sort_by_key(|c| std::cmp::Reverse(c.id));
    if filter == "latest" {
        let mut seen: HashMap<(u64, &str), ()> = HashMap::new();
        runs.retain(|c| seen.insert((c.app_id, c.name.as_str()), ()).is_none());
    }
    let total = runs.len();
    let items: Vec<Value> = runs.iter().map(|c| w.check_run_json(c.id)).collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged_object("check_runs", total, page, link)
}

async fn create_status(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let body = parse_body(&body)?;
    let mut w = s.lock_world();
    let key = r.repo_key();
    let creator = r.caller.login(&w);
    let sha = r.param("sha").to_string();
    let id = w.create_status(&key, &sha, &body, &creator)?;
    let v = w
        .statuses
        .iter()
        .find(|x| x.id == id)
        .map(|x| w.status_json(x))
        .unwrap_or(Value::Null);
    created(v)
}

async fn list_statuses(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let sha = w.resolve_ref(&key, r.param("ref"))?;
    let items: Vec<Value> = w
        .statuses
        .iter()
        .rev()
        .filter(|x| x.repo == key && x.sha == sha)
        .map(|x| w.status_json(x))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn combined_status(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let sha = w.resolve_ref(&key, r.param("ref"))?;
    let mut latest: Vec<&crate::state::CommitStatus> = Vec::new();
    for st in w
        .statuses
        .iter()
        .rev()
        .filter(|x| x.repo == key && x.sha == sha)
    {
        if !latest.iter().any(|l| l.context == st.context) {
            latest.push(st);
        }
    }
    let state = if latest
        .iter()
        .any(|x| x.state == "failure" || x.state == "error")
    {
        "failure"
    } else if latest.is_empty() || latest.iter().any(|x| x.state == "pending") {
        "pending"
    } else {
        "success"
    };
    let full = w.repo(&key)?.full_name();
    ok(json!({
        "state": state,
        "statuses": latest.iter().map(|x| w.status_json(x)).collect::<Vec<_>>(),
        "sha": sha,
        "total_count": latest.len(),
        "repository": w.repo_json(&key),
        "commit_url": format!("{}/repos/{full}/commits/{sha}", w.settings.api_base),
        "url": format!("{}/repos/{full}/commits/{sha}/status", w.settings.api_base),
    }))
}
