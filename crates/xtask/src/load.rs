//! `cargo xtask load`: acknowledgement latency measured from outside the
//! server, with the method fixed.
//!
//! This process is the load generator; `sweepgate serve` runs as its child
//! with the service's defaults (workers on, the intake limits on) on a fresh
//! database. A real `pull_request` payload (~28 KB), signed once before the
//! run, is sent with a unique delivery id per request at a fixed rate,
//! open loop: request `i` is due at `i / rate` seconds, whether or not
//! earlier ones were answered, and its latency runs from that scheduled
//! time, so a server that falls behind is charged for the queueing it
//! causes (no coordinated omission). Deliveries are spread round-robin
//! over `--prs` pull requests (the payload's PR number rewritten, each
//! variant signed once), as GitHub's traffic comes from many PRs: the
//! queue runs one PR's jobs in order, so a single PR would measure that
//! serialisation rather than the intake. The first `warmup` seconds are sent
//! but not measured. After the last answer the server is SIGKILLed and the
//! run's deliveries are counted in the database.
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::bench::ack::Db;
use crate::reliability::Backend;
use crate::reliability::procs::{ServerProc, ServerSpec};
use sweepgate::config::server::ServerConfig;
use sweepgate::server::signature::sign;

/// The payload every request carries (GitHub's documented example).
pub const PAYLOAD: &str = "tests/data/github/webhooks/pull_request/opened.payload.json";
const EVENT: &str = "pull_request";
const SECRET: &str = "sweepgate-load-secret";
/// Delivery ids are `<PREFIX><n>`.
const PREFIX: &str = "load-";

#[derive(Debug, Clone, clap::Args)]
pub struct LoadArgs {
    /// Deliveries per second, offered open loop.
    #[arg(long, default_value = "5000")]
    pub rate: f64,
    /// Seconds measured (after the warm-up).
    #[arg(long, default_value = "60")]
    pub duration: f64,
    /// Seconds sent first and not measured.
    #[arg(long, default_value = "10")]
    pub warmup: f64,
    #[arg(long, value_enum, default_value = "sqlite")]
    pub backend: Backend,
    /// The PostgreSQL server (a fresh database is created and dropped).
    #[arg(
        long,
        env = "SWEEPGATE_TEST_PG_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test",
        hide_env_values = true
    )]
    pub pg_url: String,
    /// Pull requests the deliveries are spread over (round-robin).
    #[arg(long, default_value_t = DEFAULT_PRS)]
    pub prs: usize,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Pull requests a run's deliveries are spread over, by default.
pub const DEFAULT_PRS: usize = 100;

/// One run.
#[derive(Debug, Clone)]
pub struct LoadOpts {
    /// The `xtask` binary (`xtask sweepgate serve` is the server).
    pub bin: PathBuf,
    pub backend: Backend,
    pub rate: f64,
    pub duration: Duration,
    pub warmup: Duration,
    pub pg_url: String,
    pub prs: usize,
}

impl LoadOpts {
    /// Requests sent in the warm-up, then measured.
    fn counts(&self) -> (usize, usize) {
        let n = |d: Duration| (self.rate * d.as_secs_f64()).round() as usize;
        (n(self.warmup), n(self.duration).max(1))
    }
}

/// What a run reports.
#[derive(Debug, Clone, Serialize)]
pub struct LoadResult {
    pub backend: Backend,
    /// The database's durability setting, as it was during the run.
    pub durability: String,
    pub payload_bytes: usize,
    pub workers: usize,
    pub prs: usize,
    pub offered_per_s: f64,
    pub warmup_s: f64,
    pub duration_s: f64,
    /// Requests sent, warm-up included.
    pub sent: usize,
    /// Requests answered 2xx, warm-up included.
    pub acknowledged: usize,
    /// Requests not answered 2xx, by status (`none`: no answer).
    pub refused: BTreeMap<String, usize>,
    /// Measured requests acknowledged per second of the measured window.
    pub achieved_per_s: f64,
    /// Latency of the measured, acknowledged requests from their scheduled
    /// send time.
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// CPU used while the requests were sent, in cores (CPU seconds per
    /// second): the server, this load process, and the whole machine
    /// (what neither used is other processes').
    pub server_cores: f64,
    pub load_cores: f64,
    pub machine_cores: f64,
    /// Deliveries of the run in the database after the server was killed.
    pub stored: usize,
    /// Acknowledged, but not in the database.
    pub lost: usize,
}

impl LoadResult {
    pub fn refused_total(&self) -> usize {
        self.refused.values().sum()
    }

    /// Kept up with the offered rate, refused nothing, lost nothing, and
    /// answered within `p99` at the 99th percentile.
    pub fn sustained(&self, p99: Duration) -> bool {
        self.refused_total() == 0
            && self.lost == 0
            && self.achieved_per_s >= 0.99 * self.offered_per_s
            && self.p99_ms < p99.as_secs_f64() * 1e3
    }

    /// One line for people.
    pub fn summary(&self) -> String {
        format!(
            "achieved {:.0}/s, p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.1} ms; \
             {} sent, {} acknowledged, {} refused{}; {} stored, {} lost; CPU: server {:.2}, \
             load {:.2}, machine {:.2} cores",
            self.achieved_per_s,
            self.p50_ms,
            self.p99_ms,
            self.p999_ms,
            self.max_ms,
            self.sent,
            self.acknowledged,
            self.refused_total(),
            if self.refused.is_empty() {
                String::new()
            } else {
                format!(" {:?}", self.refused)
            },
            self.stored,
            self.lost,
            self.server_cores,
            self.load_cores,
            self.machine_cores
        )
    }
}

/// One request's fate.
#[derive(Debug, Clone, Copy)]
struct Answer {
    index: usize,
    status: Option<u16>,
    /// From the scheduled send time to the end of the answer.
    latency: Duration,
    /// When the answer ended, since the start of the run.
    ended: Duration,
}

/// The `q` quantile (nearest rank) of sorted values.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The figures of the answers; `warm` requests came first and are not
/// measured, the window opens at `window_start`.
struct Figures {
    acknowledged: usize,
    refused: BTreeMap<String, usize>,
    achieved_per_s: f64,
    latencies: Vec<Duration>,
}

fn figures(answers: &[Answer], warm: usize, window_start: Duration) -> Figures {
    let mut refused = BTreeMap::new();
    let mut latencies = Vec::new();
    let mut acknowledged = 0;
    let mut last = window_start;
    for a in answers {
        let ok = a.status.is_some_and(|s| (200..300).contains(&s));
        if ok {
            acknowledged += 1;
        } else {
            let key = a.status.map_or("none".to_owned(), |s| s.to_string());
            *refused.entry(key).or_insert(0) += 1;
        }
        if a.index >= warm && ok {
            latencies.push(a.latency);
            last = last.max(a.ended);
        }
    }
    latencies.sort();
    let span = last.saturating_sub(window_start).as_secs_f64();
    Figures {
        acknowledged,
        refused,
        achieved_per_s: if span > 0.0 {
            latencies.len() as f64 / span
        } else {
            0.0
        },
        latencies,
    }
}

/// The payload as PR `number` (the PR's and the event's `"number"`).
fn payload_for(body: &str, number: usize) -> anyhow::Result<String> {
    const FIELD: &str = "\"number\": ";
    let mut out = String::with_capacity(body.len() + 8);
    let mut rest = body;
    let mut seen = 0;
    while let Some(i) = rest.find(FIELD) {
        let after = &rest[i + FIELD.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str(&rest[..i + FIELD.len()]);
        if digits > 0 {
            out.push_str(&number.to_string());
            seen += 1;
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    anyhow::ensure!(
        seen >= 2,
        "the payload has {seen} numeric \"number\" fields, not 2"
    );
    Ok(out)
}

/// Sends `total` requests, request `i` at `i / rate` seconds, as PR
/// `i % bodies.len()`.
async fn send_all(url: &str, bodies: &[bytes::Bytes], rate: f64, total: usize) -> Vec<Answer> {
    let signed: Vec<(bytes::Bytes, String)> = bodies
        .iter()
        .map(|b| (b.clone(), sign(SECRET, b)))
        .collect();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .tcp_nodelay(true)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap_or_default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Answer>();
    let t0 = Instant::now();
    let mut next = 0usize;
    while next < total {
        // Every request whose time has come, then sleep until the next one.
        let due = ((t0.elapsed().as_secs_f64() * rate) as usize + 1).min(total);
        while next < due {
            let at = Duration::from_secs_f64(next as f64 / rate);
            let (body, signature) = &signed[next % signed.len()];
            let req = http
                .post(url)
                .header("content-type", "application/json")
                .header("user-agent", "GitHub-Hookshot/load")
                .header("x-github-event", EVENT)
                .header("x-github-delivery", format!("{PREFIX}{next}"))
                .header("x-hub-signature-256", signature)
                .body(body.clone());
            let (tx, index) = (tx.clone(), next);
            tokio::spawn(async move {
                let status = req.send().await.ok().map(|r| r.status().as_u16());
                let ended = t0.elapsed();
                let _ = tx.send(Answer {
                    index,
                    status,
                    latency: ended.saturating_sub(at),
                    ended,
                });
            });
            next += 1;
        }
        if next < total {
            let at = t0 + Duration::from_secs_f64(next as f64 / rate);
            tokio::time::sleep_until(at.into()).await;
        }
    }
    drop(tx);
    let mut answers = Vec::with_capacity(total);
    while let Some(a) = rx.recv().await {
        answers.push(a);
    }
    answers.sort_by_key(|a| a.index);
    answers
}

/// Clock ticks a second of `/proc` CPU times (`USER_HZ`, 100 on Linux).
const TICKS: f64 = 100.0;

/// CPU seconds of process `pid` (`self` for this one), user and system.
fn process_cpu(pid: &str) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name, which ends at the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |x| x.1);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    (tick(11) + tick(12)) / TICKS
}

/// Busy CPU seconds of the whole machine (all but idle and iowait).
fn machine_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else {
        return 0.0;
    };
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: f64 = v.iter().take(8).sum();
    let idle = v.get(3).copied().unwrap_or(0.0) + v.get(4).copied().unwrap_or(0.0);
    (total - idle) / TICKS
}

/// The durability setting the server's commits had.
async fn durability(backend: Backend, url: &str) -> anyhow::Result<String> {
    use sqlx::Connection;
    Ok(match backend {
        Backend::Sqlite => {
            let opts = sqlx::sqlite::SqliteConnectOptions::from_str(url)?;
            let mut c = sqlx::SqliteConnection::connect_with(&opts).await?;
            let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
                .fetch_one(&mut c)
                .await?;
            // `synchronous` is per connection: `serve`'s own is its
            // `--sqlite-sync`, whose default is NORMAL.
            format!("SQLite journal_mode={mode}, synchronous=NORMAL (serve's default)")
        }
        Backend::Postgres => {
            let mut c = sqlx::PgConnection::connect(url).await?;
            let sync: String = sqlx::query_scalar("SHOW synchronous_commit")
                .fetch_one(&mut c)
                .await?;
            let fsync: String = sqlx::query_scalar("SHOW fsync").fetch_one(&mut c).await?;
            format!("PostgreSQL synchronous_commit={sync}, fsync={fsync}")
        }
    })
}

/// The ids of the run's deliveries in the database.
async fn stored_ids(db: &Db) -> anyhow::Result<HashSet<usize>> {
    Ok(db
        .store
        .recent_deliveries(i64::MAX / 2)
        .await?
        .into_iter()
        .filter_map(|r| r.delivery_id.strip_prefix(PREFIX)?.parse().ok())
        .collect())
}

/// The payload's bytes (from the workspace).
pub fn payload() -> anyhow::Result<Vec<u8>> {
    let path = crate::workspace_root().join(PAYLOAD);
    std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
}

pub async fn run(o: &LoadOpts) -> anyhow::Result<LoadResult> {
    let db = o.backend.fresh_db(&o.pg_url).await?;
    let result = run_on(o, &db).await;
    db.cleanup().await;
    result
}

async fn run_on(o: &LoadOpts, db: &Db) -> anyhow::Result<LoadResult> {
    let text = String::from_utf8(payload()?).context("the payload is not UTF-8")?;
    let bodies = (0..o.prs.max(1))
        .map(|k| payload_for(&text, 1000 + k).map(bytes::Bytes::from))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let dir = tempfile::tempdir()?;
    let defaults = ServerConfig::default();
    // Nothing listens on the GitHub side: jobs fail and back off, which
    // keeps the workers' GitHub traffic out of the figures while they
    // still claim, fail and reschedule jobs beside the intake.
    let mut spec = ServerSpec::new(&o.bin, dir.path(), &db.url, "http://127.0.0.1:9", SECRET, 1)?;
    spec.workers = defaults.workers;
    spec.lease_secs = defaults.lease.as_secs();
    let server = ServerProc::start(&spec, None).await?;
    let durability = durability(o.backend, &db.url).await?;
    let (warm, measured) = o.counts();
    let pid = server.pid().to_string();
    let cpu = || (process_cpu(&pid), process_cpu("self"), machine_cpu());
    let (t0, before) = (Instant::now(), cpu());
    let answers = send_all(&server.webhook_url(), &bodies, o.rate, warm + measured).await;
    let (wall, after) = (t0.elapsed().as_secs_f64().max(1e-9), cpu());
    // Whatever was acknowledged must be on disk now.
    server.kill();
    let f = figures(
        &answers,
        warm,
        Duration::from_secs_f64(warm as f64 / o.rate),
    );
    let stored = stored_ids(db).await?;
    let lost = answers
        .iter()
        .filter(|a| a.status.is_some_and(|s| (200..300).contains(&s)))
        .filter(|a| !stored.contains(&a.index))
        .count();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    Ok(LoadResult {
        backend: o.backend,
        durability,
        payload_bytes: bodies[0].len(),
        workers: spec.workers,
        prs: bodies.len(),
        offered_per_s: o.rate,
        warmup_s: o.warmup.as_secs_f64(),
        duration_s: o.duration.as_secs_f64(),
        sent: answers.len(),
        acknowledged: f.acknowledged,
        refused: f.refused,
        achieved_per_s: f.achieved_per_s,
        p50_ms: ms(quantile(&f.latencies, 0.50)),
        p99_ms: ms(quantile(&f.latencies, 0.99)),
        p999_ms: ms(quantile(&f.latencies, 0.999)),
        max_ms: ms(f.latencies.last().copied().unwrap_or_default()),
        server_cores: (after.0 - before.0) / wall,
        load_cores: (after.1 - before.1) / wall,
        machine_cores: (after.2 - before.2) / wall,
        stored: stored.len(),
        lost,
    })
}

/// `cargo xtask load`.
pub async fn main(args: LoadArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.rate > 0.0 && args.rate.is_finite(),
        "--rate {}: a positive number of deliveries per second",
        args.rate
    );
    anyhow::ensure!(
        args.duration > 0.0 && args.warmup >= 0.0,
        "--duration must be positive and --warmup not negative"
    );
    let opts = LoadOpts {
        bin: std::env::current_exe().context("locating the xtask binary")?,
        backend: args.backend,
        rate: args.rate,
        duration: Duration::from_secs_f64(args.duration),
        warmup: Duration::from_secs_f64(args.warmup),
        pg_url: args.pg_url.clone(),
        prs: args.prs,
    };
    let r = run(&opts).await?;
    if args.json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!(
            "{}, {} workers: {:.0}/s offered for {} s after {} s warm-up, {}-byte {EVENT} payload over {} PRs",
            r.durability,
            r.workers,
            r.offered_per_s,
            r.duration_s,
            r.warmup_s,
            r.payload_bytes,
            r.prs
        );
        println!("{}", r.summary());
    }
    Ok(if r.lost == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: {} acknowledged deliveries were not stored", r.lost);
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(index: usize, status: Option<u16>, latency_ms: u64, ended_ms: u64) -> Answer {
        Answer {
            index,
            status,
            latency: Duration::from_millis(latency_ms),
            ended: Duration::from_millis(ended_ms),
        }
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<Duration> = (1..=1000).map(Duration::from_millis).collect();
        assert_eq!(quantile(&v, 0.5), Duration::from_millis(500));
        assert_eq!(quantile(&v, 0.99), Duration::from_millis(990));
        assert_eq!(quantile(&v, 0.999), Duration::from_millis(999));
        assert_eq!(quantile(&v[..1], 0.999), Duration::from_millis(1));
        assert_eq!(quantile(&[], 0.5), Duration::ZERO);
    }

    #[test]
    fn warm_up_is_counted_but_not_measured_and_refusals_are_by_status() {
        // Two warm-up requests (one slow), then four measured ones from
        // 1 s: one shed with 503, one never answered.
        let answers = [
            answer(0, Some(202), 900, 900),
            answer(1, Some(202), 5, 505),
            answer(2, Some(202), 2, 1002),
            answer(3, Some(503), 1, 1251),
            answer(4, None, 60_000, 61_500),
            answer(5, Some(200), 4, 2004),
        ];
        let f = figures(&answers, 2, Duration::from_secs(1));
        assert_eq!(f.acknowledged, 4);
        assert_eq!(
            f.refused,
            BTreeMap::from([("503".to_owned(), 1), ("none".to_owned(), 1)])
        );
        assert_eq!(
            f.latencies,
            vec![Duration::from_millis(2), Duration::from_millis(4)]
        );
        // Two measured acknowledgements between 1 s and 2.004 s.
        assert!((f.achieved_per_s - 2.0 / 1.004).abs() < 1e-9);
    }

    #[test]
    fn a_run_is_warm_up_then_measured_requests() {
        let o = LoadOpts {
            bin: PathBuf::new(),
            backend: Backend::Sqlite,
            rate: 5000.0,
            duration: Duration::from_secs(60),
            warmup: Duration::from_secs(10),
            pg_url: String::new(),
            prs: 1,
        };
        assert_eq!(o.counts(), (50_000, 300_000));
    }

    #[test]
    fn each_pr_variant_rewrites_both_numbers_and_nothing_else() {
        let text = String::from_utf8(payload().unwrap()).unwrap();
        let v = payload_for(&text, 1234).unwrap();
        let json: serde_json::Value = serde_json::from_str(&v).unwrap();
        assert_eq!(json["number"], 1234);
        assert_eq!(json["pull_request"]["number"], 1234);
        let mut orig: serde_json::Value = serde_json::from_str(&text).unwrap();
        orig["number"] = 1234.into();
        orig["pull_request"]["number"] = 1234.into();
        assert_eq!(json, orig);
        assert!(payload_for("{}", 1).is_err());
    }
}
