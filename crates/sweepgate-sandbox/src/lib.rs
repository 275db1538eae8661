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
mod state;

pub(crate) use deliveries::{Delivery, DeliveryMode};
pub use faults::{Fault, FaultKind};
pub use git::{hash_object, sha1_hex, unified_diff};
pub use ops::{Change, PullRequestSpec, RunSpec};
pub use state::{RepositoryDispatch, SandboxError, WorkflowDispatch};

use rand::SeedableRng;
use serde_json::Value;
use state::{AccountKind, AppInfo, Clock, Settings, World};
use std::collections::BTreeSet;
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
}

/// A comment as tests see it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommentView {
    pub id: u64,
    pub user: String,
    pub author_association: String,
    pub body: String,
    pub by_app: bool,
    pub created_at: String,
    pub updated_at: String,
}

/// A check run as tests see it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRunView {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    pub annotations: Vec<Value>,
    pub app_id: u64,
}

/// A commit status as tests see it.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusView {
    pub sha: String,
    pub state: String,
    pub context: String,
    pub description: Option<String>,
    pub target_url: Option<String>,
    pub creator: String,
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
            },
            token_lifetime: config.token_lifetime,
        };
        let clock = Clock {
            now: config.clock_start,
            real: config.real_time,
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

    // ---- accounts, repositories, content ----

    pub fn add_org(&self, login: &str) {
        self.world()
            .account_with_kind(login, AccountKind::Organization);
    }

    pub fn add_user(&self, login: &str) {
        self.world().account(login);
    }

    /// A repository with one initial commit holding `files`; returns its sha.
    pub fn add_repo<P, C>(
        &self,
        owner: &str,
        name: &str,
        default_branch: &str,
        files: impl IntoIterator<Item = (P, C)>,
    ) -> Result<String, SandboxError>
    where
        P: Into<String>,
        C: Into<Vec<u8>>,
    {
        let files = files
            .into_iter()
            .map(|(p, c)| (p.into(), c.into()))
            .collect();
        self.world().add_repo(owner, name, default_branch, files)
    }

    /// Makes a repository private (invisible to installations elsewhere).
    pub fn set_private(&self, owner: &str, repo: &str, private: bool) -> Result<(), SandboxError> {
        self.world().repo_mut(&key(owner, repo))?.private = private;
        Ok(())
    }

    /// A fork of `owner/repo` under `fork_owner` (for fork PRs).
    pub fn fork(&self, owner: &str, repo: &str, fork_owner: &str) -> Result<(), SandboxError> {
        self.world()
            .add_fork(&key(owner, repo), fork_owner)
            .map(|_| ())
    }

    pub fn create_branch(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
        from: &str,
    ) -> Result<String, SandboxError> {
        self.world().create_branch(&key(owner, repo), branch, from)
    }

    /// Commits on `branch` (created from the default branch if missing),
    /// authored by the repository owner; sends `synchronize` to open PRs
    /// with that head. Returns the new sha.
    pub fn commit(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
        changes: &[Change],
        message: &str,
    ) -> Result<String, SandboxError> {
        self.commit_as(owner, repo, branch, changes, message, owner)
    }

    pub fn commit_as(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
        changes: &[Change],
        message: &str,
        author: &str,
    ) -> Result<String, SandboxError> {
        self.world()
            .commit_on(&key(owner, repo), branch, changes, message, author)
    }

    pub fn branch_sha(&self, owner: &str, repo: &str, branch: &str) -> Option<String> {
        self.world()
            .repos
            .get(&key(owner, repo))?
            .branches
            .get(branch)
            .cloned()
    }

    /// The bytes of `path` at `reference`, as a test oracle.
    pub fn file_at(&self, owner: &str, repo: &str, reference: &str, path: &str) -> Option<Vec<u8>> {
        let w = self.world();
        let sha = w.resolve_ref(&key(owner, repo), reference).ok()?;
        let blob = w.objects.commit(&sha)?.files.get(path)?.clone();
        w.objects.blob(&blob).map(|b| b.as_ref().clone())
    }

    // ---- the app ----

    /// Installs the app on every repository of `account`; returns the id.
    pub fn install_app(&self, account: &str) -> u64 {
        self.install_app_on(account, None)
    }

    /// Installs on selected repositories (`None`: all) of `account`.
    pub(crate) fn install_app_on(&self, account: &str, repos: Option<&[&str]>) -> u64 {
        let mut w = self.world();
        if let Some(existing) = w
            .installations
            .values()
            .find(|i| i.account.eq_ignore_ascii_case(account))
        {
            return existing.id;
        }
        let id = 60_000_000 + w.installations.len() as u64 + 1;
        let created_at = w.now();
        w.account(account);
        let repos = repos.map(|names| {
            names
                .iter()
                .map(|n| key(account, n))
                .collect::<BTreeSet<_>>()
        });
        w.installations.insert(
            id,
            state::Installation {
                id,
                account: account.to_string(),
                repos,
                created_at,
            },
        );
        id
    }

    /// An installation token without the JWT dance (for tests that call
    /// the sandbox directly).
    pub fn issue_token(&self, installation_id: u64) -> Result<String, SandboxError> {
        let mut w = self.world();
        if !w.installations.contains_key(&installation_id) {
            return Err(SandboxError::not_found());
        }
        let token = format!(
            "ghs_sandbox{}",
            sha1_hex(&rand::Rng::random::<[u8; 16]>(&mut w.rng))
        );
        let expires_at = std::time::SystemTime::now() + w.settings.token_lifetime;
        w.tokens.insert(
            token.clone(),
            state::IssuedToken {
                installation_id,
                expires_at,
            },
        );
        Ok(token)
    }

    /// A well-formed RS256 JWT for this app with a dummy signature: the
    /// sandbox checks shape and claims, not the signature, so tests can
    /// exercise the token exchange without a private key.
    pub fn forge_app_jwt(&self) -> String {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let now = chrono::Utc::now().timestamp();
        let header = serde_json::json!({ "alg": "RS256", "typ": "JWT" });
        let claims = serde_json::json!({ "iat": now - 60, "exp": now + 540, "iss": self.app_id().to_string() });
        format!(
            "{}.{}.{}",
            b64.encode(header.to_string()),
            b64.encode(claims.to_string()),
            b64.encode([0x5au8; 256])
        )
    }

    /// Every installation token issued so far (to look for them in logs).
    pub fn issued_tokens(&self) -> Vec<String> {
        self.world().tokens.keys().cloned().collect()
    }

    /// Expires every issued installation token (to test renewal).
    pub fn expire_tokens(&self) {
        for t in self.world().tokens.values_mut() {
            t.expires_at = std::time::SystemTime::UNIX_EPOCH;
        }
    }

    /// A personal token acting as `login` (the demo's "act as a user").
    pub fn user_token(&self, login: &str) -> String {
        let mut w = self.world();
        w.account(login);
        let token = format!("ghp_{}", &sha1_hex(login.as_bytes())[..36]);
        w.user_tokens.insert(token.clone(), login.to_string());
        token
    }

    // ---- people and permissions ----

    /// Sets the collaborator permission (`admin|write|read|none`) and role
    /// (`admin|maintain|write|triage|read`).
    pub fn set_permission(
        &self,
        owner: &str,
        repo: &str,
        user: &str,
        permission: &str,
        role_name: &str,
    ) -> Result<(), SandboxError> {
        let mut w = self.world();
        w.account(user);
        w.repo_mut(&key(owner, repo))?.permissions.insert(
            user.to_ascii_lowercase(),
            state::Permission {
                permission: permission.into(),
                role_name: role_name.into(),
            },
        );
        Ok(())
    }

    /// Adds `user` to `org/team` with role `member` or `maintainer`.
    pub fn add_team_member(&self, org: &str, team: &str, user: &str, role: &str) {
        let mut w = self.world();
        w.account_with_kind(org, AccountKind::Organization);
        w.account(user);
        let k = (org.to_ascii_lowercase(), team.to_ascii_lowercase());
        if !w.teams.contains_key(&k) {
            let id = w.ids.next("team");
            w.teams.insert(
                k.clone(),
                state::Team {
                    id,
                    org: org.to_string(),
                    members: Default::default(),
                },
            );
        }
        if let Some(t) = w.teams.get_mut(&k) {
            t.members
                .insert(user.to_ascii_lowercase(), role.to_string());
        }
    }

    pub fn remove_team_member(&self, org: &str, team: &str, user: &str) {
        let mut w = self.world();
        if let Some(t) = w
            .teams
            .get_mut(&(org.to_ascii_lowercase(), team.to_ascii_lowercase()))
        {
            t.members.remove(&user.to_ascii_lowercase());
        }
    }

    // ---- pull requests and conversation ----

    pub fn open_pr(&self, spec: PullRequestSpec) -> Result<Pr, SandboxError> {
        let (owner, repo) = (spec.owner.clone(), spec.repo.clone());
        let number = self.world().open_pr(spec)?;
        Ok(Pr {
            sandbox: self.clone(),
            owner,
            repo,
            number,
        })
    }

    /// A handle to an existing PR.
    pub fn pr(&self, owner: &str, repo: &str, number: u64) -> Pr {
        Pr {
            sandbox: self.clone(),
            owner: owner.into(),
            repo: repo.into(),
            number,
        }
    }

    pub fn post_comment(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        user: &str,
        association: &str,
        body: &str,
    ) -> Result<u64, SandboxError> {
        self.world()
            .add_comment(&key(owner, repo), number, user, association, body, false)
    }

    /// Edits a comment as `sender` (sends `issue_comment` `edited`).
    pub fn edit_comment(
        &self,
        comment_id: u64,
        sender: &str,
        body: &str,
    ) -> Result<(), SandboxError> {
        self.world().edit_comment(comment_id, body, sender)
    }

    pub(crate) fn add_label(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        label: &str,
        by: &str,
    ) -> Result<(), SandboxError> {
        self.world()
            .add_labels(&key(owner, repo), number, &[label.to_string()], by)
    }

    pub(crate) fn remove_label(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        label: &str,
        by: &str,
    ) -> Result<(), SandboxError> {
        self.world()
            .remove_label(&key(owner, repo), number, label, by)
    }

    // ---- checks and statuses ----

    /// A check run created by GitHub Actions (not by the app).
    pub fn add_check_run(
        &self,
        owner: &str,
        repo: &str,
        sha: &str,
        name: &str,
        conclusion: Option<&str>,
    ) -> Result<u64, SandboxError> {
        let mut body = serde_json::json!({ "name": name, "head_sha": sha });
        if let (Some(c), Some(obj)) = (conclusion, body.as_object_mut()) {
            obj.insert("conclusion".into(), Value::String(c.into()));
        }
        self.world().create_check_run(
            &key(owner, repo),
            &body,
            state::ACTIONS_APP_ID,
            "github-actions[bot]",
        )
    }

    /// Creates a check run from a full REST body (`details_url`, status,
    /// output…) as GitHub Actions would.
    pub fn add_check_run_json(
        &self,
        owner: &str,
        repo: &str,
        body: &Value,
    ) -> Result<u64, SandboxError> {
        self.world().create_check_run(
            &key(owner, repo),
            body,
            state::ACTIONS_APP_ID,
            "github-actions[bot]",
        )
    }

    pub fn check_runs(&self, owner: &str, repo: &str, sha: &str) -> Vec<CheckRunView> {
        let k = key(owner, repo);
        self.world()
            .check_runs
            .values()
            .filter(|c| c.repo == k && c.head_sha == sha)
            .map(|c| CheckRunView {
                id: c.id,
                name: c.name.clone(),
                head_sha: c.head_sha.clone(),
                status: c.status.clone(),
                conclusion: c.conclusion.clone(),
                title: c.title.clone(),
                summary: c.summary.clone(),
                text: c.text.clone(),
                annotations: c.annotations.clone(),
                app_id: c.app_id,
            })
            .collect()
    }

    pub fn statuses(&self, owner: &str, repo: &str, sha: &str) -> Vec<StatusView> {
        let k = key(owner, repo);
        self.world()
            .statuses
            .iter()
            .filter(|s| s.repo == k && s.sha == sha)
            .map(|s| StatusView {
                sha: s.sha.clone(),
                state: s.state.clone(),
                context: s.context.clone(),
                description: s.description.clone(),
                target_url: s.target_url.clone(),
                creator: s.creator.clone(),
            })
            .collect()
    }

    // ---- Actions ----

    /// Registers a workflow file (`run-sweep.yml`) named `name`.
    pub fn add_workflow(
        &self,
        owner: &str,
        repo: &str,
        file: &str,
        name: &str,
    ) -> Result<u64, SandboxError> {
        self.world().add_workflow(&key(owner, repo), file, name)
    }

    /// Sets the workflow's `run-name` (with `${{ inputs.x }}`) and whether
    /// it has a `workflow_dispatch` trigger.
    pub fn configure_workflow(
        &self,
        owner: &str,
        repo: &str,
        file: &str,
        run_name: Option<&str>,
        dispatchable: bool,
    ) -> Result<(), SandboxError> {
        let mut w = self.world();
        let k = key(owner, repo);
        let id = w.find_workflow(&k, file)?;
        let wf = w
            .repo_mut(&k)?
            .workflows
            .get_mut(&id)
            .ok_or_else(SandboxError::not_found)?;
        wf.run_name = run_name.map(str::to_string);
        wf.dispatchable = dispatchable;
        Ok(())
    }

    pub fn add_workflow_run(&self, spec: RunSpec) -> Result<u64, SandboxError> {
        self.world().create_run(spec)
    }

    pub fn start_run(&self, run_id: u64) -> Result<(), SandboxError> {
        self.world().set_run_state(run_id, "in_progress", None)
    }

    pub fn complete_run(&self, run_id: u64, conclusion: &str) -> Result<(), SandboxError> {
        self.world()
            .set_run_state(run_id, "completed", Some(conclusion))
    }

    /// A job in the run's current attempt (with its Actions check run).
    pub fn add_job(
        &self,
        run_id: u64,
        name: &str,
        conclusion: Option<&str>,
    ) -> Result<u64, SandboxError> {
        let status = if conclusion.is_some() {
            "completed"
        } else {
            "queued"
        };
        self.world()
            .add_job(run_id, name, status, conclusion, vec!["self-hosted".into()])
    }

    pub fn set_job(
        &self,
        job_id: u64,
        status: &str,
        conclusion: Option<&str>,
    ) -> Result<(), SandboxError> {
        self.world().set_job_state(job_id, status, conclusion)
    }

    /// Re-runs the failed jobs (or all) as a new attempt, like the UI.
    pub fn rerun(&self, run_id: u64, all: bool, actor: &str) -> Result<(), SandboxError> {
        let mut w = self.world();
        let repo = w
            .runs
            .get(&run_id)
            .map(|r| r.repo.clone())
            .ok_or_else(SandboxError::not_found)?;
        w.rerun(&repo, run_id, all, actor)
    }

    /// An artifact of the run holding `files` (zipped), kept 90 days.
    pub fn add_artifact<P, C>(
        &self,
        run_id: u64,
        name: &str,
        files: impl IntoIterator<Item = (P, C)>,
    ) -> Result<u64, SandboxError>
    where
        P: Into<String>,
        C: Into<Vec<u8>>,
    {
        let files: Vec<(String, Vec<u8>)> = files
            .into_iter()
            .map(|(p, c)| (p.into(), c.into()))
            .collect();
        self.world().add_artifact(run_id, name, &files, 90)
    }

    pub fn expire_artifact(&self, artifact_id: u64) -> Result<(), SandboxError> {
        let mut w = self.world();
        let a = w
            .artifacts
            .get_mut(&artifact_id)
            .ok_or_else(SandboxError::not_found)?;
        a.expired = true;
        Ok(())
    }

    /// The workflow dispatches received, oldest first.
    pub fn workflow_dispatches(&self) -> Vec<WorkflowDispatch> {
        self.world().workflow_dispatches.clone()
    }

    /// The repository dispatches received, oldest first.
    pub fn repository_dispatches(&self) -> Vec<RepositoryDispatch> {
        self.world().repository_dispatches.clone()
    }

    /// `(status, conclusion)` of a run.
    pub fn run_state(&self, run_id: u64) -> Option<(String, Option<String>)> {
        self.world()
            .runs
            .get(&run_id)
            .map(|r| (r.status.clone(), r.conclusion.clone()))
    }

    // ---- assertions ----

    pub fn comments(&self, owner: &str, repo: &str, number: u64) -> Vec<CommentView> {
        let k = key(owner, repo);
        self.world()
            .comments
            .values()
            .filter(|c| c.repo == k && c.number == number)
            .map(|c| CommentView {
                id: c.id,
                user: c.user.clone(),
                author_association: c.author_association.clone(),
                body: c.body.clone(),
                by_app: c.via_app,
                created_at: state::ts(c.created_at),
                updated_at: state::ts(c.updated_at),
            })
            .collect()
    }

    /// The comments the app posted on a PR.
    pub fn bot_comments(&self, owner: &str, repo: &str, number: u64) -> Vec<CommentView> {
        self.comments(owner, repo, number)
            .into_iter()
            .filter(|c| c.by_app)
            .collect()
    }

    pub(crate) fn labels(&self, owner: &str, repo: &str, number: u64) -> Vec<String> {
        self.world()
            .issue(&key(owner, repo), number)
            .map(|i| i.labels.clone())
            .unwrap_or_default()
    }

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

    /// Advances the virtual clock (e.g. to age a run past a deadline).
    pub fn advance_clock(&self, by: chrono::Duration) {
        self.world().clock.now += by;
    }

    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.world().clock.peek()
    }
}

/// A handle to one pull request, for fluent scenarios.
#[derive(Clone)]
pub struct Pr {
    sandbox: Sandbox,
    pub owner: String,
    pub repo: String,
    pub number: u64,
}

impl Pr {
    pub fn number(&self) -> u64 {
        self.number
    }

    fn key(&self) -> String {
        key(&self.owner, &self.repo)
    }

    pub fn head_sha(&self) -> Option<String> {
        let w = self.sandbox.world();
        w.pull(&self.key(), self.number)
            .ok()
            .map(|(_, p)| p.head_sha.clone())
    }

    pub fn head_ref(&self) -> Option<String> {
        let w = self.sandbox.world();
        w.pull(&self.key(), self.number)
            .ok()
            .map(|(_, p)| p.head_ref.clone())
    }

    /// A comment by `user` with `association` (OWNER, MEMBER, COLLABORATOR,
    /// CONTRIBUTOR, NONE …); returns the comment id.
    pub fn post_comment(
        &self,
        user: &str,
        association: &str,
        body: &str,
    ) -> Result<u64, SandboxError> {
        self.sandbox.post_comment(
            &self.owner,
            &self.repo,
            self.number,
            user,
            association,
            body,
        )
    }

    pub fn add_label(&self, label: &str, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .add_label(&self.owner, &self.repo, self.number, label, by)
    }

    pub fn remove_label(&self, label: &str, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .remove_label(&self.owner, &self.repo, self.number, label, by)
    }

    /// Pushes a commit to the PR's head branch (sends `synchronize`).
    pub fn push(&self, changes: &[Change], message: &str) -> Result<String, SandboxError> {
        let mut w = self.sandbox.world();
        let (issue, pull) = w.pull(&self.key(), self.number)?;
        let (head_repo, head_ref, author) = (
            pull.head_repo.clone(),
            pull.head_ref.clone(),
            issue.user.clone(),
        );
        w.commit_on(&head_repo, &head_ref, changes, message, &author)
    }

    pub fn ready_for_review(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .set_draft(&self.key(), self.number, false, by)
    }

    pub fn convert_to_draft(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .set_draft(&self.key(), self.number, true, by)
    }

    pub fn merge(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox.world().merge_pr(&self.key(), self.number, by)
    }

    pub fn close(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .set_pr_state(&self.key(), self.number, false, by)
    }

    pub fn reopen(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .set_pr_state(&self.key(), self.number, true, by)
    }

    pub fn edit(
        &self,
        title: Option<&str>,
        body: Option<&str>,
        by: &str,
    ) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .edit_pr(&self.key(), self.number, title, body, by)
    }

    /// A review (`APPROVE`, `REQUEST_CHANGES`, `COMMENT`); returns its id.
    pub fn submit_review(
        &self,
        user: &str,
        association: &str,
        event: &str,
        body: &str,
    ) -> Result<u64, SandboxError> {
        self.sandbox.world().submit_review(
            &self.key(),
            self.number,
            user,
            association,
            event,
            body,
            None,
            &[],
        )
    }

    pub fn comments(&self) -> Vec<CommentView> {
        self.sandbox.comments(&self.owner, &self.repo, self.number)
    }

    pub fn bot_comments(&self) -> Vec<CommentView> {
        self.sandbox
            .bot_comments(&self.owner, &self.repo, self.number)
    }

    pub fn labels(&self) -> Vec<String> {
        self.sandbox.labels(&self.owner, &self.repo, self.number)
    }
}
