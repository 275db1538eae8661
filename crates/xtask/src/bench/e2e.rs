//! Delivery to verdict: the sandbox GitHub pushing signed deliveries to a
//! running sweepgate (router, queue, workers, handlers), a seed-002-like PR
//! on the real master configs and changelog, and a CODEOWNER's sign-off
//! (a review).
//! The time runs from the sign-off comment until the verdict comment is
//! written.
use std::time::{Duration, Instant};

use anyhow::Context;

use super::model::Fixtures;
use sweepgate::app;
use sweepgate::config::server::{Secret, ServerConfig};
use sweepgate::github::{Credentials, GitHub, GitHubConfig, RetryPolicy};
use sweepgate::handlers::{Clock, Services, event_router};
use sweepgate_sandbox::{Change, PullRequestSpec, Sandbox, SandboxConfig};

const OWNER: &str = "InferenceX";
const REPO: &str = "InferenceX";
const MARKER: &str = "codeowner-signoff-verify";

/// Each measured sign-off, in order.
pub(crate) async fn bench(fx: &Fixtures, reps: usize) -> anyhow::Result<Vec<Duration>> {
    let dir = tempfile::tempdir()?;
    let (sandbox, base_url) = Sandbox::start_with(SandboxConfig {
        real_time: true,
        ..SandboxConfig::default()
    })
    .await
    .context("starting the sandbox GitHub")?;
    sandbox.add_org(OWNER);
    let (base, _) = fx.pr(3, 1);
    let mut files: Vec<(String, Vec<u8>)> = base
        .into_iter()
        .chain(fx.policy.clone())
        .map(|(p, t)| (p, t.into_bytes()))
        .collect();
    files.push(("README.md".into(), b"# InferenceX\n".to_vec()));
    sandbox
        .add_repo(OWNER, REPO, "main", files)
        .map_err(|e| anyhow::anyhow!("seeding the repository: {e}"))?;
    sandbox.install_app(OWNER);
    // The signer may sign (`docs/contracts.md` §3): the core team's
    // membership is not readable here, and the role write stands in.
    sandbox
        .set_permission(OWNER, REPO, "nvpohanh", "write", "write")
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    sandbox.take_deliveries();

    let cfg = ServerConfig {
        listen: "127.0.0.1:0".parse()?,
        database_url: format!("sqlite:{}", dir.path().join("e2e.db").display()),
        webhook_secrets: vec![Secret::new(sandbox.webhook_secret())],
        github_api_url: base_url.clone(),
        ..ServerConfig::default()
    };
    let github = GitHub::new(GitHubConfig {
        api_url: base_url,
        credentials: Credentials::App {
            app_id: sandbox.app_id(),
            private_key_pem: Secret::new(sweepgate_sandbox::app_key_pem()),
        },
        policy: RetryPolicy::default(),
    })?;
    let store = app::open_store(&cfg).await?;
    let listener = tokio::net::TcpListener::bind(cfg.listen).await?;
    let clock = Clock::Fixed(chrono::NaiveDate::from_ymd_opt(2026, 10, 16).unwrap_or_default());
    let running = app::start(
        &cfg,
        store.clone(),
        event_router(Services::new(github).with_clock(clock)),
        listener,
    )
    .await?;
    sandbox.deliver_to(&format!("http://{}/webhook", running.addr));

    let (_, head) = fx.pr(10, 1);
    let signoff = fx.signoff_body();
    let mut out = Vec::new();
    let result = async {
        for i in 0..reps.max(1) {
            let branch = format!("dsv41flash-gb300-bench-{i}");
            let err = |e: sweepgate_sandbox::SandboxError| anyhow::anyhow!("{e}");
            sandbox
                .create_branch(OWNER, REPO, &branch, "main")
                .map_err(err)?;
            let changes: Vec<Change> = head
                .iter()
                .map(|(p, t)| Change::write(p.clone(), t.clone()))
                .collect();
            sandbox
                .commit_as(
                    OWNER,
                    REPO,
                    &branch,
                    &changes,
                    "[AgentX] GB300 DSV4.1 Flash SGLang",
                    "weireweire",
                )
                .map_err(err)?;
            let pr = sandbox
                .open_pr(
                    PullRequestSpec::new(OWNER, REPO, &branch, "weireweire")
                        .title("[AgentX] GB300 DSV4.1 Flash SGLang: fastokens 0.3.4"),
                )
                .map_err(err)?;
            // The PR's own deliveries (guide, lint) finish before the sign-off.
            settle(&sandbox, &store, Duration::from_secs(60)).await?;
            let path = format!("/repos/{OWNER}/{REPO}/issues/{}/comments", pr.number);
            let before = verdict_writes(&sandbox, &path);
            let t = Instant::now();
            // A review: it names the commit it covers. A comment this soon
            // after the PR's push would be a stale sign-off (a push less
            // than 60 s before it, `docs/contracts.md` §3) and get no verdict.
            pr.submit_review("nvpohanh", "COLLABORATOR", "COMMENT", &signoff)
                .map_err(err)?;
            loop {
                if verdict_writes(&sandbox, &path) > before {
                    out.push(t.elapsed());
                    break;
                }
                anyhow::ensure!(
                    t.elapsed() < Duration::from_secs(60),
                    "no verdict comment within 60 s"
                );
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            settle(&sandbox, &store, Duration::from_secs(60)).await?;
        }
        anyhow::Ok(())
    }
    .await;
    running.stop().await?;
    result.map(|()| out)
}

/// Verdict comments the bot posted on the PR (by comment-list path).
fn verdict_writes(s: &Sandbox, path: &str) -> usize {
    s.requests()
        .into_iter()
        .filter(|r| r.auth == "token" && r.method == "POST" && r.path == path && r.status < 400)
        .filter(|r| {
            r.body
                .as_ref()
                .and_then(|b| b.get("body"))
                .and_then(|b| b.as_str())
                .is_some_and(|b| b.contains(MARKER))
        })
        .count()
}

/// Waits until no delivery is pending and no job is queued or running.
async fn settle(
    s: &Sandbox,
    store: &sweepgate::store::Store,
    timeout: Duration,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let mut quiet: Option<Instant> = None;
    loop {
        let c = store.queue_counts().await?;
        let idle = s.pending_deliveries() == 0 && c.pending == 0 && c.running == 0;
        match (idle, quiet) {
            (true, Some(q)) if q.elapsed() >= Duration::from_millis(100) => return Ok(()),
            (true, None) => quiet = Some(Instant::now()),
            (false, _) => quiet = None,
            _ => {}
        }
        anyhow::ensure!(start.elapsed() < timeout, "sweepgate did not settle");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
