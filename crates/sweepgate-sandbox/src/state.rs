//! The sandbox's world: repositories with git content, issues and pull
//! requests, comments, labels, reviews, checks, statuses, Actions runs,
//! permissions, teams, installations and tokens. Everything behind one
//! mutex; handlers and the scenario API both mutate it through `ops/`.
use super::deliveries::Outbox;
use super::git::ObjectStore;
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use rand::rngs::StdRng;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// An error in GitHub's shape: `{message, documentation_url, status}` (and
/// `errors` for validation failures).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{status} {message}")]
pub struct SandboxError {
    pub status: u16,
    pub message: String,
    pub errors: Option<Value>,
}

impl SandboxError {
    pub(crate) fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            errors: None,
        }
    }
    pub(crate) fn not_found() -> Self {
        Self::new(404, "Not Found")
    }
    /// 422 with one `errors` entry, as GitHub reports a bad field.
    pub(crate) fn validation(resource: &str, field: &str, code: &str) -> Self {
        Self {
            status: 422,
            message: "Validation Failed".into(),
            errors: Some(
                serde_json::json!([{ "resource": resource, "field": field, "code": code }]),
            ),
        }
    }
    pub(crate) fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(422, message)
    }
    pub(crate) fn forbidden_integration() -> Self {
        Self::new(403, "Resource not accessible by integration")
    }
}

pub(crate) type SResult<T> = Result<T, SandboxError>;

pub(crate) fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Content timestamps come from a virtual clock so that commit shas and
/// snapshots are the same on every run; each reading advances one second.
/// A real clock reads the wall clock shifted by `offset`, so a demo can
/// still let time pass (a reviewer's ten minutes) without waiting for it.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    pub now: DateTime<Utc>,
    pub real: bool,
    pub offset: Duration,
}

impl Clock {
    pub(crate) fn tick(&mut self) -> DateTime<Utc> {
        if self.real {
            return Utc::now() + self.offset;
        }
        let t = self.now;
        self.now += Duration::seconds(1);
        t
    }
    pub(crate) fn peek(&self) -> DateTime<Utc> {
        if self.real {
            Utc::now() + self.offset
        } else {
            self.now
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccountKind {
    User,
    Organization,
    Bot,
}

impl AccountKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AccountKind::User => "User",
            AccountKind::Organization => "Organization",
            AccountKind::Bot => "Bot",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Account {
    pub login: String,
    pub id: u64,
    pub kind: AccountKind,
}

#[derive(Debug, Clone)]
pub(crate) struct AppInfo {
    pub id: u64,
    pub slug: String,
    pub name: String,
    pub client_id: String,
    pub owner: String,
    /// What `GET /app` reports as granted instead of the defaults:
    /// `(permissions, events)` (doctor tests).
    pub grants: Option<(serde_json::Value, serde_json::Value)>,
}

impl AppInfo {
    pub(crate) fn bot_login(&self) -> String {
        format!("{}[bot]", self.slug)
    }
}

/// The app that owns check runs and jobs created by GitHub Actions.
pub(crate) const ACTIONS_APP_ID: u64 = 15368;

#[derive(Debug, Clone)]
pub(crate) struct Label {
    pub id: u64,
    pub name: String,
    pub color: String,
    pub description: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Workflow {
    pub id: u64,
    pub name: String,
    /// `.github/workflows/<file>`.
    pub path: String,
    pub state: String,
    /// Whether it declares a `workflow_dispatch` trigger.
    pub dispatchable: bool,
    /// `run-name` template; `${{ inputs.x }}` is substituted on dispatch.
    pub run_name: Option<String>,
    pub created_at: DateTime<Utc>,
    pub next_run_number: u64,
}

impl Workflow {
    pub(crate) fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Permission {
    pub permission: String,
    pub role_name: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Repo {
    pub id: u64,
    pub owner: String,
    pub name: String,
    pub default_branch: String,
    pub private: bool,
    /// Full name of the parent when this repository is a fork.
    pub fork_of: Option<String>,
    pub branches: BTreeMap<String, String>,
    pub issues: BTreeMap<u64, Issue>,
    pub next_number: u64,
    pub labels: BTreeMap<String, Label>,
    pub workflows: BTreeMap<u64, Workflow>,
    pub permissions: BTreeMap<String, Permission>,
    pub created_at: DateTime<Utc>,
    pub pushed_at: DateTime<Utc>,
}

impl Repo {
    pub(crate) fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct PullState {
    pub id: u64,
    /// Key (lower-case full name) of the head repository (a fork or itself).
    pub head_repo: String,
    pub head_ref: String,
    pub head_sha: String,
    pub base_ref: String,
    pub draft: bool,
    pub merged: bool,
    pub merged_at: Option<DateTime<Utc>>,
    pub merged_by: Option<String>,
    pub merge_commit_sha: Option<String>,
    pub maintainer_can_modify: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Issue {
    pub number: u64,
    pub id: u64,
    pub title: String,
    pub body: Option<String>,
    pub user: String,
    pub author_association: String,
    pub state: String,
    pub locked: bool,
    pub labels: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
    pub pull: Option<PullState>,
    pub timeline: Vec<TimelineItem>,
}

/// Rendered at read time, so edited comments show their current body.
#[derive(Debug, Clone)]
pub(crate) enum TimelineItem {
    Comment(u64),
    Review(u64),
    Commit(String),
    Event {
        id: u64,
        event: String,
        actor: String,
        at: DateTime<Utc>,
        extra: Value,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct IssueComment {
    pub id: u64,
    pub repo: String,
    pub number: u64,
    pub user: String,
    pub author_association: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub via_app: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Review {
    pub id: u64,
    pub repo: String,
    pub number: u64,
    pub user: String,
    pub author_association: String,
    pub body: String,
    pub state: String,
    pub commit_id: String,
    pub submitted_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone)]
pub(crate) struct ReviewComment {
    pub id: u64,
    pub review_id: u64,
    pub repo: String,
    pub number: u64,
    pub user: String,
    pub author_association: String,
    pub path: String,
    pub line: Option<u64>,
    pub side: String,
    pub body: String,
    pub commit_id: String,
    pub diff_hunk: String,
    pub created_at: DateTime<Utc>,
    pub in_reply_to: Option<u64>,
}

#[derive(Debug, Clone)]
pub(crate) struct CheckRun {
    pub id: u64,
    pub repo: String,
    pub head_sha: String,
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub started_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub details_url: Option<String>,
    pub external_id: String,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    pub annotations: Vec<Value>,
    pub app_id: u64,
    pub suite_id: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct CommitStatus {
    pub id: u64,
    pub repo: String,
    pub sha: String,
    pub state: String,
    pub description: Option<String>,
    pub target_url: Option<String>,
    pub context: String,
    pub creator: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub(crate) struct WorkflowRun {
    pub id: u64,
    pub repo: String,
    pub workflow_id: u64,
    pub name: String,
    pub display_title: String,
    pub event: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub head_sha: String,
    pub head_branch: String,
    pub head_repo: String,
    pub actor: String,
    pub triggering_actor: String,
    pub run_number: u64,
    pub run_attempt: u64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub run_started_at: DateTime<Utc>,
    pub pull_requests: Vec<u64>,
    pub check_suite_id: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub id: u64,
    pub run_id: u64,
    pub run_attempt: u64,
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub labels: Vec<String>,
    pub runner_name: Option<String>,
    pub check_run_id: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Artifact {
    pub id: u64,
    pub run_id: u64,
    pub repo: String,
    pub name: String,
    pub zip: Arc<Vec<u8>>,
    pub digest: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub expired: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Team {
    pub id: u64,
    pub org: String,
    pub members: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Installation {
    pub id: u64,
    pub account: String,
    /// `None`: every repository of the account; otherwise lower-case keys.
    pub repos: Option<BTreeSet<String>>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub(crate) struct IssuedToken {
    pub installation_id: u64,
    pub expires_at: std::time::SystemTime,
}

/// A `workflow_dispatch` as sweepgate sent it (for assertions).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowDispatch {
    pub repo: String,
    pub workflow_id: u64,
    pub git_ref: String,
    pub inputs: Value,
    pub run_id: u64,
}

/// A `repository_dispatch` as sweepgate sent it (for assertions).
#[derive(Debug, Clone, PartialEq)]
pub struct RepositoryDispatch {
    pub repo: String,
    pub event_type: String,
    pub client_payload: Value,
}

#[derive(Debug)]
pub(crate) struct Ids {
    next: HashMap<&'static str, u64>,
}

impl Ids {
    fn new() -> Self {
        // Realistic magnitudes, so code that assumes small ids is caught.
        let starts: [(&'static str, u64); 17] = [
            ("account", 100_001),
            ("repo", 700_000_001),
            ("issue", 2_100_000_001),
            ("pull", 1_900_000_001),
            ("comment", 2_400_000_001),
            ("label", 6_000_000_001),
            ("review", 2_500_000_001),
            ("review_comment", 1_700_000_001),
            ("check_run", 30_000_000_001),
            ("suite", 28_000_000_001),
            ("status", 33_000_000_001),
            ("run", 18_000_000_001),
            ("job", 48_000_000_001),
            ("artifact", 3_000_000_001),
            ("workflow", 150_000_001),
            ("team", 9_000_001),
            ("event", 15_000_000_001),
        ];
        Self {
            next: starts.into_iter().collect(),
        }
    }
    pub(crate) fn next(&mut self, kind: &'static str) -> u64 {
        let slot = self.next.entry(kind).or_insert(1);
        let id = *slot;
        *slot += 1;
        id
    }
    /// Keeps the counter ahead of an id chosen by a scenario.
    pub(crate) fn bump_past(&mut self, kind: &'static str, id: u64) {
        let slot = self.next.entry(kind).or_insert(1);
        if *slot <= id {
            *slot = id + 1;
        }
    }
}

/// Fixed, non-secret settings of one sandbox.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub api_base: String,
    pub html_base: String,
    pub webhook_secret: String,
    pub app: AppInfo,
    pub token_lifetime: std::time::Duration,
}

pub(crate) struct World {
    pub settings: Settings,
    pub clock: Clock,
    pub rng: StdRng,
    pub ids: Ids,
    pub objects: ObjectStore,
    pub accounts: BTreeMap<String, Account>,
    pub repos: BTreeMap<String, Repo>,
    pub teams: BTreeMap<(String, String), Team>,
    pub installations: BTreeMap<u64, Installation>,
    pub tokens: HashMap<String, IssuedToken>,
    pub user_tokens: HashMap<String, String>,
    pub comments: BTreeMap<u64, IssueComment>,
    pub reviews: BTreeMap<u64, Review>,
    pub review_comments: BTreeMap<u64, ReviewComment>,
    pub check_runs: BTreeMap<u64, CheckRun>,
    pub suites: HashMap<(String, String, u64), u64>,
    pub statuses: Vec<CommitStatus>,
    pub runs: BTreeMap<u64, WorkflowRun>,
    /// Earlier attempts of re-run workflow runs, by (run id, attempt).
    pub run_attempts: BTreeMap<(u64, u64), WorkflowRun>,
    pub jobs: BTreeMap<u64, Job>,
    pub artifacts: BTreeMap<u64, Artifact>,
    pub workflow_dispatches: Vec<WorkflowDispatch>,
    pub repository_dispatches: Vec<RepositoryDispatch>,
    pub outbox: Outbox,
}

impl World {
    pub(crate) fn new(settings: Settings, clock: Clock, rng: StdRng) -> Self {
        let mut w = World {
            settings,
            clock,
            rng,
            ids: Ids::new(),
            objects: ObjectStore::default(),
            accounts: BTreeMap::new(),
            repos: BTreeMap::new(),
            teams: BTreeMap::new(),
            installations: BTreeMap::new(),
            tokens: HashMap::new(),
            user_tokens: HashMap::new(),
            comments: BTreeMap::new(),
            reviews: BTreeMap::new(),
            review_comments: BTreeMap::new(),
            check_runs: BTreeMap::new(),
            suites: HashMap::new(),
            statuses: Vec::new(),
            runs: BTreeMap::new(),
            run_attempts: BTreeMap::new(),
            jobs: BTreeMap::new(),
            artifacts: BTreeMap::new(),
            workflow_dispatches: Vec::new(),
            repository_dispatches: Vec::new(),
            outbox: Outbox::default(),
        };
        let bot = w.settings.app.bot_login();
        w.account_with_kind(&bot, AccountKind::Bot);
        w.account_with_kind("github-actions[bot]", AccountKind::Bot);
        w
    }

    pub(crate) fn now(&mut self) -> DateTime<Utc> {
        self.clock.tick()
    }

    /// The account for a login, created on first use (GitHub logins are
    /// case-insensitive; the first spelling seen is kept).
    pub(crate) fn account(&mut self, login: &str) -> Account {
        let kind = if login.ends_with("[bot]") {
            AccountKind::Bot
        } else {
            AccountKind::User
        };
        self.account_with_kind(login, kind)
    }

    pub(crate) fn account_with_kind(&mut self, login: &str, kind: AccountKind) -> Account {
        let key = login.to_ascii_lowercase();
        if let Some(a) = self.accounts.get_mut(&key) {
            if kind == AccountKind::Organization {
                a.kind = kind;
            }
            return a.clone();
        }
        let id = self.ids.next("account");
        let a = Account {
            login: login.to_string(),
            id,
            kind,
        };
        self.accounts.insert(key, a.clone());
        a
    }

    pub(crate) fn find_account(&self, login: &str) -> Option<&Account> {
        self.accounts.get(&login.to_ascii_lowercase())
    }

    pub(crate) fn repo_key(owner: &str, name: &str) -> String {
        format!(
            "{}/{}",
            owner.to_ascii_lowercase(),
            name.to_ascii_lowercase()
        )
    }

    pub(crate) fn repo(&self, key: &str) -> SResult<&Repo> {
        self.repos.get(key).ok_or_else(SandboxError::not_found)
    }

    pub(crate) fn repo_mut(&mut self, key: &str) -> SResult<&mut Repo> {
        self.repos.get_mut(key).ok_or_else(SandboxError::not_found)
    }

    pub(crate) fn issue(&self, key: &str, number: u64) -> SResult<&Issue> {
        self.repo(key)?
            .issues
            .get(&number)
            .ok_or_else(SandboxError::not_found)
    }

    pub(crate) fn issue_mut(&mut self, key: &str, number: u64) -> SResult<&mut Issue> {
        self.repo_mut(key)?
            .issues
            .get_mut(&number)
            .ok_or_else(SandboxError::not_found)
    }

    pub(crate) fn pull(&self, key: &str, number: u64) -> SResult<(&Issue, &PullState)> {
        let issue = self.issue(key, number)?;
        let pull = issue.pull.as_ref().ok_or_else(SandboxError::not_found)?;
        Ok((issue, pull))
    }

    /// Resolves a branch name, `refs/heads/x`, a tag-less full or
    /// abbreviated sha, or `owner:branch` (a fork in the network).
    pub(crate) fn resolve_ref(&self, key: &str, r: &str) -> SResult<String> {
        let repo = self.repo(key)?;
        if let Some((owner, branch)) = r.split_once(':') {
            let fork = self.repos.values().find(|x| {
                x.owner.eq_ignore_ascii_case(owner)
                    && (x.name.eq_ignore_ascii_case(&repo.name)
                        || x.fork_of
                            .as_deref()
                            .is_some_and(|f| f.eq_ignore_ascii_case(&repo.full_name())))
            });
            return fork
                .and_then(|f| f.branches.get(branch).cloned())
                .ok_or_else(SandboxError::not_found);
        }
        let name = r.strip_prefix("refs/heads/").unwrap_or(r);
        if let Some(sha) = repo.branches.get(name) {
            return Ok(sha.clone());
        }
        if r.len() == 40 && self.objects.commit(r).is_some() {
            return Ok(r.to_string());
        }
        self.objects
            .resolve_prefix(r)
            .ok_or_else(SandboxError::not_found)
    }

    pub(crate) fn installation_for_repo(&self, key: &str) -> Option<&Installation> {
        let repo = self.repos.get(key)?;
        self.installations.values().find(|i| {
            i.account.eq_ignore_ascii_case(&repo.owner)
                && i.repos.as_ref().is_none_or(|set| set.contains(key))
        })
    }

    pub(crate) fn label_color(name: &str) -> String {
        // Stable per name, so screenshots of the demo do not flicker.
        super::git::sha1_hex(name.as_bytes())[..6].to_string()
    }

    /// The open pull requests whose head is `branch` of repository `key`.
    pub(crate) fn prs_with_head(&self, key: &str, branch: &str) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for (rk, repo) in &self.repos {
            for issue in repo.issues.values() {
                if let Some(p) = &issue.pull
                    && issue.state == "open"
                    && p.head_repo == key
                    && p.head_ref == branch
                {
                    out.push((rk.clone(), issue.number));
                }
            }
        }
        out
    }

    /// Numbers of the open PRs of repository `key` whose head is `sha`
    /// (what GitHub puts in `pull_requests` of runs and check suites).
    pub(crate) fn prs_for_sha(&self, key: &str, sha: &str) -> Vec<u64> {
        self.repos
            .get(key)
            .map(|r| {
                r.issues
                    .values()
                    .filter(|i| i.state == "open")
                    .filter_map(|i| i.pull.as_ref().map(|p| (i.number, p)))
                    .filter(|(_, p)| p.head_sha == sha && p.head_repo == key)
                    .map(|(n, _)| n)
                    .collect()
            })
            .unwrap_or_default()
    }
}
