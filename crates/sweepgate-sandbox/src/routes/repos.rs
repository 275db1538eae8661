//! Repositories and git content: repository, contents at a ref, git trees,
//! refs, commits, blobs, branches, compare.
use super::{ApiResult, Req, Sh, ok, paged, paginate};
use crate::git::EntryKind;
use crate::json::url_escape_path;
use crate::state::{SandboxError, World};
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use base64::Engine;
use serde_json::{Value, json};

pub(crate) fn routes(r: Router<Sh>) -> Router<Sh> {
    r.route("/repos/{owner}/{repo}", get(get_repo))
        .route("/repos/{owner}/{repo}/contents", get(get_contents))
        .route("/repos/{owner}/{repo}/contents/", get(get_contents))
        .route("/repos/{owner}/{repo}/contents/{*path}", get(get_contents))
        .route("/repos/{owner}/{repo}/git/trees/{*sha}", get(get_tree))
        .route("/repos/{owner}/{repo}/git/ref/{*ref}", get(get_ref))
        .route(
            "/repos/{owner}/{repo}/git/commits/{sha}",
            get(get_git_commit),
        )
        .route("/repos/{owner}/{repo}/git/blobs/{sha}", get(get_blob))
        .route("/repos/{owner}/{repo}/branches", get(list_branches))
        .route("/repos/{owner}/{repo}/branches/{*branch}", get(get_branch))
        .route("/repos/{owner}/{repo}/commits", get(list_commits))
        .route("/repos/{owner}/{repo}/commits/{ref}", get(get_commit))
        .route("/repos/{owner}/{repo}/compare/{*basehead}", get(compare))
        .route("/repos/{owner}/{repo}/labels", get(list_labels))
        .route("/_sandbox/raw/{owner}/{repo}/{sha}/{*path}", get(raw_file))
}

/// What `download_url` points at (raw.githubusercontent.com on GitHub).
async fn raw_file(
    State(s): State<Sh>,
    axum::extract::Path(p): axum::extract::Path<std::collections::HashMap<String, String>>,
) -> ApiResult {
    let w = s.lock_world();
    let get = |k: &str| p.get(k).map(String::as_str).unwrap_or_default();
    let key = World::repo_key(get("owner"), get("repo"));
    let sha = w.resolve_ref(&key, get("sha"))?;
    let commit = w.objects.commit(&sha).ok_or_else(SandboxError::not_found)?;
    let blob = commit
        .files
        .get(get("path"))
        .and_then(|b| w.objects.blob(b))
        .ok_or_else(SandboxError::not_found)?;
    Ok((StatusCode::OK, blob.as_ref().clone()).into_response())
}

async fn get_repo(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    w.repo(&key)?;
    // The full repository: what a listing leaves out.
    let mut full = w.repo_json(&key);
    full["network_count"] = json!(0);
    full["subscribers_count"] = json!(0);
    ok(full)
}

/// The commit at `?ref=` (default branch when absent).
fn at_ref(w: &World, key: &str, r: &Req) -> Result<String, SandboxError> {
    let repo = w.repo(key)?;
    match r.q("ref").filter(|s| !s.is_empty()) {
        Some(reference) => w.resolve_ref(key, reference).map_err(|_| {
            SandboxError::new(404, format!("No commit found for the ref {reference}"))
        }),
        None => repo
            .branches
            .get(&repo.default_branch)
            .cloned()
            .ok_or_else(SandboxError::not_found),
    }
}

fn content_entry(
    w: &World,
    key: &str,
    at: &str,
    path: &str,
    kind: EntryKind,
    sha: &str,
    size: usize,
) -> Value {
    let full = w.repos.get(key).map(|r| r.full_name()).unwrap_or_default();
    let api = &w.settings.api_base;
    let html = &w.settings.html_base;
    let p = url_escape_path(path);
    let name = path.rsplit('/').next().unwrap_or(path);
    let (t, git_url, html_url, download) = match kind {
        EntryKind::Blob => (
            "file",
            format!("{api}/repos/{full}/git/blobs/{sha}"),
            format!("{html}/{full}/blob/{at}/{p}"),
            json!(format!("{api}/_sandbox/raw/{full}/{at}/{p}")),
        ),
        EntryKind::Tree => (
            "dir",
            format!("{api}/repos/{full}/git/trees/{sha}"),
            format!("{html}/{full}/tree/{at}/{p}"),
            Value::Null,
        ),
    };
    let self_url = format!("{api}/repos/{full}/contents/{p}?ref={at}");
    json!({
        "type": t,
        "size": size,
        "name": name,
        "path": path,
        "sha": sha,
        "url": self_url,
        "git_url": git_url,
        "html_url": html_url,
        "download_url": download,
        "_links": { "self": self_url, "git": git_url, "html": html_url },
    })
}

/// Base64 wrapped at 60 columns with `\n`, exactly as GitHub sends it.
fn github_base64(bytes: &[u8]) -> String {
    let enc = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut out = String::with_capacity(enc.len() + enc.len() / 60 + 1);
    for (i, c) in enc.chars().enumerate() {
        if i > 0 && i % 60 == 0 {
            out.push('\n');
        }
        out.push(c);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

async fn get_contents(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let at = at_ref(&w, &key, &r)?;
    let commit = w.objects.commit(&at).ok_or_else(SandboxError::not_found)?;
    let path = r.param("path").trim_matches('/').to_string();
    if let Some(blob_sha) = commit.files.get(&path) {
        let bytes = w
            .objects
            .blob(blob_sha)
            .ok_or_else(SandboxError::not_found)?;
        let accept = r.accept();
        if accept.contains("raw") {
            let mut resp = (StatusCode::OK, bytes.as_ref().clone()).into_response();
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            return Ok(resp);
        }
        let mut v = content_entry(&w, &key, &at, &path, EntryKind::Blob, blob_sha, bytes.len());
        if let Some(obj) = v.as_object_mut() {
            // Over 1 MB GitHub stops inlining content.
            if bytes.len() > 1024 * 1024 {
                obj.insert("encoding".into(), json!("none"));
                obj.insert("content".into(), json!(""));
            } else {
                obj.insert("encoding".into(), json!("base64"));
                obj.insert("content".into(), json!(github_base64(&bytes)));
            }
        }
        return ok(v);
    }
    let tree = w
        .objects
        .subtree(&commit.tree, &path)
        .ok_or_else(SandboxError::not_found)?;
    let entries = w.objects.tree(&tree).cloned().unwrap_or_default();
    let items: Vec<Value> = entries
        .iter()
        .map(|e| {
            let p = if path.is_empty() {
                e.name.clone()
            } else {
                format!("{path}/{}", e.name)
            };
            let size = match e.kind {
                EntryKind::Blob => w.objects.blob(&e.sha).map(|b| b.len()).unwrap_or(0),
                EntryKind::Tree => 0,
            };
            content_entry(&w, &key, &at, &p, e.kind, &e.sha, size)
        })
        .collect();
    ok(Value::Array(items))
}

async fn get_tree(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    w.repo(&key)?;
    let wanted = r.param("sha");
    // A tree sha, or a commit-ish whose root tree is meant.
    let tree = if w.objects.tree(wanted).is_some() {
        wanted.to_string()
    } else {
        let commit = w.resolve_ref(&key, wanted)?;
        w.objects
            .commit(&commit)
            .map(|c| c.tree.clone())
            .ok_or_else(SandboxError::not_found)?
    };
    let recursive = r
        .q("recursive")
        .is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
    let full = w.repos.get(&key).map(|x| x.full_name()).unwrap_or_default();
    let api = &w.settings.api_base;
    let items: Vec<Value> = w
        .objects
        .walk_tree(&tree, recursive)
        .into_iter()
        .map(|(path, e)| match e.kind {
            EntryKind::Blob => json!({
                "path": path,
                "mode": e.mode(),
                "type": "blob",
                "sha": e.sha,
                "size": w.objects.blob(&e.sha).map(|b| b.len()).unwrap_or(0),
                "url": format!("{api}/repos/{full}/git/blobs/{}", e.sha),
            }),
            EntryKind::Tree => json!({
                "path": path,
                "mode": e.mode(),
                "type": "tree",
                "sha": e.sha,
                "url": format!("{api}/repos/{full}/git/trees/{}", e.sha),
            }),
        })
        .collect();
    ok(json!({
        "sha": tree,
        "url": format!("{api}/repos/{full}/git/trees/{tree}"),
        "tree": items,
        "truncated": false,
    }))
}

async fn get_ref(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let repo = w.repo(&key)?;
    let name = r.param("ref");
    let branch = name
        .strip_prefix("heads/")
        .ok_or_else(SandboxError::not_found)?;
    let sha = repo
        .branches
        .get(branch)
        .ok_or_else(SandboxError::not_found)?;
    let api = format!("{}/repos/{}", w.settings.api_base, repo.full_name());
    ok(json!({
        "ref": format!("refs/heads/{branch}"),
        "node_id": "",
        "url": format!("{api}/git/refs/heads/{branch}"),
        "object": { "type": "commit", "sha": sha, "url": format!("{api}/git/commits/{sha}") },
    }))
}

async fn get_git_commit(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    w.repo(&key)?;
    let v = w.commit_json(&key, r.param("sha"), None);
    match v.get("commit") {
        Some(c) => {
            let mut c = c.clone();
            if let Some(obj) = c.as_object_mut() {
                obj.insert("sha".into(), json!(r.param("sha")));
                obj.insert("parents".into(), v["parents"].clone());
            }
            ok(c)
        }
        None => Err(SandboxError::not_found()),
    }
}

async fn get_blob(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let full = w.repo(&key)?.full_name();
    let sha = r.param("sha");
    let bytes = w.objects.blob(sha).ok_or_else(SandboxError::not_found)?;
    ok(json!({
        "sha": sha,
        "node_id": "",
        "size": bytes.len(),
        "url": format!("{}/repos/{full}/git/blobs/{sha}", w.settings.api_base),
        "content": github_base64(&bytes),
        "encoding": "base64",
    }))
}

fn branch_json(w: &World, key: &str, name: &str, sha: &str) -> Value {
    let mut commit = w.commit_json(key, sha, None);
    if let Some(obj) = commit.as_object_mut() {
        obj.remove("files");
    }
    let full = w.repos.get(key).map(|r| r.full_name()).unwrap_or_default();
    json!({
        "name": name,
        "commit": commit,
        "protected": false,
        "_links": {
            "self": format!("{}/repos/{full}/branches/{name}", w.settings.api_base),
            "html": format!("{}/{full}/tree/{name}", w.settings.html_base),
        },
    })
}

async fn list_branches(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let repo = w.repo(&key)?;
    let items: Vec<Value> = repo
        .branches
        .iter()
        .map(|(name, sha)| json!({ "name": name, "commit": { "sha": sha, "url": format!("{}/repos/{}/commits/{sha}", w.settings.api_base, repo.full_name()) }, "protected": false }))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn get_branch(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let repo = w.repo(&key)?;
    let name = r.param("branch");
    let sha = repo
        .branches
        .get(name)
        .ok_or_else(|| SandboxError::new(404, "Branch not found"))?;
    ok(branch_json(&w, &key, name, sha))
}

async fn list_commits(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let repo = w.repo(&key)?;
    let start = match r.q("sha") {
        Some(x) => w.resolve_ref(&key, x)?,
        None => repo
            .branches
            .get(&repo.default_branch)
            .cloned()
            .ok_or_else(SandboxError::not_found)?,
    };
    let mut shas = w.objects.commits_between("", &start);
    shas.reverse();
    if let Some(path) = r.q("path") {
        let path = path.trim_matches('/');
        shas.retain(|sha| {
            let Some(c) = w.objects.commit(sha) else {
                return false;
            };
            let here = c.files.get(path);
            let before = c
                .parents
                .first()
                .and_then(|p| w.objects.commit(p))
                .and_then(|p| p.files.get(path).cloned());
            here.cloned() != before
        });
    }
    let items: Vec<Value> = shas
        .iter()
        .map(|sha| w.commit_json(&key, sha, None))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn get_commit(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let sha = w.resolve_ref(&key, r.param("ref")).map_err(|_| {
        SandboxError::unprocessable(format!("No commit found for SHA: {}", r.param("ref")))
    })?;
    let parent = w
        .objects
        .commit(&sha)
        .and_then(|c| c.parents.first().cloned())
        .unwrap_or_default();
    let files = w.diff_commits(&parent, &sha);
    ok(w.commit_json(&key, &sha, Some(&files)))
}

/// Full unified diff text (the `application/vnd.github.diff` media type).
pub(crate) fn diff_text(files: &[crate::git::FileChange]) -> String {
    let mut out = String::new();
    for f in files {
        let old = f.previous_filename.as_deref().unwrap_or(&f.filename);
        out.push_str(&format!("diff --git a/{old} b/{}\n", f.filename));
        match f.status {
            "added" => out.push_str("new file mode 100644\n"),
            "removed" => out.push_str("deleted file mode 100644\n"),
            _ => {}
        }
        let short = |s: &Option<String>| {
            s.as_deref()
                .map(|x| x[..7.min(x.len())].to_string())
                .unwrap_or_else(|| "0000000".into())
        };
        out.push_str(&format!(
            "index {}..{}\n",
            short(&f.old_sha),
            short(&f.new_sha)
        ));
        if let Some(p) = &f.patch {
            let a = if f.status == "added" {
                "/dev/null".to_string()
            } else {
                format!("a/{old}")
            };
            let b = if f.status == "removed" {
                "/dev/null".to_string()
            } else {
                format!("b/{}", f.filename)
            };
            out.push_str(&format!("--- {a}\n+++ {b}\n{p}\n"));
        }
    }
    out
}

async fn compare(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let repo = w.repo(&key)?;
    let spec = r.param("basehead");
    let (base_ref, head_ref) = spec
        .split_once("...")
        .or_else(|| spec.split_once(".."))
        .ok_or_else(SandboxError::not_found)?;
    let base = w.resolve_ref(&key, base_ref)?;
    let head = w.resolve_ref(&key, head_ref)?;
    let merge_base = w.objects.merge_base(&base, &head).ok_or_else(|| {
        SandboxError::new(
            404,
            format!("No common ancestor between {base_ref} and {head_ref}."),
        )
    })?;
    let ahead = w.objects.commits_between(&base, &head);
    let behind = w.objects.commits_between(&head, &base);
    let status = match (ahead.len(), behind.len()) {
        (0, 0) => "identical",
        (_, 0) => "ahead",
        (0, _) => "behind",
        _ => "diverged",
    };
    let files = w.diff_commits(&merge_base, &head);
    if r.accept().contains("diff") {
        return Ok((StatusCode::OK, diff_text(&files)).into_response());
    }
    let full = repo.full_name();
    let api = format!("{}/repos/{full}", w.settings.api_base);
    let html = format!("{}/{full}", w.settings.html_base);
    let commits: Vec<Value> = ahead
        .iter()
        .take(250)
        .map(|c| w.commit_json(&key, c, None))
        .collect();
    let file_items: Vec<Value> = files
        .iter()
        .take(300)
        .map(|f| w.file_json(&key, &head, f))
        .collect();
    ok(json!({
        "url": format!("{api}/compare/{base_ref}...{head_ref}"),
        "html_url": format!("{html}/compare/{base_ref}...{head_ref}"),
        "permalink_url": format!("{html}/compare/{}...{}", &base[..7], &head[..7]),
        "diff_url": format!("{html}/compare/{base_ref}...{head_ref}.diff"),
        "patch_url": format!("{html}/compare/{base_ref}...{head_ref}.patch"),
        "base_commit": w.commit_json(&key, &base, None),
        "merge_base_commit": w.commit_json(&key, &merge_base, None),
        "status": status,
        "ahead_by": ahead.len(),
        "behind_by": behind.len(),
        "total_commits": ahead.len(),
        "commits": commits,
        "files": file_items,
    }))
}

async fn list_labels(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let repo = w.repo(&key)?;
    let items: Vec<Value> = repo
        .labels
        .values()
        .map(|l| w.label_json(&key, &l.name))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}
