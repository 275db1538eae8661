//! Issues (and PRs as issues): comments, labels, timeline.
use super::pulls::association_for;
use super::{ApiResult, Req, Sh, created, ok, paged, paginate, parse_body};
use crate::state::{SandboxError, TimelineItem, World, ts};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{delete, get};
use serde_json::{Value, json};

pub(crate) fn routes(r: Router<Sh>) -> Router<Sh> {
    r.route("/repos/{owner}/{repo}/issues/{number}", get(get_issue))
        .route(
            "/repos/{owner}/{repo}/issues/{number}/comments",
            get(list_comments).post(create_comment),
        )
        .route(
            "/repos/{owner}/{repo}/issues/comments/{comment_id}",
            // octocrab updates with POST, which GitHub accepts for PATCH.
            get(get_comment)
                .patch(update_comment)
                .post(update_comment)
                .delete(delete_comment),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}/timeline",
            get(timeline),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}/labels",
            get(list_labels)
                .post(add_labels)
                .put(set_labels)
                .delete(remove_all_labels),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}/labels/{name}",
            delete(remove_label),
        )
}

async fn get_issue(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    w.issue(&key, n)?;
    ok(w.issue_json(&key, n))
}

async fn list_comments(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    w.issue(&key, n)?;
    let since = r
        .q("since")
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc));
    let items: Vec<Value> = w
        .comments
        .values()
        .filter(|c| c.repo == key && c.number == n)
        .filter(|c| since.is_none_or(|t| c.updated_at >= t))
        .map(|c| w.comment_json(c.id))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

fn body_field(body: &Value, resource: &str) -> Result<String, SandboxError> {
    body.get("body")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| SandboxError::validation(resource, "body", "missing_field"))
}

async fn create_comment(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let body = parse_body(&body)?;
    let text = body_field(&body, "IssueComment")?;
    let mut w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let user = r.caller.login(&w);
    let association = association_for(&w, &key, &user);
    let via_app = !matches!(r.caller, super::Caller::User(_));
    let id = w.add_comment(&key, n, &user, &association, &text, via_app)?;
    created(w.comment_json(id))
}

fn comment_in_repo(w: &World, key: &str, id: u64) -> Result<(), SandboxError> {
    match w.comments.get(&id) {
        Some(c) if c.repo == key => Ok(()),
        _ => Err(SandboxError::not_found()),
    }
}

async fn get_comment(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let id = r.num("comment_id")?;
    comment_in_repo(&w, &r.repo_key(), id)?;
    ok(w.comment_json(id))
}

async fn update_comment(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let body = parse_body(&body)?;
    let text = body_field(&body, "IssueComment")?;
    let mut w = s.lock_world();
    let id = r.num("comment_id")?;
    comment_in_repo(&w, &r.repo_key(), id)?;
    let user = r.caller.login(&w);
    // Only the author (or a user token standing in for a maintainer) edits.
    let author = w
        .comments
        .get(&id)
        .map(|c| c.user.clone())
        .unwrap_or_default();
    if matches!(r.caller, super::Caller::Installation(_)) && !author.eq_ignore_ascii_case(&user) {
        return Err(SandboxError::forbidden_integration());
    }
    w.edit_comment(id, &text, &user)?;
    ok(w.comment_json(id))
}

async fn delete_comment(State(s): State<Sh>, r: Req) -> ApiResult {
    let mut w = s.lock_world();
    let id = r.num("comment_id")?;
    comment_in_repo(&w, &r.repo_key(), id)?;
    let user = r.caller.login(&w);
    w.delete_comment(id, &user)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn render_timeline(w: &World, key: &str, item: &TimelineItem) -> Value {
    let full = w.repos.get(key).map(|r| r.full_name()).unwrap_or_default();
    let api = &w.settings.api_base;
    match item {
        TimelineItem::Comment(id) => {
            let mut v = w.comment_json(*id);
            if let (Some(obj), Some(c)) = (v.as_object_mut(), w.comments.get(id)) {
                obj.insert("event".into(), json!("commented"));
                obj.insert("actor".into(), w.user_json(&c.user));
            }
            v
        }
        TimelineItem::Review(id) => {
            let mut v = w.review_json(*id);
            if let Some(obj) = v.as_object_mut() {
                obj.insert("event".into(), json!("reviewed"));
                let state = obj
                    .get("state")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                obj.insert("state".into(), json!(state));
            }
            v
        }
        TimelineItem::Commit(sha) => match w.objects.commit(sha) {
            Some(c) => json!({
                "event": "committed",
                "sha": sha,
                "node_id": "",
                "url": format!("{api}/repos/{full}/git/commits/{sha}"),
                "html_url": format!("{}/{full}/commit/{sha}", w.settings.html_base),
                "author": { "name": c.author.name, "email": c.author.email, "date": ts(c.author.date) },
                "committer": { "name": c.committer.name, "email": c.committer.email, "date": ts(c.committer.date) },
                "message": c.message,
                "tree": { "sha": c.tree, "url": format!("{api}/repos/{full}/git/trees/{}", c.tree) },
                "parents": c.parents.iter().map(|p| json!({ "sha": p, "url": format!("{api}/repos/{full}/git/commits/{p}") })).collect::<Vec<_>>(),
                "verification": { "verified": false, "reason": "unsigned", "signature": null, "payload": null, "verified_at": null },
            }),
            None => Value::Null,
        },
        TimelineItem::Event {
            id,
            event,
            actor,
            at,
            extra,
        } => {
            let mut v = json!({
                "id": id,
                "node_id": "",
                "url": format!("{api}/repos/{full}/issues/events/{id}"),
                "actor": w.user_json(actor),
                "event": event,
                "commit_id": null,
                "commit_url": null,
                "created_at": ts(*at),
                "performed_via_github_app": null,
            });
            if let (Some(obj), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
                for (k, x) in extra {
                    obj.insert(k.clone(), x.clone());
                }
            }
            v
        }
    }
}

async fn timeline(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let issue = w.issue(&key, n)?;
    let items: Vec<Value> = issue
        .timeline
        .iter()
        .map(|t| render_timeline(&w, &key, t))
        .filter(|v| !v.is_null())
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn list_labels(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    w.issue(&key, n)?;
    let (page, link) = paginate(&w.settings.api_base, &r, w.labels_json(&key, n), 30, 100);
    paged(page, link)
}

/// `{"labels": [...]}`, a bare array, or `[{"name": ...}]`.
fn label_names(body: &Value) -> Result<Vec<String>, SandboxError> {
    let list = match body {
        Value::Array(a) => a.clone(),
        Value::Object(o) => match o.get("labels") {
            Some(Value::Array(a)) => a.clone(),
            Some(Value::String(s)) => vec![json!(s)],
            _ => return Err(SandboxError::validation("Label", "labels", "missing_field")),
        },
        Value::String(s) => vec![json!(s)],
        _ => return Err(SandboxError::validation("Label", "labels", "invalid")),
    };
    list.iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.clone()),
            Value::Object(o) => o
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| SandboxError::validation("Label", "name", "missing_field")),
            _ => Err(SandboxError::validation("Label", "labels", "invalid")),
        })
        .collect()
}

async fn add_labels(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let names = label_names(&parse_body(&body)?)?;
    let mut w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let user = r.caller.login(&w);
    w.add_labels(&key, n, &names, &user)?;
    ok(Value::Array(w.labels_json(&key, n)))
}

async fn set_labels(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let names = label_names(&parse_body(&body)?)?;
    let mut w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let user = r.caller.login(&w);
    w.set_labels(&key, n, &names, &user)?;
    ok(Value::Array(w.labels_json(&key, n)))
}

async fn remove_all_labels(State(s): State<Sh>, r: Req) -> ApiResult {
    let mut w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let user = r.caller.login(&w);
    w.set_labels(&key, n, &[], &user)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn remove_label(State(s): State<Sh>, r: Req) -> ApiResult {
    let mut w = s.lock_world();
    let key = r.repo_key();
    let n = r.num("number")?;
    let user = r.caller.login(&w);
    let name = r.param("name").to_string();
    w.remove_label(&key, n, &name, &user)?;
    ok(Value::Array(w.labels_json(&key, n)))
}
