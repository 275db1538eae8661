//! Load: a separate process (`cargo xtask reliability send`) sends signed
//! deliveries as fast as its connections allow to one `serve` process on
//! loopback; every acknowledged delivery must be stored with its job.
//! Figures: throughput and the p50/p99 acknowledgement latency the load
//! process measured.
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::procs::ServerSpec;
use super::{Backend, Record, RunArgs, thousands};
use sweepgate::server::signature::sign;
use sweepgate::store::Store;
use sweepgate_sandbox::{Change, PullRequestSpec, Sandbox};

#[derive(Debug, Clone, clap::Args)]
pub struct SendArgs {
    /// The webhook URL (`http://127.0.0.1:PORT/webhook`).
    #[arg(long)]
    pub url: String,
    #[arg(long, default_value = "10000")]
    pub count: u32,
    #[arg(long, default_value = "32")]
    pub concurrency: u32,
    #[arg(long, env = "SWEEPGATE_WEBHOOK_SECRETS", hide_env_values = true)]
    pub secret: String,
    /// Delivery ids are `<tag>-<n>`.
    #[arg(long, default_value = "load")]
    pub tag: String,
}

/// What the load process prints (one JSON line).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SendSummary {
    pub count: u32,
    pub concurrency: u32,
    pub acknowledged: u32,
    /// Ids of deliveries that got no 2xx (status or no answer).
    pub failed: Vec<String>,
    pub seconds: f64,
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// A realistic delivery body: the sandbox's own `issue_comment` for a
/// `/help` on a pull request.
async fn body() -> anyhow::Result<Vec<u8>> {
    let (s, _) = Sandbox::start().await?;
    let err = |e: sweepgate_sandbox::SandboxError| anyhow::anyhow!("{e}");
    s.add_org("InferenceX");
    s.add_repo("InferenceX", "InferenceX", "main", [("README.md", "hi\n")])
        .map_err(err)?;
    s.install_app("InferenceX");
    s.create_branch("InferenceX", "InferenceX", "load", "main")
        .map_err(err)?;
    s.commit(
        "InferenceX",
        "InferenceX",
        "load",
        &[Change::write("a.txt", "a\n")],
        "a change",
    )
    .map_err(err)?;
    let pr = s
        .open_pr(PullRequestSpec::new(
            "InferenceX",
            "InferenceX",
            "load",
            "vendor-dev",
        ))
        .map_err(err)?;
    s.take_deliveries();
    pr.post_comment("vendor-dev", "CONTRIBUTOR", "/help")
        .map_err(err)?;
    s.take_deliveries()
        .into_iter()
        .find(|d| d.event == "issue_comment")
        .map(|d| d.body)
        .context("the sandbox produced no issue_comment delivery")
}

/// The load process: closed loop, `concurrency` requests in flight.
pub(crate) async fn send(a: &SendArgs) -> anyhow::Result<SendSummary> {
    let body = bytes::Bytes::from(body().await?);
    let signature = sign(&a.secret, &body);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(a.concurrency as usize)
        .timeout(Duration::from_secs(60))
        .build()?;
    let next = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..a.concurrency.max(1) {
        let (http, next, body, signature) =
            (http.clone(), next.clone(), body.clone(), signature.clone());
        let (url, tag, count) = (a.url.clone(), a.tag.clone(), a.count);
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= count {
                    return out;
                }
                let id = format!("{tag}-{i}");
                let start = Instant::now();
                let ok = http
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("x-github-event", "issue_comment")
                    .header("x-github-delivery", &id)
                    .header("x-hub-signature-256", &signature)
                    .body(body.clone())
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                out.push((id, ok, start.elapsed()));
            }
        }));
    }
    let mut latencies = Vec::new();
    let mut failed = Vec::new();
    for t in tasks {
        for (id, ok, took) in t.await? {
            if ok {
                latencies.push(took);
            } else {
                failed.push(id);
            }
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    latencies.sort();
    let ms = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    Ok(SendSummary {
        count: a.count,
        concurrency: a.concurrency,
        acknowledged: latencies.len() as u32,
        failed,
        seconds,
        per_second: latencies.len() as f64 / seconds.max(1e-9),
        p50_ms: ms(0.50),
        p99_ms: ms(0.99),
        max_ms: latencies.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
    })
}

#[derive(Debug, Clone)]
pub struct LoadOpts {
    pub bin: PathBuf,
    pub backend: Backend,
    pub count: u32,
    pub concurrency: u32,
    pub pg_url: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub backend: Backend,
    pub sent: SendSummary,
    pub stored: usize,
    /// Acknowledged but not stored.
    pub lost: usize,
    /// Acknowledged and stored without exactly one job.
    pub without_one_job: usize,
    pub duration_s: f64,
}

impl LoadReport {
    pub(crate) fn record(&self, args: &RunArgs) -> Record {
        let order = match self.backend {
            Backend::Sqlite => 40,
            Backend::Postgres => 41,
        };
        Record {
            order,
            property: format!("Load ({})", self.backend.title()),
            tried: format!(
                "{} signed deliveries from a separate load process, {} connections on loopback",
                thousands(u64::from(self.sent.count)),
                self.sent.concurrency
            ),
            result: format!(
                "{} lost; {} acknowledged at {:.0}/s, p50 {:.1} ms, p99 {:.1} ms",
                self.lost + self.without_one_job + self.sent.failed.len(),
                thousands(u64::from(self.sent.acknowledged)),
                self.sent.per_second,
                self.sent.p50_ms,
                self.sent.p99_ms
            ),
            command: format!(
                "cargo xtask reliability load --backend {} --count {} --concurrency {}",
                self.backend.name(),
                args.count,
                args.concurrency
            ),
            ran_at: String::new(),
            duration_s: self.duration_s,
        }
    }

    pub fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (n, what) in [
            (self.sent.failed.len(), "deliveries not acknowledged"),
            (self.lost, "acknowledged deliveries lost"),
            (
                self.without_one_job,
                "stored deliveries without exactly one job",
            ),
        ] {
            if n > 0 {
                v.push(format!("{n} {what}"));
            }
        }
        v
    }
}

pub async fn run(o: &LoadOpts) -> anyhow::Result<LoadReport> {
    let db = o.backend.fresh_db(&o.pg_url).await?;
    let result = run_on(o, &db.url, &db.store).await;
    db.cleanup().await;
    result
}

const SECRET: &str = "reliability-load-secret";

async fn run_on(o: &LoadOpts, db_url: &str, store: &Store) -> anyhow::Result<LoadReport> {
    let started = Instant::now();
    let dir = tempfile::tempdir()?;
    // Nothing listens on the GitHub side: jobs fail and back off, which
    // keeps the server's work to intake, the property measured here.
    let spec = ServerSpec::new(&o.bin, dir.path(), db_url, "http://127.0.0.1:9", SECRET, 1)?;
    let server = super::procs::ServerProc::start(&spec, None).await?;
    let out = tokio::process::Command::new(&o.bin)
        .args(["reliability", "send", "--url", &server.webhook_url()])
        .args(["--count", &o.count.to_string()])
        .args(["--concurrency", &o.concurrency.to_string()])
        .args(["--tag", "load"])
        .env("SWEEPGATE_WEBHOOK_SECRETS", SECRET)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .await
        .context("running the load process")?;
    if !out.status.success() {
        bail!("the load process failed: {}", out.status);
    }
    // Its summary is the last line (logs share stdout).
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    let sent: SendSummary =
        serde_json::from_str(line).with_context(|| format!("load summary {stdout:?}"))?;
    server.kill();

    let failed: HashSet<&str> = sent.failed.iter().map(String::as_str).collect();
    let acked: Vec<String> = (0..sent.count)
        .map(|i| format!("load-{i}"))
        .filter(|id| !failed.contains(id.as_str()))
        .collect();
    let stored: HashSet<String> = store
        .recent_deliveries(i64::MAX / 2)
        .await?
        .into_iter()
        .map(|r| r.delivery_id)
        .collect();
    let mut jobs: HashMap<String, usize> = HashMap::new();
    for j in store.jobs(None, i64::MAX / 2).await? {
        if let Some(id) = j.delivery_id {
            *jobs.entry(id).or_default() += 1;
        }
    }
    let lost = acked.iter().filter(|id| !stored.contains(*id)).count();
    let without_one_job = acked
        .iter()
        .filter(|id| stored.contains(*id) && jobs.get(*id) != Some(&1))
        .count();
    Ok(LoadReport {
        backend: o.backend,
        stored: stored.len(),
        sent,
        lost,
        without_one_job,
        duration_s: started.elapsed().as_secs_f64(),
    })
}
