//! Transcript tests: a sandbox GitHub, the real router and the real
//! handlers. Deliveries the sandbox produces are signed and posted to the
//! router; jobs are drained one at a time; every comment the bot posted or
//! edited must be consumed by the test, or `finish` fails.
#![allow(dead_code)]

use super::TestDb;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use sweepgate::config::server::Secret;
use sweepgate::events::EventRouter;
use sweepgate::github::{Credentials, GitHub, GitHubConfig, RetryPolicy};
use sweepgate::handlers::{Clock, Services, event_router};
use sweepgate::queue::JobRunner;
use sweepgate::server::{AppState, router};
use sweepgate::store::now_ms;
use sweepgate_sandbox::{Change, PullRequestSpec, Sandbox, SandboxConfig};
use tokio::sync::Notify;
use tower::ServiceExt;

pub const OWNER: &str = "InferenceX";
pub const REPO: &str = "InferenceX";
pub use sweepgate_sandbox::app_key_pem;

/// How a world differs from the default one.
#[derive(Default)]
pub struct Setup {
    /// Default-branch files (the real fixtures when `None`).
    pub files: Option<Vec<(String, Vec<u8>)>>,
    pub clock_start: Option<chrono::DateTime<chrono::Utc>>,
    pub clock: Clock,
    /// The dashboard's public base URL (verdicts link their plot).
    pub public_url: Option<String>,
    /// The user whose token sends staging requests (instead of the App).
    pub staging_user: Option<String>,
}

/// The admin token of every world's dashboard.
pub const ADMIN_TOKEN: &str = "transcript-admin-token";

pub struct World {
    pub sandbox: Sandbox,
    pub db: TestDb,
    pub app: axum::Router,
    pub events: EventRouter,
    /// The dashboard over the same store.
    pub dashboard: axum::Router,
    pub installation: u64,
    /// Bot comments already consumed: id → body as consumed.
    seen: HashMap<u64, String>,
}

/// The benchmark repository's default branch, from the real fixtures.
pub fn fixture_files() -> Vec<(String, Vec<u8>)> {
    let root = super::data_dir().join("inferencex");
    [
        ".github/CODEOWNERS",
        "configs/nvidia-master.yaml",
        "configs/amd-master.yaml",
        "configs/runners.yaml",
        "perf-changelog.yaml",
        "docs/PR_REVIEW_CHECKLIST.md",
        "MODELS.md",
    ]
    .into_iter()
    .map(|p| (p.to_string(), std::fs::read(root.join(p)).unwrap()))
    .chain([("README.md".to_string(), b"# InferenceX\n".to_vec())])
    .collect()
}

/// A sweep workflow with only a `workflow_dispatch` trigger.
pub const DISPATCH_ONLY: &str = "name: Run sweep\nrun-name: \"Sweep ${{ inputs.sweep-id }}\"\non:\n  workflow_dispatch:\n    inputs:\n      sweep-id:\n        required: true\n";

/// A world in `dispatch` mode (`docs/contracts.md` §5) whose sweep workflow on
/// the default branch is `workflow`, its dashboard at `public_url`.
pub async fn dispatch_world(workflow: &str, public_url: &str) -> World {
    dispatch_world_with(workflow, public_url, "[sweep]\nmode = \"dispatch\"\n").await
}

/// `dispatch_world` with its own `.github/sweepgate.toml` (which must say
/// `mode = "dispatch"`).
pub async fn dispatch_world_with(workflow: &str, public_url: &str, config: &str) -> World {
    let mut files = fixture_files();
    files.push((".github/sweepgate.toml".into(), config.as_bytes().to_vec()));
    files.push((
        ".github/workflows/run-sweep.yml".into(),
        workflow.as_bytes().to_vec(),
    ));
    let w = World::with_setup(
        TestDb::sqlite().await,
        Setup {
            files: Some(files),
            public_url: Some(public_url.into()),
            ..Setup::default()
        },
    )
    .await;
    w.sandbox
        .add_workflow(OWNER, REPO, "run-sweep.yml", "Run sweep")
        .unwrap();
    w.sandbox
        .configure_workflow(
            OWNER,
            REPO,
            "run-sweep.yml",
            Some("Sweep ${{ inputs.sweep-id }}"),
            true,
        )
        .unwrap();
    w
}

/// The fixture changelog with one entry appended for `dsv4-fp8-h200-vllm`.
pub fn changelog_append(description: &str) -> Change {
    let path = super::data_dir().join("inferencex/perf-changelog.yaml");
    let mut text = std::fs::read_to_string(path).unwrap();
    text.push_str(&format!(
        "\n- config-keys:\n    - dsv4-fp8-h200-vllm\n  description:\n    - \"{description}\"\n  pr-link: https://github.com/InferenceX/InferenceX/pull/1\n"
    ));
    Change::write("perf-changelog.yaml", text)
}

/// A GitHub client authenticated as the sandbox's App.
pub fn github_for(sandbox: &Sandbox) -> GitHub {
    GitHub::new(GitHubConfig {
        api_url: sandbox.base_url(),
        credentials: Credentials::App {
            app_id: sandbox.app_id(),
            private_key_pem: Secret::new(app_key_pem()),
        },
        policy: RetryPolicy {
            base: Duration::from_millis(1),
            ..RetryPolicy::default()
        },
    })
    .unwrap()
}

/// The results repository `/use` and `/stage-results` stage into, with the
/// App installed on it.
pub fn add_results_repo(sandbox: &Sandbox) {
    sandbox.add_org("SemiAnalysisAI");
    sandbox
        .add_repo(
            "SemiAnalysisAI",
            "InferenceX-app",
            "main",
            [("README.md", "app")],
        )
        .unwrap();
    sandbox.install_app("SemiAnalysisAI");
}

impl World {
    pub async fn new() -> World {
        Self::with_db(TestDb::sqlite().await).await
    }

    pub async fn with_db(db: TestDb) -> World {
        Self::with_setup(db, Setup::default()).await
    }

    /// A world with its own default-branch files, sandbox clock and the
    /// verifier's date.
    pub async fn with_setup(db: TestDb, setup: Setup) -> World {
        let mut config = SandboxConfig::default();
        if let Some(t) = setup.clock_start {
            config.clock_start = t;
        }
        let (sandbox, _) = Sandbox::start_with(config).await.unwrap();
        sandbox.add_org(OWNER);
        sandbox
            .add_repo(
                OWNER,
                REPO,
                "main",
                setup.files.unwrap_or_else(fixture_files),
            )
            .unwrap();
        let installation = sandbox.install_app(OWNER);
        let github = github_for(&sandbox);
        let staging = setup
            .staging_user
            .as_deref()
            .map(|u| Secret::new(sandbox.user_token(u)));
        let events = event_router(
            Services::new(github)
                .with_clock(setup.clock)
                .with_public_url(setup.public_url.clone())
                .with_staging_token(&sandbox.base_url(), staging)
                .unwrap(),
        );
        let dashboard = sweepgate::dashboard::router(sweepgate::dashboard::DashState::new(
            db.store.clone(),
            Some(Secret::new(ADMIN_TOKEN)),
            setup.public_url.as_deref(),
            Arc::new(Notify::new()),
        ));
        let app = router(AppState::new(
            db.store.clone(),
            vec![Secret::new(sandbox.webhook_secret())],
            Arc::new(Notify::new()),
        ));
        // Everything before the scenario (repository set-up) is not news.
        sandbox.take_deliveries();
        World {
            sandbox,
            db,
            app,
            events,
            dashboard,
            installation,
            seen: HashMap::new(),
        }
    }

    /// Opens a PR from a new branch with `changes` by `author`.
    pub fn open_pr(&self, branch: &str, changes: &[Change], author: &str) -> sweepgate_sandbox::Pr {
        self.sandbox
            .create_branch(OWNER, REPO, branch, "main")
            .unwrap();
        self.sandbox
            .commit_as(OWNER, REPO, branch, changes, "change", author)
            .unwrap();
        self.sandbox
            .open_pr(PullRequestSpec::new(OWNER, REPO, branch, author).title("A recipe change"))
            .unwrap()
    }

    /// Opens a PR from `fork_owner`'s fork, branch `branch`, with `changes`
    /// by `author`.
    pub fn open_fork_pr(
        &self,
        fork_owner: &str,
        branch: &str,
        changes: &[Change],
        author: &str,
    ) -> sweepgate_sandbox::Pr {
        let s = &self.sandbox;
        s.fork(OWNER, REPO, fork_owner).unwrap();
        s.create_branch(fork_owner, REPO, branch, "main").unwrap();
        s.commit_as(fork_owner, REPO, branch, changes, branch, author)
            .unwrap();
        let head = format!("{fork_owner}:{branch}");
        s.open_pr(PullRequestSpec::new(OWNER, REPO, &head, author).title("Retune"))
            .unwrap()
    }

    /// Completes `run` successfully with one job and a result artifact.
    pub fn complete_run_with_results(&self, run: u64, job: &str) {
        let s = &self.sandbox;
        s.add_job(run, job, Some("success")).unwrap();
        s.add_artifact(run, "results_bmk", [("agg_bmk.json", "[]")])
            .unwrap();
        s.complete_run(run, "success").unwrap();
    }

    /// A dashboard page, logged in with the admin token: its status and body.
    pub async fn page(&self, path: &str) -> (StatusCode, String) {
        self.get_page(path, Some(ADMIN_TOKEN)).await
    }

    /// A dashboard page without a login (a link followed from GitHub).
    pub async fn page_without_login(&self, path: &str) -> (StatusCode, String) {
        self.get_page(path, None).await
    }

    async fn get_page(&self, path: &str, token: Option<&str>) -> (StatusCode, String) {
        let mut req = Request::get(path);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let resp = self
            .dashboard
            .clone()
            .oneshot(req.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    /// Posts every pending delivery and runs every job, until quiet.
    pub async fn deliver(&mut self) {
        for _ in 0..100 {
            let posted = self.post_pending().await;
            let ran = self.drain().await;
            if posted == 0 && ran == 0 {
                return;
            }
        }
        panic!("deliveries never settled");
    }

    /// Signs and posts the sandbox's pending deliveries to the router.
    pub async fn post_pending(&mut self) -> usize {
        let deliveries = self.sandbox.take_deliveries();
        for d in &deliveries {
            let req = Request::post("/webhook")
                .header("content-type", "application/json")
                .header("x-github-event", &d.event)
                .header("x-github-delivery", &d.id)
                .header("x-hub-signature-256", &d.signature_256)
                .body(Body::from(d.body.clone()))
                .unwrap();
            let resp = self.app.clone().oneshot(req).await.unwrap();
            assert!(
                resp.status() == StatusCode::ACCEPTED || resp.status() == StatusCode::OK,
                "{} {:?}: {}",
                d.event,
                d.action,
                resp.status()
            );
        }
        deliveries.len()
    }

    /// Runs queued jobs until none is left; any failure fails the test.
    pub async fn drain(&mut self) -> usize {
        let store = self.db.store.clone();
        let mut ran = 0;
        while let Some(c) = store
            .claim("transcript", now_ms(), Duration::from_secs(60))
            .await
            .unwrap()
        {
            ran += 1;
            assert!(ran < 10_000, "jobs never drained");
            match self.events.run(&store, &c.job).await {
                Ok(outcome) => assert!(store.complete(&c, now_ms(), &outcome).await.unwrap()),
                Err(f) => panic!("job {} ({}) failed: {}", c.job.id, c.job.kind, f.message),
            }
        }
        ran
    }

    /// Bot comments new or changed since last consumed, oldest first.
    fn fresh(&self, pr: u64) -> Vec<sweepgate_sandbox::CommentView> {
        let mut fresh: Vec<_> = self
            .sandbox
            .bot_comments(OWNER, REPO, pr)
            .into_iter()
            .filter(|c| self.seen.get(&c.id) != Some(&c.body))
            .collect();
        fresh.sort_by_key(|c| c.id);
        fresh
    }

    /// The next bot comment that is new or changed since last consumed.
    pub fn next_comment(&mut self, pr: u64) -> String {
        let Some(c) = self.fresh(pr).into_iter().next() else {
            panic!("expected a bot comment on #{pr}, found none");
        };
        self.seen.insert(c.id, c.body.clone());
        c.body
    }

    /// Every bot comment new or changed since last consumed, oldest first.
    pub fn take_comments(&mut self, pr: u64) -> Vec<String> {
        let fresh = self.fresh(pr);
        for c in &fresh {
            self.seen.insert(c.id, c.body.clone());
        }
        fresh.into_iter().map(|c| c.body).collect()
    }

    /// Fails on any bot comment (new or edited) the test did not consume.
    pub fn assert_no_unexpected_comments(&self, pr: u64) {
        let unexpected: Vec<String> = self.fresh(pr).into_iter().map(|c| c.body).collect();
        assert!(
            unexpected.is_empty(),
            "unexpected bot comments: {unexpected:#?}"
        );
    }

    pub async fn finish(self, prs: &[u64]) {
        for pr in prs {
            self.assert_no_unexpected_comments(*pr);
        }
        // Every request sweepgate sent and every answer of the sandbox is
        // what GitHub's description allows.
        let drift = super::openapi::mismatches(&self.sandbox.requests());
        assert!(
            drift.is_empty(),
            "the sandbox or sweepgate differs from GitHub's OpenAPI description:\n{}",
            drift.join("\n")
        );
        self.db.cleanup().await;
    }
}
