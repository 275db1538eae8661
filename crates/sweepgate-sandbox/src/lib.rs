//! The sandbox GitHub: a stateful in-memory GitHub served over real HTTP
//! (axum on 127.0.0.1), used by the tests, by `sweepgate demo` and by the
//! reliability runs. It is never used in production paths.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use sweepgate_sandbox::{Change, PullRequestSpec, Sandbox};
//! let (sandbox, base_url) = Sandbox::start().await?;
//! sandbox.add_org("SemiAnalysisAI");
//! sandbox.add_repo("SemiAnalysisAI", "InferenceX", "main", [("README.md", "hi\n")])?;
//! sandbox.install_app("SemiAnalysisAI");
//! sandbox.commit("SemiAnalysisAI", "InferenceX", "feature", &[Change::write("a.txt", "a\n")], "add a")?;
//! let pr = sandbox.open_pr(PullRequestSpec::new("SemiAnalysisAI", "InferenceX", "feature", "alice"))?;
//! pr.post_comment("bob", "MEMBER", "/help")?;
//! # let _ = base_url; Ok(()) }
//! ```
mod deliveries;
pub mod demo;
mod faults;
mod git;
mod json;
mod ops;
pub mod process;
mod routes;
mod scenario;
mod state;

pub use deliveries::HookAttempt;
pub(crate) use deliveries::{Delivery, DeliveryMode};
pub use faults::{Fault, FaultKind};
pub use git::{hash_object, sha1_hex, unified_diff};
pub use ops::{Change, PullRequestSpec, RunSpec};
pub use scenario::{CheckRunView, CommentView, Pr, StatusView};
pub use state::{RepositoryDispatch, SandboxError, WorkflowDispatch};

use rand::SeedableRng;
use serde_json::Value;
use state::{AccountKind, AppInfo, Clock, Settings, World};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A private key for the sandbox App (PKCS#1 PEM), generated once per
/// process and never written to the repository. The sandbox checks an app
/// JWT's shape and claims, not its signature, so any RSA key serves; the
/// service signs with this one as it would with a real App's key.
pub fn app_key_pem() -> &'static str {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        use rsa::pkcs1::{EncodeRsaPrivateKey, LineEnding};
        let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048)
            .expect("the operating system's random source");
        key.to_pkcs1_pem(LineEnding::LF)
            .expect("an RSA key encodes as PEM")
            .to_string()
    })
}

/// How a sandbox is set up.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    pub app_id: u64,
    pub app_slug: String,
    pub app_name: String,
    pub app_owner: String,
    pub webhook_secret: String,
    /// Base of `html_url`s (`https://github.com` by default, so links in
    /// rendered comments look like the real thing).
    pub html_base: String,
    /// Start of the virtual clock for content timestamps.
    pub clock_start: chrono::DateTime<chrono::Utc>,
    /// Use wall-clock time instead of the virtual clock.
    pub real_time: bool,
    /// Seed of every random choice (tokens, delivery ids).
    pub seed: u64,
    pub delivery: DeliveryMode,
    pub token_lifetime: Duration,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            app_id: 424242,
            app_slug: "sweepgate".into(),
            app_name: "sweepgate".into(),
            app_owner: "SemiAnalysisAI".into(),
            webhook_secret: "sandbox-webhook-secret".into(),
            html_base: "https://github.com".into(),
            clock_start: chrono::DateTime::parse_from_rfc3339("2026-10-14T09:00:00Z")
                .map(|t| t.with_timezone(&chrono::Utc))
                .unwrap_or_default(),
            real_time: false,
            seed: 1,
            delivery: DeliveryMode::Queue,
            token_lifetime: Duration::from_secs(3600),
        }
    }
}

/// One request the sandbox answered.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub seq: u64,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// The JSON body (a string when it was not JSON).
    pub body: Option<Value>,
    pub status: u16,
    /// `none`, `jwt` or `token`.
    pub auth: String,
    pub caller: Option<String>,
    /// The injected fault, when one answered.
    pub fault: Option<String>,
    /// The JSON answer (`None` for an empty or non-JSON one).
    pub response: Option<Value>,
}

pub(crate) struct Shared {
    world: Mutex<World>,
    log: Mutex<Vec<RecordedRequest>>,
    faults: Mutex<faults::Faults>,
    seq: AtomicU64,
}

impl Shared {
    /// A poisoned lock only means a panic elsewhere; the state is still usable.
    pub(crate) fn lock_world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn lock_faults(&self) -> MutexGuard<'_, faults::Faults> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn lock_log(&self) -> MutexGuard<'_, Vec<RecordedRequest>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::SeqCst) + 1
    }
    fn request_count(&self) -> u64 {
        self.seq.load(Ordering::SeqCst)
    }
    fn record(&self, r: RecordedRequest) {
        self.lock_log().push(r);
    }
}

/// A handle to a running sandbox; cheap to clone. The server stops when the
/// last handle is dropped.
#[derive(Clone)]
pub struct Sandbox {
    shared: Arc<Shared>,
    addr: SocketAddr,
    _guard: Arc<ServerGuard>,
}

struct ServerGuard {
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for ServerGuard {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

fn key(owner: &str, repo: &str) -> String {
    World::repo_key(owner, repo)
}

impl Sandbox {
    /// Starts with the default configuration on `127.0.0.1:0`; returns the
    /// handle and the base URL (`http://127.0.0.1:<port>`).
    pub async fn start() -> std::io::Result<(Sandbox, String)> {
        Self::start_with(SandboxConfig::default()).await
    }

    pub async fn start_with(config: SandboxConfig) -> std::io::Result<(Sandbox, String)> {
        Self::bind(config, "127.0.0.1:0").await
    }

    /// Starts on a chosen address (the demo uses a fixed port).
    pub(crate) async fn bind(
        config: SandboxConfig,
        addr: &str,
    ) -> std::io::Result<(Sandbox, String)> {
        Self::bind_with(config, addr, axum::Router::new()).await
    }

    /// Like `bind`, with `extra` routes (the sandbox process's control API)
    /// served beside the GitHub API, outside its request log and faults.
    pub(crate) async fn bind_with(
        config: SandboxConfig,
        addr: &str,
        extra: axum::Router,
    ) -> std::io::Result<(Sandbox, String)> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let base = format!("http://{addr}");
        let settings = Settings {
            api_base: base.clone(),
            html_base: config.html_base.trim_end_matches('/').to_string(),
            webhook_secret: config.webhook_secret.clone(),
            app: AppInfo {
                id: config.app_id,
                slug: config.app_slug.clone(),
                name: config.app_name.clone(),
                client_id: format!("Iv23li{:014x}", config.app_id),
                owner: config.app_owner.clone(),
                grants: None,
            },
            token_lifetime: config.token_lifetime,
        };
        let clock = Clock {
            now: config.clock_start,
            real: config.real_time,
            offset: chrono::Duration::zero(),
        };
        let mut world = World::new(
            settings,
            clock,
            rand::rngs::StdRng::seed_from_u64(config.seed),
        );
        world.outbox.mode = config.delivery.clone();
        world.account_with_kind(&config.app_owner, AccountKind::Organization);
        let shared = Arc::new(Shared {
            world: Mutex::new(world),
            log: Mutex::new(Vec::new()),
            faults: Mutex::new(faults::Faults::default()),
            seq: AtomicU64::new(0),
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let sandbox = Sandbox {
            shared: shared.clone(),
            addr,
            _guard: Arc::new(ServerGuard { shutdown: Some(tx) }),
        };
        let app = routes::router(shared.clone()).merge(extra);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        tokio::spawn(deliveries::run_worker(Arc::downgrade(&shared)));
        Ok((sandbox, base))
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn world(&self) -> MutexGuard<'_, World> {
        self.shared.lock_world()
    }

    pub fn app_id(&self) -> u64 {
        self.world().settings.app.id
    }

    pub fn webhook_secret(&self) -> String {
        self.world().settings.webhook_secret.clone()
    }

    /// `<slug>[bot]`, the login of everything the app creates.
    pub fn bot_login(&self) -> String {
        self.world().settings.app.bot_login()
    }

    // ---- the request log ----

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock_log().clone()
    }

    /// Requests with `method` (any when empty) whose path starts with `path_prefix`.
    pub fn requests_matching(&self, method: &str, path_prefix: &str) -> Vec<RecordedRequest> {
        self.shared
            .lock_log()
            .iter()
            .filter(|r| method.is_empty() || r.method.eq_ignore_ascii_case(method))
            .filter(|r| r.path.starts_with(path_prefix))
            .cloned()
            .collect()
    }

    pub fn clear_requests(&self) {
        self.shared.lock_log().clear();
    }

    // ---- faults ----

    pub fn inject(&self, fault: Fault) {
        self.shared.lock_faults().inject(fault);
    }

    pub fn clear_faults(&self) {
        self.shared.lock_faults().clear();
    }

    /// How many calls a fault has answered so far.
    pub fn faults_injected(&self) -> u64 {
        self.shared.lock_faults().injected
    }

    // ---- deliveries ----

    /// Switches to pushing deliveries to `url` (pending ones go first).
    pub fn deliver_to(&self, url: &str) {
        let mut w = self.world();
        w.outbox.mode = DeliveryMode::Push(url.to_string());
        w.outbox.next_attempt_at = None;
    }

    /// Pushes deliveries to `url` as GitHub does: one attempt each; a
    /// delivery the receiver did not take (an error status, no answer)
    /// stays failed until it is redelivered through the API.
    pub fn deliver_like_github(&self, url: &str) {
        let mut w = self.world();
        w.outbox.mode = DeliveryMode::Push(url.to_string());
        w.outbox.retry_failed = false;
        w.outbox.next_attempt_at = None;
    }

    /// The App's delivery log: every attempt, oldest first.
    pub fn delivery_attempts(&self) -> Vec<HookAttempt> {
        self.world().outbox.attempts.clone()
    }

    /// Switches to keeping deliveries for `take_deliveries`.
    pub fn queue_deliveries(&self) {
        self.world().outbox.mode = DeliveryMode::Queue;
    }

    /// Only these events are delivered (a GitHub App's subscription).
    pub fn subscribe(&self, events: &[&str]) {
        self.world().outbox.subscribed = Some(events.iter().map(|e| e.to_string()).collect());
    }

    /// The deliveries not yet taken or delivered, oldest first.
    pub fn take_deliveries(&self) -> Vec<Delivery> {
        let mut w = self.world();
        let pending: Vec<usize> = w.outbox.pending.drain(..).collect();
        pending
            .iter()
            .filter_map(|i| w.outbox.all.get(*i).cloned())
            .collect()
    }

    /// Every delivery ever produced, with its delivery attempts.
    pub fn all_deliveries(&self) -> Vec<Delivery> {
        self.world().outbox.all.clone()
    }

    pub fn pending_deliveries(&self) -> usize {
        self.world().outbox.pending.len()
    }

    /// Waits until the push worker has delivered everything (or `timeout`).
    pub async fn flush_deliveries(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.pending_deliveries() == 0 {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Advances the virtual clock (e.g. to age a run past a deadline); on
    /// a real clock, shifts what it reads (negative `by` moves it back).
    pub fn advance_clock(&self, by: chrono::Duration) {
        let mut w = self.world();
        if w.clock.real {
            w.clock.offset += by;
        } else {
            w.clock.now += by;
        }
    }

    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.world().clock.peek()
    }
}
