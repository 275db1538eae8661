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

/// Commits replayed at once (the machine of the budget has 2 cores).
const JOBS: usize = 2;
/// The budget for the whole history.
const BUDGET_S: f64 = 60.0;

pub(crate) async fn rows(args: &BenchArgs, r: &mut Report) -> anyhow::Result<()> {
    let (_tmp, dir) = clone_history()?;
    let mut a = Args::new(&dir);
    a.format = Format::Json;
    // Both cores, as the budget is for 2 cores; the per-commit times are
    // then what a PR waits with one other replayed beside it.
    a.jobs = JOBS;
    a.last = if args.quick {
        Some(20)
    } else {
        (args.replay_last > 0).then_some(args.replay_last)
    };
    let history = Command::new("git")
        .arg("-C")
        .arg(&dir)
        .args(["rev-list", "--first-parent", "--count", "HEAD"])
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(0);
    let mut sink = |_: &str| Ok(());
    let done = replay::replay(&a, &mut sink)
        .await
        .map_err(anyhow::Error::msg)?;
    let s = &done.summary;
    let secs = s["seconds"].as_f64().unwrap_or(f64::INFINITY);
    let cps = s["commits_per_second"].as_f64().unwrap_or(0.0);
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
    if !args.quick && cps > 0.0 && (history as f64 / cps) >= BUDGET_S {
        r.note(
            "replay",
            format!(
                "The budget needs {:.1} commits/s; this run did {cps:.2} on {JOBS} jobs, \
                 {:.0} ms of wall time per commit and job (lint median {} ms, check median {} ms \
                 per commit). No profile of the replay was taken by this command.",
                history as f64 / BUDGET_S,
                JOBS as f64 * 1e3 / cps,
                n(&s["lint_time"]["median_ms"]),
                n(&s["check_time"]["median_ms"]),
            ),
        );
    }
    r.rows.push(Row {
        id: "replay".into(),
        what: format!(
            "Replay of the real history ({history} first-parent commits), {} as PRs (lint judged against the base, sweep gate, check without a sign-off), `--jobs {JOBS}`",
            if commits >= history {
                "all of them".to_owned()
            } else {
                format!("the newest {commits}; the whole history's time is projected from their rate")
            }
        ),
        figure: format!(
            "{:.1} s{}, {:.2} commits/s; lint median {} ms, max {} ms; check median {} ms, max {} ms; {crashes} crashes, {} inputs not read; PRs with an error: {before} ({:.1}%) counted on the whole scope, {after} ({:.1}%) new",
            secs,
            if commits < history && cps > 0.0 {
                format!(" (whole history projected: {:.0} s)", history as f64 / cps)
            } else {
                String::new()
            },
            cps,
            n(&s["lint_time"]["median_ms"]),
            n(&s["lint_time"]["max_ms"]),
            n(&s["check_time"]["median_ms"]),
            n(&s["check_time"]["max_ms"]),
            n(&s["unread"]),
            pct(before),
            pct(after),
        ),
        budget: if args.quick {
            "— (quick: the last 20 commits; 0 crashes)".into()
        } else {
            format!("< {BUDGET_S:.0} s for the whole history, 0 crashes")
        },
        status: if !(done.ok && crashes == 0) {
            Status::of(false)
        } else if args.quick {
            Status::NoBudget
        } else {
            let whole = if commits >= history {
                secs
            } else if cps > 0.0 {
                history as f64 / cps
            } else {
                f64::INFINITY
            };
            Status::of(whole < BUDGET_S)
        },
        ir: None,
        command: if args.quick {
            cmd("replay")
        } else if args.replay_last == 0 {
            format!("{} --replay-last 0", cmd("replay"))
        } else {
            format!("{} --replay-last {}", cmd("replay"), args.replay_last)
        },
    });
    Ok(())
}
