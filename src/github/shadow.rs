//! Shadow mode's one boundary: every write the client would send (any
//! method but GET) goes to a [`WriteSink`] instead of GitHub, with its full
//! body, and is answered as GitHub would have answered it. Comments get
//! virtual ids, and listing a PR's comments shows the virtual ones after
//! the real ones, so an edit in place finds what shadow "posted" before
//! and the intended writes follow the sequence live mode sends
//! (`docs/shadow.md`). Reads still go to GitHub.
use super::GitHubError;
use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Value, json};

/// Virtual ids start here: far above GitHub's ids, still exact in a
/// JavaScript number.
pub const VIRTUAL_ID_BASE: u64 = 1 << 52;

/// One write sweepgate would have sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntendedWrite {
    /// `owner/name` when the path names a repository.
    pub repository: Option<String>,
    /// The pull request (issue) it is about, when known.
    pub pr_number: Option<u64>,
    pub method: String,
    /// The API path as it would have been sent.
    pub path: String,
    /// The JSON body as it would have been sent (`null` for none).
    pub body: String,
    /// What it is: `comment`, `comment-edit`, `status`, `check-run`,
    /// `check-run-update`, `dispatch`, `cancel`, `label` or `other`.
    pub kind: String,
    /// The virtual (or real) object an edit changes.
    pub target: Option<u64>,
}

/// A stored write and its place in the sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordedWrite {
    /// Increasing; the virtual id of what a creating write made is
    /// [`VIRTUAL_ID_BASE`] + `seq`.
    pub seq: u64,
    /// Unix milliseconds.
    pub at: i64,
    #[serde(flatten)]
    pub write: IntendedWrite,
}

impl RecordedWrite {
    /// The virtual id of the object this write created, if it created one.
    pub fn created_id(&self) -> Option<u64> {
        matches!(self.write.kind.as_str(), "comment" | "check-run")
            .then(|| VIRTUAL_ID_BASE + self.seq)
    }
}

/// Where shadow mode's writes go (the store implements it; the client
/// knows nothing of storage).
#[async_trait]
pub trait WriteSink: Send + Sync + 'static {
    /// Stores `write`, returning it with its sequence number and time.
    async fn record(&self, write: &IntendedWrite) -> Result<RecordedWrite, String>;
    /// The stored write with sequence number `seq`.
    async fn get(&self, seq: u64) -> Result<Option<RecordedWrite>, String>;
    /// A repository's writes about one PR (every PR when `None`), oldest
    /// first.
    async fn writes(
        &self,
        repository: &str,
        pr_number: Option<u64>,
    ) -> Result<Vec<RecordedWrite>, String>;
}

/// The answer GitHub would have sent to a write.
pub(crate) struct Answer {
    pub status: u16,
    pub body: Option<Value>,
}

fn sink_error(method: &str, path: &str, message: String) -> GitHubError {
    GitHubError::Transport {
        method: method.to_owned(),
        path: path.to_owned(),
        message: format!("shadow store: {message}"),
    }
}

/// `/repos/{o}/{r}/…`: the repository and the rest of the path.
fn split_repo(path: &str) -> Option<(String, Vec<&str>)> {
    let path = path.split('?').next().unwrap_or(path);
    let rest = path.strip_prefix("/repos/")?;
    let mut segs = rest.split('/');
    let (o, r) = (segs.next()?, segs.next()?);
    Some((format!("{o}/{r}"), segs.collect()))
}

fn comment_json(
    id: u64,
    repo: &str,
    pr: Option<u64>,
    body: &str,
    login: &str,
    created: i64,
    updated: i64,
) -> Value {
    let time = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .unwrap_or_default()
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    };
    json!({
        "id": id,
        "body": body,
        "user": { "login": login, "type": "Bot" },
        "html_url": format!(
            "https://github.com/{repo}/pull/{}#issuecomment-{id}",
            pr.unwrap_or_default()
        ),
        "author_association": "NONE",
        "created_at": time(created),
        "updated_at": time(updated),
    })
}

/// Classifies a write, stores it, and answers as GitHub would.
pub(crate) async fn intercept(
    sink: &dyn WriteSink,
    login: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<Answer, GitHubError> {
    let err = |m: String| sink_error(method, path, m);
    let (repository, segs) = match split_repo(path) {
        Some((r, s)) => (Some(r), s),
        None => (None, Vec::new()),
    };
    let seg = |i: usize| segs.get(i).copied().unwrap_or("");
    let num = |i: usize| seg(i).parse::<u64>().ok();
    let body_text = |b: Option<&Value>| b.map_or_else(|| "null".to_owned(), Value::to_string);
    let text = body
        .and_then(|b| b.get("body"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let (kind, mut pr, target) = match (method, seg(0), seg(1), seg(2), seg(3)) {
        ("POST", "issues", _, "comments", "") => ("comment", num(1), None),
        ("PATCH", "issues", "comments", _, "") => ("comment-edit", None, num(2)),
        ("POST", "issues", _, "labels", _) | ("DELETE", "issues", _, "labels", _) => {
            ("label", num(1), None)
        }
        ("POST", "statuses", ..) => ("status", None, None),
        ("POST", "check-runs", "", ..) => ("check-run", None, None),
        ("PATCH", "check-runs", ..) => ("check-run-update", None, num(1)),
        ("POST", "actions", "workflows", _, "dispatches") | ("POST", "dispatches", ..) => {
            ("dispatch", None, None)
        }
        ("POST", "actions", "runs", _, "cancel") => ("cancel", None, num(2)),
        _ => ("other", None, None),
    };
    // An edit belongs to the PR of what it edits.
    let mut created_at = None;
    if let Some(t) = target
        && let Some(seq) = t.checked_sub(VIRTUAL_ID_BASE)
        && let Some(orig) = sink.get(seq).await.map_err(err)?
    {
        pr = orig.write.pr_number;
        created_at = Some(orig.at);
    }
    let write = IntendedWrite {
        repository: repository.clone(),
        pr_number: pr,
        method: method.to_owned(),
        path: path.to_owned(),
        body: body_text(body),
        kind: kind.to_owned(),
        target,
    };
    let rec = sink.record(&write).await.map_err(err)?;
    let repo = repository.unwrap_or_default();
    let answer = match kind {
        "comment" => Answer {
            status: 201,
            body: Some(comment_json(
                VIRTUAL_ID_BASE + rec.seq,
                &repo,
                pr,
                text,
                login,
                rec.at,
                rec.at,
            )),
        },
        "comment-edit" => Answer {
            status: 200,
            body: Some(comment_json(
                target.unwrap_or_default(),
                &repo,
                pr,
                text,
                login,
                created_at.unwrap_or(rec.at),
                rec.at,
            )),
        },
        "check-run" => Answer {
            status: 201,
            body: Some(json!({ "id": VIRTUAL_ID_BASE + rec.seq })),
        },
        "check-run-update" => Answer {
            status: 200,
            body: Some(json!({ "id": target.unwrap_or_default() })),
        },
        "status" | "label" => Answer {
            status: 201,
            body: Some(json!({})),
        },
        "cancel" => Answer {
            status: 202,
            body: Some(json!({})),
        },
        // A dispatch answered without run details, as GitHub did before
        // `return_run_details`; anything else: no content.
        _ => Answer {
            status: 204,
            body: None,
        },
    };
    Ok(answer)
}

/// The PR whose comments `path` lists (`GET /repos/o/r/issues/N/comments`).
pub(crate) fn listed_comments_of(path: &str) -> Option<(String, u64)> {
    let (repo, segs) = split_repo(path)?;
    match segs.as_slice() {
        ["issues", n, "comments"] => Some((repo, n.parse().ok()?)),
        _ => None,
    }
}

/// The virtual comments shadow mode wrote on a PR, each with its newest
/// body, oldest first.
pub(crate) async fn virtual_comments(
    sink: &dyn WriteSink,
    login: &str,
    repo: &str,
    pr: u64,
) -> Result<Vec<Value>, GitHubError> {
    let writes = sink
        .writes(repo, Some(pr))
        .await
        .map_err(|m| sink_error("GET", repo, m))?;
    let mut out: Vec<(u64, String, i64, i64)> = Vec::new();
    for w in &writes {
        let body: Value = serde_json::from_str(&w.write.body).unwrap_or(Value::Null);
        let text = body.get("body").and_then(Value::as_str).unwrap_or("");
        match (w.write.kind.as_str(), w.created_id(), w.write.target) {
            ("comment", Some(id), _) => out.push((id, text.to_owned(), w.at, w.at)),
            ("comment-edit", _, Some(t)) => {
                if let Some(c) = out.iter_mut().find(|c| c.0 == t) {
                    c.1 = text.to_owned();
                    c.3 = w.at;
                }
            }
            _ => {}
        }
    }
    Ok(out
        .into_iter()
        .map(|(id, body, c, u)| comment_json(id, repo, Some(pr), &body, login, c, u))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_pr() {
        assert_eq!(
            listed_comments_of("/repos/o/r/issues/7/comments?per_page=100"),
            Some(("o/r".into(), 7))
        );
        assert_eq!(listed_comments_of("/repos/o/r/issues/comments/7"), None);
        assert_eq!(listed_comments_of("/repos/o/r/pulls/7/comments"), None);
    }
}
