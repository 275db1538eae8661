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
pub(crate) const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("repo/README.md")),
    ("LICENSE", include_str!("repo/LICENSE")),
    ("MODELS.md", include_str!("repo/MODELS.md")),
    (
        ".github/CODEOWNERS",
        include_str!("repo/.github/CODEOWNERS"),
    ),
    (
        ".github/sweepgate.toml",
        include_str!("repo/.github/sweepgate.toml"),
    ),
    (
        ".github/workflows/run-sweep.yml",
        include_str!("repo/.github/workflows/run-sweep.yml"),
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
    /// Enables the dashboard's actions (retrying a dead job) with this token.
    #[arg(long, env = "SWEEPGATE_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
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
    // The sweep workflow takes `workflow_dispatch` only and names its runs
    // by sweep id (dispatch mode).
    sandbox
        .add_workflow(OWNER, REPO, "run-sweep.yml", "Run sweep")
        .and_then(|_| {
            sandbox.configure_workflow(
                OWNER,
                REPO,
                "run-sweep.yml",
                Some("Sweep ${{ inputs.sweep-id }}"),
                true,
            )
        })
        .map_err(|e| anyhow::anyhow!("seeding the sweep workflow: {e}"))?;
    // Where `/use` stages a run's results.
    sandbox.add_org("SemiAnalysisAI");
    sandbox
        .add_repo(
            "SemiAnalysisAI",
            "InferenceX-app",
            "main",
            [("README.md", "app")],
        )
        .map_err(|e| anyhow::anyhow!("seeding the results repository: {e}"))?;
    sandbox.install_app("SemiAnalysisAI");
    sandbox.take_deliveries();

    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let public_url = format!("http://{}", listener.local_addr()?);
    let cfg = ServerConfig {
        listen: args.listen,
        database_url: format!("sqlite:{}", dir.path().join("sweepgate.db").display()),
        webhook_secrets: vec![Secret::new(sandbox.webhook_secret())],
        github_api_url: base.clone(),
        workers: 2,
        public_url: Some(public_url.clone()),
        admin_token: args.admin_token.clone().map(Secret::new),
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
    let running = app::start(
        &cfg,
        store.clone(),
        event_router(Services::new(github).with_public_url(Some(public_url.clone()))),
        listener,
    )
    .await?;
    sandbox.deliver_to(&format!("http://{}/webhook", running.addr));
    println!("sandbox GitHub  {base}");
    println!(
        "sweepgate       http://{}  (database {})",
        running.addr, cfg.database_url
    );
    println!("dashboard       {public_url}/");
    println!();

    let mut script = Script {
        sandbox: sandbox.clone(),
        store: store.clone(),
        seen: 0,
        timeout: Duration::from_secs(args.timeout_secs),
    };
    let outcome = script.play().await;
    if let Ok(pr) = &outcome {
        println!();
        println!("dashboard pages:");
        println!("  {public_url}/");
        println!("  {public_url}/repos/{OWNER}/{REPO}/pulls/{pr}");
        println!("  {public_url}/repos/{OWNER}/{REPO}/pulls/{pr}/pareto.svg");
        println!("  {public_url}/queue");
    }
    let outcome = outcome.map(|_| ());
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
        // Dispatch mode: sweepgate starts the sweep on the GPU runners.
        let Some(dispatch) = s.workflow_dispatches().into_iter().next() else {
            anyhow::bail!("sweepgate did not dispatch the sweep");
        };
        let run = dispatch.run_id;

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
        println!(
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
        println!("maint commented “/use {run}”");
        let writes = self.settle().await?;
        expect(&writes, "the staging reply", |b| b.contains("staging run"))?;

        // A CODEOWNER of the master config signs the checklist.
        s.set_permission(OWNER, REPO, SIGNER, "write", "write")
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        pr.post_comment(SIGNER, "COLLABORATOR", &signoff())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        println!(
            "{SIGNER} (CODEOWNER of configs/nvidia-master.yaml) posted the sign-off checklist"
        );
        let writes = self.settle().await?;
        expect(&writes, "the verdict", |b| {
            b.starts_with("<!-- codeowner-signoff-verify sha=")
        })?;
        println!();
        println!("script complete: {} bot actions", self.seen);
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

/// The demo PR's change: a TP4 point for dsv4-fp8-h200-vllm and its
/// changelog entry.
pub(crate) fn tp4_change() -> Vec<Change> {
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
    vec![
        Change::write("configs/nvidia-master.yaml", master),
        Change::write("perf-changelog.yaml", changelog),
    ]
}

/// The CODEOWNER who signs in the demo.
const SIGNER: &str = "ankur-singh";

/// The checklist template of the demo repository, every box ticked.
fn signoff() -> String {
    let doc = include_str!("repo/docs/PR_REVIEW_CHECKLIST.md");
    let template = doc
        .split_once("## Template\n```\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map_or("", |(t, _)| t);
    template
        .replace("- [ ]", "- [x]")
        .replace("FILL_IN_GITHUB_USERNAME", SIGNER)
}

/// The run's `agg_eval_all.json`: gsm8k on the TP8 curve.
pub(crate) fn eval_rows() -> String {
    serde_json::json!([{
        "model_prefix": "dsv4",
        "model": "deepseek-ai/DeepSeek-V4-Pro",
        "hw": "h200-cw",
        "framework": "vllm",
        "precision": "fp8",
        "image": "vllm/vllm-openai:v0.25.1",
        "tp": 8,
        "ep": 1,
        "dp_attention": false,
        "conc": 32,
        "task": "gsm8k",
        "em_strict": 0.962,
        "score": 0.962,
        "score_name": "em_strict",
        "n_eff": 1319
    }])
    .to_string()
}

/// The run's `agg_bmk.json`: a TP4 and a TP8 curve over concurrency, so the
/// frontier has dominated points (the format of
/// `fixtures/inferencex/docs/results-and-ingestion.md`).
pub(crate) fn bench_rows() -> String {
    let mut rows = Vec::new();
    for (tp, conc, p90, tput) in [
        (4, 1, 9.8, 310.0),
        (4, 8, 12.5, 1480.0),
        (4, 32, 19.0, 2900.0),
        (4, 64, 31.0, 3350.0),
        (8, 1, 7.9, 240.0),
        (8, 8, 10.1, 1210.0),
        (8, 32, 16.2, 2650.0),
        (8, 64, 24.0, 3600.0),
    ] {
        rows.push(serde_json::json!({
            "model": "deepseek-ai/DeepSeek-V4-Pro",
            "model_prefix": "dsv4",
            "framework": "vllm",
            "precision": "fp8",
            "hw": "h200-cw",
            "image": "vllm/vllm-openai:v0.25.1",
            "isl": 8192,
            "osl": 1024,
            "tp": tp,
            "ep": 1,
            "dp_attention": false,
            "conc": conc,
            "p90_e2el": p90,
            "tput_per_gpu": tput,
            "num_requests_successful": 100,
        }));
    }
    serde_json::Value::Array(rows).to_string()
}

fn expect(bodies: &[String], what: &str, pred: impl Fn(&str) -> bool) -> anyhow::Result<()> {
    if bodies.iter().any(|b| pred(b)) {
        Ok(())
    } else {
        anyhow::bail!("sweepgate did not post {what}")
    }
}
