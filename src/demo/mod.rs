//! `sweepgate demo`: the real server on 127.0.0.1 with SQLite and the
//! sandbox GitHub in the same process, playing a scripted pull request and
//! printing every bot action as it happens.
use crate::app;
use crate::config::server::{Secret, ServerConfig};
use crate::github::{Credentials, GitHub, GitHubConfig, RetryPolicy};
use crate::handlers::{Services, event_router};
use crate::sandbox::{Change, PullRequestSpec, Sandbox, SandboxConfig};
use anyhow::Context;
use std::time::{Duration, Instant};

const OWNER: &str = "InferenceX";
const REPO: &str = "InferenceX";
const KEY_PEM: &str = include_str!("../sandbox/app-key.pem");

/// The demo repository's default branch: excerpts of the real benchmark
/// repository (Apache-2.0), embedded so the demo needs nothing on disk.
const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("repo/README.md")),
    ("LICENSE", include_str!("repo/LICENSE")),
    (
        ".github/CODEOWNERS",
        include_str!("repo/.github/CODEOWNERS"),
    ),
    (
        "configs/nvidia-master.yaml",
        include_str!("repo/configs/nvidia-master.yaml"),
    ),
    (
        "configs/amd-master.yaml",
        include_str!("repo/configs/amd-master.yaml"),
    ),
    (
        "configs/runners.yaml",
        include_str!("repo/configs/runners.yaml"),
    ),
    (
        "perf-changelog.yaml",
        include_str!("repo/perf-changelog.yaml"),
    ),
    (
        "docs/PR_REVIEW_CHECKLIST.md",
        include_str!("repo/docs/PR_REVIEW_CHECKLIST.md"),
    ),
    (
        "runners/launch_h200-cw.sh",
        include_str!("repo/runners/launch_h200-cw.sh"),
    ),
    (
        "runners/launch_h200-nb.sh",
        include_str!("repo/runners/launch_h200-nb.sh"),
    ),
    (
        "runners/launch_h200-dgxc-slurm.sh",
        include_str!("repo/runners/launch_h200-dgxc-slurm.sh"),
    ),
    (
        "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh",
        include_str!("repo/benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh"),
    ),
];

#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// Exit after the script instead of serving until Ctrl-C.
    #[arg(long)]
    pub exit: bool,
    /// Address of the sweepgate server (the sandbox picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: std::net::SocketAddr,
    /// Longest wait for one bot action.
    #[arg(long, default_value = "30")]
    pub timeout_secs: u64,
}

pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
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
    sandbox.add_org(OWNER);
    sandbox
        .add_repo(
            OWNER,
            REPO,
            "main",
            FILES.iter().map(|(p, c)| (*p, c.as_bytes())),
        )
        .map_err(|e| anyhow::anyhow!("seeding the demo repository: {e}"))?;
    sandbox.install_app(OWNER);
    sandbox.take_deliveries();

    let cfg = ServerConfig {
        listen: args.listen,
        database_url: format!("sqlite:{}", dir.path().join("sweepgate.db").display()),
        webhook_secrets: vec![Secret::new(sandbox.webhook_secret())],
        github_api_url: base.clone(),
        workers: 2,
        ..ServerConfig::default()
    };
    let github = GitHub::new(GitHubConfig {
        api_url: base.clone(),
        credentials: Credentials::App {
            app_id: sandbox.app_id(),
            private_key_pem: Secret::new(KEY_PEM),
        },
        policy: RetryPolicy::default(),
    })?;
    let store = app::open_store(&cfg).await?;
    let listener = tokio::net::TcpListener::bind(cfg.listen).await?;
    let running = app::start(
        &cfg,
        store.clone(),
        event_router(Services::new(github)),
        listener,
    )
    .await?;
    sandbox.deliver_to(&format!("http://{}/webhook", running.addr));
    println!("sandbox GitHub  {base}");
    println!(
        "sweepgate       http://{}  (database {})",
        running.addr, cfg.database_url
    );
    println!();

    let mut script = Script {
        sandbox: sandbox.clone(),
        store: store.clone(),
        seen: 0,
        timeout: Duration::from_secs(args.timeout_secs),
    };
    let outcome = script.play().await;
    match (&outcome, args.exit) {
        (Err(_), _) | (Ok(()), true) => {
            running.stop().await?;
            outcome
        }
        (Ok(()), false) => {
            println!();
            println!("The sandbox and sweepgate keep running; press Ctrl-C to stop.");
            running.wait().await
        }
    }
}

struct Script {
    sandbox: Sandbox,
    store: crate::store::Store,
    /// Bot requests already printed.
    seen: usize,
    timeout: Duration,
}

impl Script {
    async fn play(&mut self) -> anyhow::Result<()> {
        let s = self.sandbox.clone();
        s.create_branch(OWNER, REPO, "dsv4-h200-tp4", "main")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let master = format!(
            "{}\n{}",
            include_str!("repo/configs/nvidia-master.yaml").trim_end(),
            "      - { tp: 4, ep: 1, dp-attn: false, conc-start: 1, conc-end: 64 }\n"
        );
        let changelog = format!(
            "{}\n{}",
            include_str!("repo/perf-changelog.yaml").trim_end(),
            "\n- config-keys:\n    - dsv4-fp8-h200-vllm\n  description:\n    - \"Add a TP4 point\"\n  pr-link: https://github.com/InferenceX/InferenceX/pull/1\n"
        );
        s.commit_as(
            OWNER,
            REPO,
            "dsv4-h200-tp4",
            &[
                Change::write("configs/nvidia-master.yaml", master),
                Change::write("perf-changelog.yaml", changelog),
            ],
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
        println!(
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
        println!("maint added the label “full-sweep-fail-fast”");
        let writes = self.settle().await?;
        expect(&writes, "the sweep gate passing", |b| {
            b.contains("The sweep gate passes")
        })?;

        pr.post_comment("vendor-dev", "CONTRIBUTOR", "/help")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        println!("vendor-dev commented “/help”");
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
        println!("vendor-dev commented a code block containing “/use 123” (not a command)");
        let writes = self.settle().await?;
        if !writes.is_empty() {
            anyhow::bail!("sweepgate answered a command inside a code block");
        }
        println!("  sweepgate stays silent");

        pr.post_comment("vendor-dev", "CONTRIBUTOR", "/use 38614048439")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        println!("vendor-dev (no repository role) commented “/use 38614048439”");
        let writes = self.settle().await?;
        expect(&writes, "the refusal", |b| {
            b.contains("may be used only by")
        })?;
        println!();
        println!("script complete: {} bot actions", self.seen);
        Ok(())
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
            println!("  sweepgate → {} {} ({})", r.method, r.path, r.status);
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
                println!("  │ {line}");
            }
            if r.path.ends_with("/comments") || r.path.contains("/issues/comments/") {
                bodies.push(text.to_owned());
            }
        }
        self.seen = writes.len();
        Ok(bodies)
    }

    /// What the bot changed on GitHub, in order (token fetches excluded).
    fn bot_writes(&self) -> Vec<crate::sandbox::RecordedRequest> {
        self.sandbox
            .requests()
            .into_iter()
            .filter(|r| r.auth == "token" && r.method != "GET" && r.status < 400)
            .collect()
    }
}

fn expect(bodies: &[String], what: &str, pred: impl Fn(&str) -> bool) -> anyhow::Result<()> {
    if bodies.iter().any(|b| pred(b)) {
        Ok(())
    } else {
        anyhow::bail!("sweepgate did not post {what}")
    }
}
