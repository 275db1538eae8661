//! Child-process measurements: resident memory of `serve` at idle, the
//! peak of a process verifying and linting a 3,000-file PR, and
//! instruction counts under callgrind.
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::model::Fixtures;
use super::report::{Report, Row, Status};
use super::{BenchArgs, budget};
use sweepgate_core::config::RepoConfig;

/// A field of `/proc/<pid>/status` in kB (`VmRSS`, `VmHWM`).
pub(crate) fn status_kb(pid: &str, field: &str) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in /proc/{pid}/status"))
}

/// Child side of the peak measurement: verify and lint a 3,000-file PR on
/// the real master configs; the peak RSS of this process afterwards.
pub(crate) fn peak_inner(fx: &Fixtures) -> anyhow::Result<u64> {
    let s = fx.snapshot(3000, 1)?;
    let v = sweepgate::verdict::verify(&s, &RepoConfig::default());
    std::hint::black_box(v.rows.len());
    drop(s);
    let input = fx.lint_input(3000, 1)?;
    std::hint::black_box(sweepgate_core::checks::lint::lint(&input).len());
    status_kb("self", "VmHWM")
}

pub(crate) fn exe() -> anyhow::Result<std::path::PathBuf> {
    std::env::current_exe().context("locating the xtask binary")
}

/// `sweepgate serve`: the product binary given by `--sweepgate-bin`, or the
/// service's command line run through this binary (`xtask sweepgate`).
fn serve_command(args: &BenchArgs) -> anyhow::Result<tokio::process::Command> {
    Ok(match &args.sweepgate_bin {
        Some(bin) => {
            let mut c = tokio::process::Command::new(bin);
            c.arg("serve");
            c
        }
        None => {
            let mut c = tokio::process::Command::new(exe()?);
            c.args(["sweepgate", "serve"]);
            c
        }
    })
}

fn fixture_args(args: &BenchArgs) -> Vec<String> {
    args.fixtures
        .as_ref()
        .map(|f| vec!["--fixtures".to_owned(), f.display().to_string()])
        .unwrap_or_default()
}

/// Instructions of one run of the named workload, counted by callgrind
/// from entry to exit of `callgrind_measured` only.
pub(crate) fn callgrind(name: &str, args: &BenchArgs) -> anyhow::Result<u64> {
    callgrind_of(&exe()?, name, &fixture_args(args))
}

/// [`callgrind`] of another build's bench binary (the previous build).
pub(crate) fn callgrind_of(
    bin: &std::path::Path,
    name: &str,
    fixtures: &[String],
) -> anyhow::Result<u64> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("callgrind.out");
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg("--collect-atstart=no")
        .arg("--toggle-collect=*callgrind_measured*")
        .arg(bin)
        .args(["bench", "--only", name, "--callgrind-inner"])
        .args(fixtures)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("running valgrind (is it installed?)")?;
    anyhow::ensure!(status.success(), "valgrind exited with {status}");
    callgrind_total(&out)
}

/// The instruction total of a callgrind output file.
pub(crate) fn callgrind_total(out: &std::path::Path) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(out)?;
    let ir = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .context("no totals in the callgrind output")?;
    anyhow::ensure!(ir > 0, "callgrind counted nothing (symbol not found?)");
    Ok(ir)
}

/// RSS of `sweepgate serve` once it answers `/healthz`.
async fn idle_rss_kb(args: &BenchArgs) -> anyhow::Result<u64> {
    let dir = tempfile::tempdir()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut child = serve_command(args)?
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args([
            "--database-url",
            &format!("sqlite:{}", dir.path().join("idle.db").display()),
        ])
        .args(["--webhook-secret", "bench-idle-secret"])
        .args(["--github-token", "bench-idle-token"])
        .args(["--github-api-url", "http://127.0.0.1:9"])
        .env("SWEEPGATE_LOG", "error")
        .env_remove("SWEEPGATE_CONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting sweepgate serve")?;
    let pid = child.id().context("serve exited at once")?.to_string();
    let client = reqwest::Client::new();
    let start = Instant::now();
    let url = format!("http://127.0.0.1:{port}/healthz");
    loop {
        if client
            .get(&url)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            break;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill().await;
            anyhow::bail!("serve did not answer /healthz within 20 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the workers reach their idle poll.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss = status_kb(&pid, "VmRSS");
    let _ = child.kill().await;
    rss
}

async fn peak_kb(args: &BenchArgs) -> anyhow::Result<u64> {
    let out = tokio::process::Command::new(exe()?)
        .args(["bench", "--peak-inner"])
        .args(fixture_args(args))
        .stderr(Stdio::inherit())
        .output()
        .await?;
    anyhow::ensure!(
        out.status.success(),
        "the 3,000-file run exited with {}",
        out.status
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM-kB ")?.trim().parse().ok())
        .context("no VmHWM in the 3,000-file run's output")
}

pub(crate) async fn rows(args: &BenchArgs, r: &mut Report) -> anyhow::Result<()> {
    let mb = |kb: u64| kb as f64 / 1024.0;
    let (figure, status) = match idle_rss_kb(args).await {
        Ok(kb) => (
            format!("{:.1} MB VmRSS", mb(kb)),
            Status::of(mb(kb) < budget::RSS_IDLE_MB),
        ),
        Err(e) => (format!("failed: {e:#}"), Status::Skipped),
    };
    r.rows.push(Row {
        id: "rss-idle".into(),
        what: "Resident memory, `sweepgate serve` idle (SQLite, 4 workers)".into(),
        figure,
        budget: format!("< {:.0} MB", budget::RSS_IDLE_MB),
        status,
        ir: None,
        command: super::cmd("memory"),
    });
    let (figure, status) = match peak_kb(args).await {
        Ok(kb) => (
            format!("{:.1} MB VmHWM", mb(kb)),
            Status::of(mb(kb) < budget::RSS_3000_MB),
        ),
        Err(e) => (format!("failed: {e:#}"), Status::Skipped),
    };
    r.rows.push(Row {
        id: "rss-3000".into(),
        what: "Peak resident memory, verifying and linting a 3,000-file PR (real master configs)"
            .into(),
        figure,
        budget: format!("< {:.0} MB", budget::RSS_3000_MB),
        status,
        ir: None,
        command: super::cmd("memory"),
    });
    Ok(())
}
