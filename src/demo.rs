//! `sweepgate demo`: the real server on 127.0.0.1 with SQLite and the
//! sandbox GitHub in the same process, playing a scripted pull request and
//! printing every bot action as it happens.
use crate::app;
use crate::config::server::{Secret, ServerConfig};
use crate::github::{Credentials, GitHub, GitHubConfig, RetryPolicy};
use crate::handlers::{Services, event_router};
use anyhow::Context;

/// Prints a line of the demo's transcript; a reader that went away
/// (`sweepgate demo | head`) does not stop the demo.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
use std::time::{Duration, Instant};
use sweepgate_sandbox::demo::{
    self, OWNER, REPO, SIGNER, bench_rows, eval_rows, signoff, tp4_change,
};
use sweepgate_sandbox::{PullRequestSpec, Sandbox, SandboxConfig};

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DemoArgs {
    /// Exit after the script instead of serving until Ctrl-C.
    #[arg(long)]
    pub exit: bool,
    /// Address of the sweepgate server (the sandbox picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: std::net::SocketAddr,
    /// Longest wait for one bot action.
    #[arg(long, default_value = "30")]
    pub timeout_secs: u64,
    /// The dashboard's admin token (its login, and retrying a dead job); a
    /// random one when not given. The demo prints a login URL with it.
    #[arg(long, env = "SWEEPGATE_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
}

pub(crate) async fn run(args: DemoArgs) -> anyhow::Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("sweepgate-demo-")
        .tempdir()
        .context("creating a temporary directory")?;
    let (sandbox, base) = Sandbox::start_with(SandboxConfig {
        real_time: true,
        ..SandboxConfig::default()
    })
    .await
    .context("starting the sandbox GitHub")?;
    // The world's story starts a quarter of an hour ago, so the reviewer's
    // time before signing (below) still ends in the past.
    sandbox.advance_clock(chrono::Duration::minutes(-15));
    demo::seed(&sandbox).map_err(|e| anyhow::anyhow!("seeding the demo world: {e}"))?;
    sandbox.take_deliveries();

    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let public_url = format!("http://{}", listener.local_addr()?);
    // The dashboard needs a login: the demo prints a URL that logs in.
    let admin_token = args
        .admin_token
        .clone()
        .unwrap_or_else(|| hex::encode(rand::random::<[u8; 16]>()));
    let cfg = ServerConfig {
        listen: args.listen,
        database_url: format!("sqlite:{}", dir.path().join("sweepgate.db").display()),
        webhook_secrets: vec![Secret::new(sandbox.webhook_secret())],
        github_api_url: base.clone(),
        workers: 2,
        public_url: Some(public_url.clone()),
        admin_token: Some(Secret::new(admin_token.clone())),
        ..ServerConfig::default()
    };
    let github = GitHub::new(GitHubConfig {
        api_url: base.clone(),
        credentials: Credentials::App {
            app_id: sandbox.app_id(),
            private_key_pem: Secret::new(sweepgate_sandbox::app_key_pem()),
        },
        policy: RetryPolicy::default(),
    })?;
    let store = app::open_store(&cfg).await?;
    let running = app::start(
        &cfg,
        store.clone(),
        event_router(Services::new(github).with_public_url(Some(public_url.clone()))),
        listener,
    )
    .await?;
    sandbox.deliver_to(&format!("http://{}/webhook", running.addr));
    say!("sandbox GitHub  {base}");
    say!(
        "sweepgate       http://{}  (database {})",
        running.addr,
        cfg.database_url
    );
    say!("dashboard       {public_url}/");
    say!("  log in        {public_url}/login?token={admin_token}");
    say!();

    let mut script = Script {
        sandbox: sandbox.clone(),
        store: store.clone(),
        seen: 0,
        timeout: Duration::from_secs(args.timeout_secs),
    };
    let outcome = script.play().await;
    if let Ok(pr) = &outcome {
        say!();
        say!("dashboard pages (log in first: {public_url}/login?token={admin_token}):");
        say!("  {public_url}/");
        say!("  {public_url}/repos/{OWNER}/{REPO}/pulls/{pr}");
        say!("  {public_url}/repos/{OWNER}/{REPO}/pulls/{pr}/pareto.svg");
        say!("  {public_url}/queue");
        if let Some(plot) = signed_plot(&store, &public_url, *pr).await {
            say!("the verdict's Pareto plot, public through its signed link:");
            say!("  {plot}");
        }
    }
    let outcome = outcome.map(|_| ());
    match (&outcome, args.exit) {
        (Err(_), _) | (Ok(()), true) => {
            running.stop().await?;
            outcome
        }
        (Ok(()), false) => {
            say!();
            say!("The sandbox and sweepgate keep running; press Ctrl-C to stop.");
            running.wait().await
        }
    }
}

/// The signed plot link of the PR's newest verdict, as its comment shows it.
async fn signed_plot(store: &crate::store::Store, public_url: &str, pr: u64) -> Option<String> {
    let repo = sweepgate_core::ids::RepoName::new(OWNER, REPO);
    let verdict = store
        .last_activity(&repo.0, pr as i64, "verdict")
        .await
        .ok()
        .flatten()?;
    let sha = verdict.head_sha?;
    crate::dashboard::links::signed_plot_url(
        store,
        public_url,
        &repo,
        sweepgate_core::ids::PrNumber(pr),
        &sha,
    )
    .await
    .ok()
}

struct Script {
    sandbox: Sandbox,
    store: crate::store::Store,
    /// Bot requests already printed.
    seen: usize,
    timeout: Duration,
}

impl Script {
    /// Plays the script; the PR's number.
    async fn play(&mut self) -> anyhow::Result<u64> {
        let s = self.sandbox.clone();
        s.create_branch(OWNER, REPO, "dsv4-h200-tp4", "main")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        s.commit_as(
            OWNER,
            REPO,
            "dsv4-h200-tp4",
            &tp4_change(),
            "Add a TP4 point to dsv4-fp8-h200-vllm",
            "vendor-dev",
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        let pr = s
            .open_pr(
                PullRequestSpec::new(OWNER, REPO, "dsv4-h200-tp4", "vendor-dev")
                    .title("dsv4 H200 vLLM: add a TP4 point"),
            )
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        say!(
            "vendor-dev opened #{} “dsv4 H200 vLLM: add a TP4 point” (master config + changelog)",
            pr.number
        );
        let writes = self.settle().await?;
        expect(&writes, "the contribution guide", |b| {
            b.contains("<!-- recipe-reminder -->")
        })?;
        expect(&writes, "the sweep gate", |b| {
            b.contains("<!-- sweepgate:sweep-gate -->")
        })?;

        pr.add_label("full-sweep-fail-fast", "maint")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        say!("maint added the label “full-sweep-fail-fast”");
        let writes = self.settle().await?;
        expect(&writes, "the sweep gate passing", |b| {
            b.contains("The sweep gate passes")
        })?;
        // Dispatch mode: sweepgate starts the sweep on the GPU runners.
        let Some(dispatch) = s.workflow_dispatches().into_iter().next() else {
            anyhow::bail!("sweepgate did not dispatch the sweep");
        };
        let run = dispatch.run_id;

        pr.post_comment("vendor-dev", "CONTRIBUTOR", "/help")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        say!("vendor-dev commented “/help”");
        let writes = self.settle().await?;
        expect(&writes, "the command list", |b| {
            b.contains("sweepgate reads these commands")
        })?;

        pr.post_comment(
            "vendor-dev",
            "CONTRIBUTOR",
            "Reproduce with:\n```\n/use 123\n```",
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        say!("vendor-dev commented a code block containing “/use 123” (not a command)");
        let writes = self.settle().await?;
        if !writes.is_empty() {
            anyhow::bail!("sweepgate answered a command inside a code block");
        }
        say!("  sweepgate stays silent");

        pr.post_comment("vendor-dev", "CONTRIBUTOR", "/use 38614048439")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        say!("vendor-dev (no repository role) commented “/use 38614048439”");
        let writes = self.settle().await?;
        expect(&writes, "the refusal", |b| {
            b.contains("may be used only by")
        })?;

        // The dispatched sweep ran on the self-hosted runners: eight
        // benchmark points. Its jobs' check runs sit on the default branch's
        // commit; sweepgate counts them for the PR commit the sweep tested.
        s.start_run(run).map_err(|e| anyhow::anyhow!("{e}"))?;
        for job in [
            "single-node 8k1k / benchmark (tp4 c1-64)",
            "single-node 8k1k / benchmark (tp8 c1-64)",
            "eval / gsm8k (tp8 c32)",
        ] {
            s.add_job(run, job, Some("success"))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        s.add_artifact(run, "results_bmk", [("agg_bmk.json", bench_rows())])
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        s.add_artifact(
            run,
            "eval_results_all",
            [("agg_eval_all.json", eval_rows())],
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        s.complete_run(run, "success")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        say!(
            "the sweep run {run} sweepgate dispatched completed on the GPU runners (8 benchmark points)"
        );
        let writes = self.settle().await?;
        expect(&writes, "the result links", |b| {
            b.contains(&run.to_string())
        })?;

        // A maintainer pins the run for review.
        s.set_permission(OWNER, REPO, "maint", "maintain", "maintain")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        pr.post_comment("maint", "MEMBER", &format!("/use {run}"))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        say!("maint commented “/use {run}”");
        let writes = self.settle().await?;
        expect(&writes, "the staging reply", |b| b.contains("staging run"))?;

        // A CODEOWNER of the master config reviews for a while, then signs
        // the checklist: a sign-off right after a push covers nothing.
        s.advance_clock(chrono::Duration::minutes(10));
        s.set_permission(OWNER, REPO, SIGNER, "write", "write")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        pr.post_comment(SIGNER, "COLLABORATOR", &signoff())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        say!("{SIGNER} (CODEOWNER of configs/nvidia-master.yaml) posted the sign-off checklist");
        let writes = self.settle().await?;
        expect(&writes, "the verdict", |b| {
            b.starts_with("<!-- codeowner-signoff-verify sha=")
        })?;

        // The verifier sweepgate replaces answers the same sign-off (seed
        // 002's verdict text): the PR page shows it beside sweepgate's.
        let head = pr.head_sha().context("the PR has no head")?;
        pr.post_comment(LEGACY_LOGIN, "NONE", &old_verdict(&head))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        say!(
            "{LEGACY_LOGIN} (the old verifier) posted its verdict on the same commit (seed 002's text)"
        );
        self.settle().await?;
        say!();
        say!("script complete: {} bot actions", self.seen);
        Ok(pr.number)
    }

    /// Waits until every delivery went out and every job finished, then
    /// prints (and returns the bodies of) what the bot wrote meanwhile.
    async fn settle(&mut self) -> anyhow::Result<Vec<String>> {
        let start = Instant::now();
        let mut quiet_since: Option<Instant> = None;
        loop {
            let counts = self.store.queue_counts().await?;
            let idle = self.sandbox.pending_deliveries() == 0
                && counts.pending == 0
                && counts.running == 0;
            match (idle, quiet_since) {
                (true, Some(t)) if t.elapsed() >= Duration::from_millis(300) => break,
                (true, None) => quiet_since = Some(Instant::now()),
                (false, _) => quiet_since = None,
                _ => {}
            }
            if start.elapsed() > self.timeout {
                anyhow::bail!("sweepgate did not finish within {:?}", self.timeout);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let writes = self.bot_writes();
        let mut bodies = Vec::new();
        for r in &writes[self.seen.min(writes.len())..] {
            say!("  sweepgate → {} {} ({})", r.method, r.path, r.status);
            let body = r.body.as_ref();
            let text = body
                .and_then(|b| b.get("body"))
                .or_else(|| {
                    body.and_then(|b| b.get("output"))
                        .and_then(|o| o.get("title"))
                })
                .and_then(|b| b.as_str())
                .unwrap_or("");
            for line in text.lines() {
                say!("  │ {line}");
            }
            if r.path.ends_with("/comments") || r.path.contains("/issues/comments/") {
                bodies.push(text.to_owned());
            }
        }
        self.seen = writes.len();
        Ok(bodies)
    }

    /// What the bot changed on GitHub, in order (token fetches excluded).
    fn bot_writes(&self) -> Vec<sweepgate_sandbox::RecordedRequest> {
        self.sandbox
            .requests()
            .into_iter()
            .filter(|r| r.auth == "token" && r.method != "GET" && r.status < 400)
            .collect()
    }
}

/// The login of the verifier sweepgate replaces (a default legacy login).
const LEGACY_LOGIN: &str = "github-actions[bot]";

/// Seed 002's old-bot verdict comment (its `[github-actions]` part, up to
/// the assessed commit), with the marker naming `sha`.
fn old_verdict(sha: &str) -> String {
    const SEED: &str = include_str!("../tests/data/seeds/002_a06ac514f4a3d3bf.txt");
    let text = SEED
        .split_once("[github-actions]\n")
        .map_or("", |(_, rest)| rest);
    let rows: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("Assessed commit:"))
        .collect();
    format!(
        "<!-- codeowner-signoff-verify sha={sha} -->\n{}\n\nAssessed commit: {sha}.",
        rows.join("\n").trim()
    )
}

fn expect(bodies: &[String], what: &str, pred: impl Fn(&str) -> bool) -> anyhow::Result<()> {
    if bodies.iter().any(|b| pred(b)) {
        Ok(())
    } else {
        anyhow::bail!("sweepgate did not post {what}")
    }
}
