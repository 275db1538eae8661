//! The replay of the benchmark repository's real history
//! (`tests/data/history/`): every first-parent commit replayed as a PR
//! (lint judged against its base, the sweep gate, `check` without a
//! sign-off), reported as throughput and per-commit times, with the crash
//! count and the share of PRs with an error before and after judging new
//! findings only (`docs/precision.md`).
use std::process::Command;

use anyhow::Context;
use serde_json::Value;
use sweepgate::cli::replay::{self, Args, Format};

use super::report::{Report, Row, Status};
use super::{BenchArgs, cmd};

/// Clones the history bundle into a temporary directory.
pub(crate) fn clone_history() -> anyhow::Result<(tempfile::TempDir, std::path::PathBuf)> {
    let bundle = crate::workspace_root().join("tests/data/history/inferencex-history.bundle");
    let tmp = tempfile::tempdir()?;
    let dir = tmp.path().join("history");
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(&bundle)
        .arg(&dir)
        .output()
        .context("git clone of the history bundle")?;
    anyhow::ensure!(
        out.status.success(),
        "git clone {}: {}",
        bundle.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((tmp, dir))
}

pub(crate) async fn rows(args: &BenchArgs, r: &mut Report) -> anyhow::Result<()> {
    let (_tmp, dir) = clone_history()?;
    let mut a = Args::new(&dir);
    a.format = Format::Json;
    // One commit at a time: the per-commit times are what a PR waits.
    a.jobs = 1;
    if args.quick {
        a.last = Some(20);
    }
    let mut sink = |_: &str| Ok(());
    let done = replay::replay(&a, &mut sink)
        .await
        .map_err(anyhow::Error::msg)?;
    let s = &done.summary;
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let commits = n(&s["commits"]);
    let pct = |k: u64| {
        if commits == 0 {
            0.0
        } else {
            k as f64 * 100.0 / commits as f64
        }
    };
    let crashes = n(&s["panics"]) + n(&s["lint_exits"]["2"]) + n(&s["check_exits"]["2"]);
    let (before, after) = (n(&s["prs_with_error_before"]), n(&s["prs_with_new_error"]));
    r.rows.push(Row {
        id: "replay".into(),
        what: format!(
            "Replay of the real history, {commits} first-parent commits as PRs (lint judged against the base, sweep gate, check without a sign-off), one job"
        ),
        figure: format!(
            "{:.2} commits/s; lint median {} ms, max {} ms; check median {} ms, max {} ms; {crashes} crashes, {} inputs not read; PRs with an error: {before} ({:.1}%) counted on the whole scope, {after} ({:.1}%) new",
            s["commits_per_second"].as_f64().unwrap_or(0.0),
            n(&s["lint_time"]["median_ms"]),
            n(&s["lint_time"]["max_ms"]),
            n(&s["check_time"]["median_ms"]),
            n(&s["check_time"]["max_ms"]),
            n(&s["unread"]),
            pct(before),
            pct(after),
        ),
        budget: "— (0 crashes)".into(),
        status: if done.ok && crashes == 0 {
            Status::NoBudget
        } else {
            Status::of(false)
        },
        ir: None,
        command: cmd("replay"),
    });
    Ok(())
}
