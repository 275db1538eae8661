//! `cargo xtask reliability`: crash safety, replicas and load, proven against
//! real processes (the `serve` binary, the sandbox GitHub as `sweepgate
//! sandbox`, the load generator as `cargo xtask reliability send`). Each run
//! asserts its property (an `Err` names every violation) and reports its
//! figures; `--record` writes the `docs/reliability/<name>.json` row.
pub mod crash;
pub(crate) mod effects;
pub mod load;
pub(crate) mod procs;
pub mod replicas;
pub(crate) mod report;

pub(crate) use report::Record;

use anyhow::Context;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::bench::ack::Db;

#[derive(Debug, Clone, clap::Args)]
pub struct ReliabilityArgs {
    #[command(subcommand)]
    pub run: Run,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum Run {
    /// SIGKILL the server at random points while deliveries stream in;
    /// every acknowledged delivery must have exactly one effect.
    Crash(RunArgs),
    /// Three `serve` processes on one PostgreSQL database: every job runs
    /// once and jobs of one PR never overlap.
    Replicas(RunArgs),
    /// Signed deliveries at the highest rate a separate process can send:
    /// zero loss, throughput and acknowledgement latency.
    Load(RunArgs),
    /// The load process: sends `--count` signed deliveries to `--url` with
    /// `--concurrency` connections and prints a JSON summary.
    Send(load::SendArgs),
    /// Writes `docs/reliability.md` from the records the full runs wrote.
    Report(ReportArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// The records (`<name>.json`, one per row).
    #[arg(long, default_value = "docs/reliability")]
    pub dir: PathBuf,
    /// The document to write.
    #[arg(long, default_value = "docs/reliability.md")]
    pub out: PathBuf,
}

#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    #[arg(long, value_enum, default_value = "sqlite")]
    pub backend: Backend,
    /// Crash: SIGKILL cycles; replicas: rounds of activity.
    #[arg(long, default_value = "50")]
    pub cycles: u32,
    /// Load: deliveries to send.
    #[arg(long, default_value = "10000")]
    pub count: u32,
    /// Load: concurrent connections of the load process.
    #[arg(long, default_value = "32")]
    pub concurrency: u32,
    /// Seed of the run's random choices (activity, kill points).
    #[arg(long, default_value = "8")]
    pub seed: u64,
    /// Write the run's record (`docs/reliability/<name>.json`) here.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// The PostgreSQL server (a fresh database is created and dropped).
    #[arg(
        long,
        env = "SWEEPGATE_TEST_PG_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    pub pg_url: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }

    pub(crate) fn title(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }

    /// A fresh database on this back end (dropped by `Db::cleanup`).
    pub(crate) async fn fresh_db(self, pg_url: &str) -> anyhow::Result<Db> {
        match self {
            Backend::Sqlite => Db::sqlite().await,
            Backend::Postgres => Db::postgres(pg_url)
                .await
                .with_context(|| format!("PostgreSQL at {}", sweepgate::app::redact_url(pg_url))),
        }
    }
}

/// Thousands separated by commas, as the records print counts.
pub(crate) fn thousands(n: u64) -> String {
    crate::bench::report::group(n)
}

pub async fn main(args: ReliabilityArgs) -> anyhow::Result<ExitCode> {
    let bin = std::env::current_exe().context("locating the xtask binary")?;
    let started = Instant::now();
    let ran_at = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let record_path = match &args.run {
        Run::Crash(a) | Run::Replicas(a) | Run::Load(a) => a.record.clone(),
        Run::Send(_) | Run::Report(_) => None,
    };
    let (record, figures, violations) = match args.run {
        Run::Report(a) => {
            let rows = report::write(&a.dir, &a.out)?;
            println!("{}: {rows} rows from {}", a.out.display(), a.dir.display());
            return Ok(ExitCode::SUCCESS);
        }
        Run::Send(a) => {
            let summary = load::send(&a).await?;
            println!("{}", serde_json::to_string(&summary)?);
            return Ok(ExitCode::SUCCESS);
        }
        Run::Crash(a) => {
            let opts = crash::CrashOpts {
                bin,
                backend: a.backend,
                cycles: a.cycles,
                seed: a.seed,
                pg_url: a.pg_url.clone(),
            };
            let r = crash::run(&opts).await?;
            (r.record(&a), serde_json::to_value(&r)?, r.violations())
        }
        Run::Replicas(a) => {
            let opts = replicas::ReplicaOpts {
                bin,
                rounds: a.cycles,
                seed: a.seed,
                pg_url: a.pg_url.clone(),
            };
            let r = replicas::run(&opts).await?;
            (r.record(), serde_json::to_value(&r)?, r.violations())
        }
        Run::Load(a) => {
            let opts = load::LoadOpts {
                bin,
                backend: a.backend,
                count: a.count,
                concurrency: a.concurrency,
                pg_url: a.pg_url.clone(),
            };
            let r = load::run(&opts).await?;
            (r.record(&a), serde_json::to_value(&r)?, r.violations())
        }
    };
    println!("{}", serde_json::to_string_pretty(&figures)?);
    if !violations.is_empty() {
        for v in &violations {
            eprintln!("violated: {v}");
        }
        return Ok(ExitCode::FAILURE);
    }
    let record = Record {
        ran_at,
        duration_s: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        ..record
    };
    println!("{}", serde_json::to_string_pretty(&record)?);
    if let Some(path) = record_path {
        std::fs::write(&path, serde_json::to_string_pretty(&record)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
