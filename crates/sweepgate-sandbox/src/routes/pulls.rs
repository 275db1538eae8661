//! Pull requests: get and list, files (with patches), commits, reviews and
//! review comments.
use super::{ApiResult, Req, Sh, ok, paged, paginate, parse_body};
use crate::state::{SandboxError, World};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::Value;

pub(crate) fn routes(r: Router<Sh>) -> Router<Sh> {
    r.route("/repos/{owner}/{repo}/pulls", get(list_pulls))
        .route("/repos/{owner}/{repo}/pulls/{number}", get(get_pull))
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/files",
            get(pull_files),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/commits",
            get(pull_commits),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/reviews",
            get(list_reviews).post(create_review),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/reviews/{review_id}",
            get(get_review),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/comments",
            get(list_review_comments),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/comments/{comment_id}",
            get(get_review_comment),
        )
}

async fn list_pulls(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let repo = w.repo(&key)?;
    let state = r.q("state").unwrap_or("open");
    if !["open", "closed", "all"].contains(&state) {
        return Err(SandboxError::validation("PullRequest", "state", "invalid"));
    }
    let mut list: Vec<u64> = repo
        .issues
        .values()
        .filter(|i| i.pull.is_some())
        .filter(|i| state == "all" || i.state == state)
        .filter(|i| {
            let Some(p) = &i.pull else { return false };
            let head_ok = r.q("head").is_none_or(|h| {
                let owner = w
                    .repos
                    .get(&p.head_repo)
                    .map(|x| x.owner.clone())
                    .unwrap_or_default();
                match h.split_once(':') {
                    Some((o, b)) => o.eq_ignore_ascii_case(&owner) && b == p.head_ref,
                    None => h == p.head_ref,
                }
            });
            let base_ok = r.q("base").is_none_or(|b| b == p.base_ref);
            head_ok && base_ok
        })
        .map(|i| i.number)
        .collect();
    // Newest first, the default `sort=created&direction=desc`.
    if r.q("direction") == Some("asc") {
        list.sort();
    } else {
        list.sort_by(|a, b| b.cmp(a));
    }
    let items: Vec<Value> = list.iter().map(|n| w.pr_json(&key, *n)).collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn get_pull(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    w.pull(&key, n)?;
    if r.accept().contains("diff") {
        let files = w.pr_files(&key, n)?;
        return Ok((StatusCode::OK, super::repos::diff_text(&files)).into_response());
    }
    ok(w.pr_json(&key, n))
}

async fn pull_files(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let head = w.pull(&key, n)?.1.head_sha.clone();
    // GitHub lists at most 3000 files of a PR.
    let items: Vec<Value> = w
        .pr_files(&key, n)?
        .iter()
        .take(3000)
        .map(|f| w.file_json(&key, &head, f))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn pull_commits(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let items: Vec<Value> = w
        .pr_commits(&key, n)?
        .iter()
        .take(250)
        .map(|c| w.commit_json(&key, c, None))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn list_reviews(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    w.pull(&key, n)?;
    let items: Vec<Value> = w
        .reviews
        .values()
        .filter(|x| x.repo == key && x.number == n)
        .map(|x| w.review_json(x.id))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn get_review(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let id = r.num("review_id")?;
    match w.reviews.get(&id) {
        Some(x) if x.repo == key && x.number == n => ok(w.review_json(id)),
        _ => Err(SandboxError::not_found()),
    }
}

async fn create_review(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let body = parse_body(&body)?;
    let mut w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let user = r.caller.login(&w);
    let event = body
        .get("event")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let text = body.get("body").and_then(Value::as_str).unwrap_or_default();
    let comments = body
        .get("comments")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let commit = body
        .get("commit_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let association = association_for(&w, &key, &user);
    let id = w.submit_review(
        &key,
        n,
        &user,
        &association,
        event,
        text,
        commit.as_deref(),
        &comments,
    )?;
    ok(w.review_json(id))
}

/// What GitHub would show next to a login on this repository.
pub(crate) fn association_for(w: &World, key: &str, login: &str) -> String {
    let Ok(repo) = w.repo(key) else {
        return "NONE".into();
    };
    if repo.owner.eq_ignore_ascii_case(login) {
        return "OWNER".into();
    }
    if login.ends_with("[bot]") {
        return "NONE".into();
    }
    match repo.permissions.get(&login.to_ascii_lowercase()) {
        Some(p) if p.role_name != "read" && p.role_name != "none" => "COLLABORATOR".into(),
        _ => "NONE".into(),
    }
}

async fn list_review_comments(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    w.pull(&key, n)?;
    let items: Vec<Value> = w
        .review_comments
        .values()
        .filter(|c| c.repo == key && c.number == n)
        .map(|c| w.review_comment_json(c.id))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn get_review_comment(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let id = r.num("comment_id")?;
    match w.review_comments.get(&id) {
        Some(c) if c.repo == key => ok(w.review_comment_json(id)),
        _ => Err(SandboxError::not_found()),
    }
}
