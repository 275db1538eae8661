//! Storage: one trait, two implementations (SQLite, the embedded default, and
//! PostgreSQL for several replicas). SQL lives here and nowhere else.
//!
//! Times are Unix milliseconds (`i64`), which both back ends store natively.
mod batch;
mod body;
mod checkpoint;
pub mod shadow;
mod sql;

use async_trait::async_trait;
use serde::Serialize;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use sweepgate_core::ids::{CommentId, DeliveryId, JobId, PrNumber, RepoName, RunId};
pub use sweepgate_core::sweep::SweepState;

pub use batch::BatchItem;
pub use body::DeliveryBody;
pub use sql::{PgStore, SqliteStore};

/// A shared handle to the configured storage.
pub type Store = Arc<dyn Storage>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached: the caller should answer 503 (the
    /// delivery fails, and the redelivery pass asks GitHub for it again).
    #[error("database unavailable: {0}")]
    Unavailable(#[source] sqlx::Error),
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("unsupported database URL `{0}` (expected sqlite:… or postgres://…)")]
    UnsupportedUrl(String),
    /// A stored value cannot be read back (a damaged compressed body).
    #[error("stored data cannot be read: {0}")]
    Corrupt(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed => StoreError::Unavailable(e),
            other => StoreError::Database(other),
        }
    }
}

/// What the intake decided about a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    Queued,
    Ignored(String),
}

impl DeliveryOutcome {
    /// The stored `outcome` (migration 0008 constrains the column to these).
    pub fn as_str(&self) -> &'static str {
        match self {
            DeliveryOutcome::Queued => "queued",
            DeliveryOutcome::Ignored(_) => "ignored",
        }
    }

    /// The stored `reason`: why an ignored delivery queued nothing.
    pub fn reason(&self) -> Option<&str> {
        match self {
            DeliveryOutcome::Queued => None,
            DeliveryOutcome::Ignored(r) => Some(r),
        }
    }
}

#[derive(Debug, Clone)]
pub struct NewDelivery {
    pub delivery_id: DeliveryId,
    pub event: String,
    pub action: Option<String>,
    pub repository: Option<String>,
    pub installation_id: Option<i64>,
    pub pr_number: Option<i64>,
    pub body: DeliveryBody,
    pub received_at: i64,
}

#[derive(Debug, Clone)]
pub struct NewJob {
    pub kind: String,
    /// Jobs sharing a key run one at a time, in insertion order (per PR).
    pub serial_key: Option<String>,
    pub payload: String,
    pub max_attempts: u32,
    pub run_after: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    New,
    /// The delivery id was seen before; nothing was written.
    Duplicate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct DeliveryRow {
    pub delivery_id: String,
    pub event: String,
    pub action: Option<String>,
    pub repository: Option<String>,
    pub installation_id: Option<i64>,
    pub pr_number: Option<i64>,
    pub outcome: String,
    pub reason: Option<String>,
    pub received_at: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Pending,
    Running,
    Done,
    Dead,
}

impl JobState {
    pub const ALL: [JobState; 4] = [
        JobState::Pending,
        JobState::Running,
        JobState::Done,
        JobState::Dead,
    ];

    /// The stored `state` (migration 0006 constrains the column to these).
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Dead => "dead",
        }
    }
}

impl FromStr for JobState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pending" => Ok(JobState::Pending),
            "running" => Ok(JobState::Running),
            "done" => Ok(JobState::Done),
            "dead" => Ok(JobState::Dead),
            other => Err(format!("unknown job state `{other}`")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct JobRow {
    pub id: i64,
    pub delivery_id: Option<String>,
    pub kind: String,
    pub serial_key: Option<String>,
    pub payload: String,
    pub state: String,
    pub attempts: i64,
    pub max_attempts: i64,
    pub run_after: i64,
    pub lease_token: Option<i64>,
    pub lease_owner: Option<String>,
    pub lease_until: Option<i64>,
    pub last_error: Option<String>,
    pub outcome: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub finished_at: Option<i64>,
}

impl JobRow {
    pub fn state(&self) -> Option<JobState> {
        self.state.parse().ok()
    }
}

/// A job this worker holds until `lease_until`; every later call about it
/// carries the token, so a worker whose lease was taken over cannot finish it.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub job: JobRow,
    pub token: i64,
}

/// The last error of a job whose worker died on every attempt.
pub const CRASHED: &str = "the worker crashed on it";

/// What to do with a job whose attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    RetryAt(i64),
    Dead,
}

/// Something the bot did on a pull request, for the dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewActivity {
    pub repository: String,
    pub pr_number: i64,
    pub head_sha: Option<String>,
    /// `verdict`, `lint`, `command`, `sweep` or `config`.
    pub kind: String,
    pub summary: String,
    /// JSON: the rows of a verdict, the findings of a lint, ...
    pub detail: String,
    pub at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct ActivityRow {
    pub id: i64,
    pub repository: String,
    pub pr_number: i64,
    pub head_sha: Option<String>,
    pub kind: String,
    pub summary: String,
    pub detail: String,
    pub at: i64,
}

/// A pull request the bot acted on, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct PrSummary {
    pub repository: String,
    pub pr_number: i64,
    pub events: i64,
    pub last_at: i64,
}

/// Deliveries seen per installation and repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct InstallationSummary {
    pub installation_id: Option<i64>,
    pub repository: Option<String>,
    pub deliveries: i64,
    pub last_at: i64,
}

/// A sweep sweepgate dispatched, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct SweepRow {
    pub sweep_id: String,
    pub repository: String,
    pub installation_id: Option<i64>,
    pub pr_number: i64,
    pub head_sha: String,
    pub base_sha: String,
    pub primary_label: String,
    pub modifiers: String,
    pub matrix: String,
    #[serde(skip)]
    pub token_sha256: String,
    pub expires_at: i64,
    #[sqlx(try_from = "String")]
    pub state: SweepState,
    pub run_id: Option<i64>,
    pub conclusion: Option<String>,
    pub reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// When GitHub accepted its dispatch request (or its run was found):
    /// a sweep stored without it may never have been sent.
    pub dispatch_sent_at: Option<i64>,
}

impl SweepRow {
    pub(crate) fn is_open(&self) -> bool {
        self.state.is_open()
    }
}

/// The statuses a sweep job is stored with, in the order a row moves
/// through them (migration 0008 constrains `sweep_jobs.status` to these).
pub const SWEEP_JOB_STATUSES: [&str; 3] = ["queued", "in_progress", "completed"];

/// One job of a dispatched sweep's run, as the newest event left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct SweepJob {
    pub sweep_id: String,
    /// The job's name (`single-node 8k1k / …`), unique within a run.
    pub name: String,
    pub attempt: i64,
    /// One of [`SWEEP_JOB_STATUSES`].
    pub status: String,
    pub conclusion: Option<String>,
    pub updated_at: i64,
}

/// A change of a sweep's state; `None` fields keep their value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepUpdate<'a> {
    pub state: Option<SweepState>,
    pub run_id: Option<i64>,
    pub conclusion: Option<&'a str>,
    pub reason: Option<&'a str>,
    /// A new matrix token's digest (a dispatch resumed after a crash).
    pub token_sha256: Option<&'a str>,
}

/// A pull request's head as a delivery (or the verifier) recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct HeadRecord {
    pub repository: String,
    pub pr_number: i64,
    pub head_sha: String,
    /// GitHub's time of the change (Unix ms), on the clock of comment times.
    pub pushed_at: i64,
    pub received_at: i64,
    /// The delivery id, or `observed:<sha>` for a head the verifier read.
    pub source: String,
}

/// The run pinned on a PR (`/use`, `/reuse-sweep-run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub run: RunId,
    pub by: String,
    /// The command's comment: the pin of a later command wins.
    pub command_comment: Option<CommentId>,
}

/// What a staging callback needs to edit the command's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StagingReply {
    pub command_comment: Option<CommentId>,
    pub run: RunId,
}

/// A staging request is sent once per run attempt and reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StagingKey {
    pub run: RunId,
    pub attempt: u64,
    pub reply: CommentId,
}

/// One thing an author wrote, as recorded (`docs/contracts.md` §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthoredEntry<'a> {
    /// The command lines of a comment (none: its author removed them).
    Commands {
        comment: CommentId,
        lines: &'a [String],
    },
    /// The SHA-256 of a sign-off body.
    Signoff { url: &'a str, body_sha256: &'a str },
}

/// A PR's verifier runs caused by one actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifierRunsOf<'a> {
    pub repo: &'a RepoName,
    pub pr: PrNumber,
    /// Lower-cased login.
    pub actor: &'a str,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QueueCounts {
    pub pending: i64,
    pub running: i64,
    pub done: i64,
    pub dead: i64,
}

#[async_trait]
pub trait Storage: Send + Sync + 'static {
    fn backend(&self) -> Backend;

    /// Applies this back end's migrations.
    async fn migrate(&self) -> Result<(), StoreError>;
    /// Reachable, and every migration applied.
    async fn ready(&self) -> Result<bool, StoreError>;

    /// Stores the delivery and, if given, its job in one transaction.
    async fn record_delivery(
        &self,
        delivery: &NewDelivery,
        outcome: &DeliveryOutcome,
        job: Option<&NewJob>,
    ) -> Result<Inserted, StoreError>;
    /// Stores each delivery and its job as [`Self::record_delivery`] would,
    /// all in one transaction: one result per item, in order. `Err` when
    /// the batch as a whole failed (nothing of it is stored); an item the
    /// database refuses fails alone.
    async fn record_deliveries(
        &self,
        items: &[BatchItem],
    ) -> Result<Vec<Result<Inserted, StoreError>>, StoreError>;
    async fn delivery(&self, id: &DeliveryId) -> Result<Option<DeliveryRow>, StoreError>;
    async fn delivery_body(&self, id: &DeliveryId) -> Result<Option<String>, StoreError>;
    async fn recent_deliveries(&self, limit: i64) -> Result<Vec<DeliveryRow>, StoreError>;
    async fn pr_deliveries(
        &self,
        repository: &str,
        pr: i64,
        limit: i64,
    ) -> Result<Vec<DeliveryRow>, StoreError>;
    async fn installations(&self) -> Result<Vec<InstallationSummary>, StoreError>;

    async fn record_activity(&self, a: &NewActivity) -> Result<i64, StoreError>;
    /// A PR's activity, oldest first.
    async fn pr_activity(
        &self,
        repository: &str,
        pr: i64,
        limit: i64,
    ) -> Result<Vec<ActivityRow>, StoreError>;
    async fn activity(&self, id: i64) -> Result<Option<ActivityRow>, StoreError>;
    /// A PR's newest activity of `kind`.
    async fn last_activity(
        &self,
        repository: &str,
        pr: i64,
        kind: &str,
    ) -> Result<Option<ActivityRow>, StoreError>;
    async fn recent_prs(&self, limit: i64) -> Result<Vec<PrSummary>, StoreError>;

    async fn enqueue(&self, job: &NewJob, now: i64) -> Result<JobId, StoreError>;
    /// Claims the oldest runnable job: pending and due, or running with an
    /// expired lease, and the first unfinished job of its serial key.
    async fn claim(
        &self,
        owner: &str,
        now: i64,
        lease: Duration,
    ) -> Result<Option<Claimed>, StoreError>;
    async fn extend_lease(&self, claimed: &Claimed, until: i64) -> Result<bool, StoreError>;
    async fn complete(
        &self,
        claimed: &Claimed,
        now: i64,
        outcome: &str,
    ) -> Result<bool, StoreError>;
    async fn fail(
        &self,
        claimed: &Claimed,
        now: i64,
        error: &str,
        next: AfterFailure,
    ) -> Result<bool, StoreError>;
    /// Dead-letters every job whose lease expired on its last attempt (its
    /// worker died with it, every time): [`CRASHED`]. The number buried.
    async fn bury_crashed(&self, now: i64) -> Result<u64, StoreError>;
    /// Gives the job back without counting the attempt (shutdown).
    async fn release(&self, claimed: &Claimed, now: i64) -> Result<bool, StoreError>;
    /// Puts a dead-lettered job back in the queue with fresh attempts.
    async fn retry_dead(&self, id: JobId, now: i64) -> Result<bool, StoreError>;
    async fn job(&self, id: JobId) -> Result<Option<JobRow>, StoreError>;
    async fn jobs(&self, state: Option<JobState>, limit: i64) -> Result<Vec<JobRow>, StoreError>;
    async fn jobs_for_delivery(&self, id: &DeliveryId) -> Result<Vec<JobRow>, StoreError>;
    async fn queue_counts(&self) -> Result<QueueCounts, StoreError>;

    /// Stores a new sweep; `false` when its id exists (nothing written).
    async fn create_sweep(&self, sweep: &SweepRow) -> Result<bool, StoreError>;
    async fn sweep(&self, id: &str) -> Result<Option<SweepRow>, StoreError>;
    /// A PR's sweeps, oldest first.
    async fn pr_sweeps(&self, repository: &str, pr: i64) -> Result<Vec<SweepRow>, StoreError>;
    /// Every sweep not yet completed or cancelled.
    async fn open_sweeps(&self) -> Result<Vec<SweepRow>, StoreError>;
    /// The sweep whose dispatched run is `run_id`, in any state.
    async fn sweep_by_run(
        &self,
        repository: &str,
        run_id: i64,
    ) -> Result<Option<SweepRow>, StoreError>;
    /// Records a job's state unless the stored one is newer (a later
    /// attempt, or a later status of the same attempt); `true` when written.
    async fn record_sweep_job(&self, job: &SweepJob) -> Result<bool, StoreError>;
    /// A sweep's jobs by name.
    async fn sweep_jobs(&self, sweep_id: &str) -> Result<Vec<SweepJob>, StoreError>;
    async fn update_sweep(
        &self,
        id: &str,
        change: &SweepUpdate<'_>,
        now: i64,
    ) -> Result<bool, StoreError>;

    /// Records a head; `false` when its source was recorded before.
    async fn record_head(&self, head: &HeadRecord) -> Result<bool, StoreError>;
    /// A PR's recorded heads, oldest first (by GitHub's time).
    async fn pr_heads(&self, repository: &str, pr: i64) -> Result<Vec<HeadRecord>, StoreError>;

    /// The run pinned on the PR.
    async fn pin(&self, repo: &RepoName, pr: PrNumber) -> Result<Option<Pin>, StoreError>;
    /// Pins `pin.run` unless a later command's pin is stored (one
    /// statement, so racing replicas agree); `true` when written.
    async fn put_pin(
        &self,
        repo: &RepoName,
        pr: PrNumber,
        pin: &Pin,
        now: i64,
    ) -> Result<bool, StoreError>;

    /// Records that GitHub accepted the sweep's dispatch request.
    async fn mark_dispatch_sent(&self, sweep_id: &str, now: i64) -> Result<bool, StoreError>;

    async fn staging_reply(&self, reply: CommentId) -> Result<Option<StagingReply>, StoreError>;
    async fn put_staging_reply(
        &self,
        reply: CommentId,
        facts: &StagingReply,
        now: i64,
    ) -> Result<(), StoreError>;
    async fn staging_sent(&self, key: &StagingKey) -> Result<bool, StoreError>;
    async fn mark_staging_sent(&self, key: &StagingKey, now: i64) -> Result<(), StoreError>;

    /// The head a fork PR's sweep is bound to.
    async fn fork_binding(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Option<String>, StoreError>;
    async fn bind_fork(
        &self,
        repo: &RepoName,
        pr: PrNumber,
        head_sha: &str,
        now: i64,
    ) -> Result<(), StoreError>;

    /// The digest of the verdict check run published on `head_sha`.
    async fn published_check_run(
        &self,
        repo: &RepoName,
        head_sha: &str,
    ) -> Result<Option<String>, StoreError>;
    async fn record_published_check_run(
        &self,
        repo: &RepoName,
        head_sha: &str,
        digest: &str,
        now: i64,
    ) -> Result<(), StoreError>;

    /// How many verifier runs the actor caused on the PR since `since`.
    async fn verifier_runs_since(
        &self,
        of: &VerifierRunsOf<'_>,
        since: i64,
    ) -> Result<u64, StoreError>;
    /// Records a run at `at` and forgets the actor's runs before `since`.
    async fn record_verifier_run(
        &self,
        of: &VerifierRunsOf<'_>,
        at: i64,
        since: i64,
    ) -> Result<(), StoreError>;

    /// Comment id → the command lines its author last wrote.
    async fn authored_commands(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Vec<(CommentId, Vec<String>)>, StoreError>;
    /// Sign-off URL → SHA-256 of the body its author last wrote.
    async fn authored_signoffs(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Vec<(String, String)>, StoreError>;
    /// Records what an author wrote (a comment's command lines, or a
    /// sign-off's digest), replacing the earlier record of the same.
    async fn put_authored(
        &self,
        repo: &RepoName,
        pr: PrNumber,
        entry: &AuthoredEntry<'_>,
        now: i64,
    ) -> Result<(), StoreError>;

    /// The last valid repository configuration's text.
    async fn last_valid_config(&self, repo: &RepoName) -> Result<Option<String>, StoreError>;
    async fn keep_valid_config(
        &self,
        repo: &RepoName,
        text: &str,
        now: i64,
    ) -> Result<(), StoreError>;

    /// The key named `name`, stored as `fresh_hex` unless one exists; the
    /// stored one either way (replicas racing to make it agree).
    async fn signing_key(
        &self,
        name: &str,
        fresh_hex: &str,
        now: i64,
    ) -> Result<String, StoreError>;
}

/// Durability of SQLite commits (`docs/operations.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqliteSync {
    /// WAL + `synchronous=NORMAL`: a commit survives a crash of the process.
    #[default]
    Normal,
    /// WAL + `synchronous=FULL`: a commit also survives power loss.
    Full,
}

impl SqliteSync {
    /// Each durability by the name the command line and the server file use.
    pub const BY_NAME: [(&'static str, SqliteSync); 2] =
        [("normal", SqliteSync::Normal), ("full", SqliteSync::Full)];
}

impl FromStr for SqliteSync {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::BY_NAME
            .into_iter()
            .find_map(|(name, sync)| (name == s).then_some(sync))
            .ok_or_else(|| format!("unknown SQLite durability `{s}` (normal or full)"))
    }
}

/// Opens the store named by `url` (`sqlite:path`, `sqlite::memory:`,
/// `postgres://…`) without applying migrations.
pub async fn open(url: &str, sync: SqliteSync) -> Result<Store, StoreError> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url, sync).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PgStore::open(url).await?))
    } else {
        Err(StoreError::UnsupportedUrl(url.to_owned()))
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
