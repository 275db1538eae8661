//! Webhook payload structs: only the fields sweepgate reads.
use serde::Deserialize;
use sweepgate_core::ids::{CommentId, PrNumber, RunId};

#[derive(Debug, Clone, Deserialize, Default)]
pub(crate) struct Common {
    pub action: Option<String>,
    pub repository: Option<Repository>,
    pub installation: Option<InstallationRef>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct InstallationRef {
    pub id: u64,
}

#[derive(Debug, Clone, Deserialize, Default)]
pub struct User {
    #[serde(default)]
    pub login: String,
    #[serde(default)]
    pub id: u64,
    #[serde(rename = "type", default)]
    pub kind: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Repository {
    #[serde(default)]
    pub full_name: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub owner: Option<User>,
    #[serde(default)]
    pub default_branch: Option<String>,
    #[serde(default)]
    pub fork: bool,
    #[serde(default)]
    pub html_url: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Default)]
pub struct Label {
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GitRef {
    #[serde(rename = "ref", default)]
    pub ref_name: String,
    #[serde(default)]
    pub sha: String,
    #[serde(default)]
    pub repo: Option<Repository>,
    #[serde(default)]
    pub label: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequest {
    pub number: PrNumber,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub labels: Vec<Label>,
    pub head: Option<GitRef>,
    pub base: Option<GitRef>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub merged: Option<bool>,
    #[serde(default)]
    pub author_association: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    /// GitHub's time of the PR's last change (for `synchronize`: the push).
    #[serde(default)]
    pub updated_at: Option<String>,
}

impl PullRequest {
    /// The head branch lives in another repository than the base. A head
    /// repository GitHub no longer shows (a deleted fork) is a fork: it
    /// fails closed (`docs/contracts.md` §3).
    pub(crate) fn is_fork(&self) -> bool {
        let name = |r: &Option<GitRef>| {
            r.as_ref()
                .and_then(|g| g.repo.as_ref())
                .map(|r| r.full_name.clone())
        };
        match (name(&self.head), name(&self.base)) {
            (Some(h), Some(b)) => !h.eq_ignore_ascii_case(&b),
            (None, _) => true,
            (Some(_), None) => false,
        }
    }
}

/// `null` where GitHub sends it for an empty list or object reads as the
/// empty value (issue 18, item 15).
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A list whose items GitHub may send as `null` (a `workflow_job`'s
/// labels): the nulls are dropped.
fn list_without_nulls<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let items: Option<Vec<Option<T>>> = Option::deserialize(d)?;
    Ok(items.unwrap_or_default().into_iter().flatten().collect())
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequestEvent {
    pub action: String,
    pub number: Option<PrNumber>,
    pub pull_request: PullRequest,
    #[serde(default)]
    pub label: Option<Label>,
    #[serde(default)]
    pub sender: Option<User>,
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub after: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    pub number: PrNumber,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub user: Option<User>,
    /// Present only when the issue is a pull request.
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
    #[serde(default)]
    pub labels: Vec<Label>,
    #[serde(default)]
    pub draft: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Comment {
    pub id: CommentId,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub author_association: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    /// Review comments only.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub commit_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Default)]
pub struct Changes {
    #[serde(default)]
    pub body: Option<ChangedText>,
}

#[derive(Debug, Clone, Deserialize, Default)]
pub struct ChangedText {
    #[serde(default)]
    pub from: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct IssueCommentEvent {
    pub action: String,
    pub issue: Issue,
    pub comment: Comment,
    #[serde(default)]
    pub changes: Option<Changes>,
    #[serde(default)]
    pub sender: Option<User>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Review {
    pub id: CommentId,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub author_association: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub commit_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequestReviewEvent {
    pub action: String,
    pub review: Review,
    pub pull_request: PullRequest,
    #[serde(default)]
    pub changes: Option<Changes>,
    #[serde(default)]
    pub sender: Option<User>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequestReviewCommentEvent {
    pub action: String,
    pub comment: Comment,
    pub pull_request: PullRequest,
    #[serde(default)]
    pub changes: Option<Changes>,
    #[serde(default)]
    pub sender: Option<User>,
}

/// A pull request as referenced from check runs and workflow runs.
#[derive(Debug, Clone, Deserialize)]
pub struct PrRef {
    pub number: PrNumber,
    #[serde(default)]
    pub head: Option<GitRef>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CheckRun {
    pub id: u64,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub head_sha: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub pull_requests: Vec<PrRef>,
    #[serde(default)]
    pub html_url: Option<String>,
    /// For an Actions job: `…/actions/runs/<run>/job/<job>`.
    #[serde(default)]
    pub details_url: Option<String>,
    #[serde(default)]
    pub external_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CheckRunEvent {
    pub action: String,
    pub check_run: CheckRun,
    #[serde(default)]
    pub sender: Option<User>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowRun {
    pub id: RunId,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub head_sha: String,
    #[serde(default)]
    pub head_branch: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub event: Option<String>,
    #[serde(default)]
    pub display_title: Option<String>,
    #[serde(default)]
    pub run_attempt: Option<u64>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub pull_requests: Vec<PrRef>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowRunEvent {
    pub action: String,
    pub workflow_run: WorkflowRun,
    #[serde(default)]
    pub sender: Option<User>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowJob {
    pub id: u64,
    pub run_id: RunId,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub head_sha: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub run_attempt: Option<u64>,
    #[serde(default, deserialize_with = "list_without_nulls")]
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowJobEvent {
    pub action: String,
    pub workflow_job: WorkflowJob,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RepositoryDispatchEvent {
    /// The dispatch's `event_type`.
    #[serde(default)]
    pub action: String,
    #[serde(default)]
    pub branch: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub client_payload: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub sender: Option<User>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PushCommit {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub message: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PushEvent {
    #[serde(rename = "ref", default)]
    pub ref_name: String,
    #[serde(default)]
    pub before: String,
    #[serde(default)]
    pub after: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub commits: Vec<PushCommit>,
    #[serde(default)]
    pub head_commit: Option<PushCommit>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct InstallationEvent {
    #[serde(default)]
    pub action: String,
    #[serde(default)]
    pub installation: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PingEvent {
    #[serde(default)]
    pub zen: Option<String>,
    #[serde(default)]
    pub hook_id: Option<u64>,
}
