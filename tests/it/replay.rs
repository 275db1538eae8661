//! The replay of the real history (`tests/data/history/`): regression
//! tests built from real commits of the corpus, and the replay command's
//! guarantees (no crash, history order whatever `--jobs`, layout per
//! commit, per-rule commit counts).
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use sweepgate::cli::lint::{Args as LintArgs, Format as LintFormat, run_judged};
use sweepgate::cli::replay::{self, Args, Format};

/// #2663 adds a script, a recipe and master entries: reading its base
/// inside a checkout used to fail with "exists on disk, but not in".
const ADDS_FILES: &str = "37d84cf";

/// A work-tree clone of the history bundle, made once per test binary.
fn history() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, dir) = DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("history");
        let bundle = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/history/inferencex-history.bundle");
        let out = Command::new("git")
            .args(["clone", "-q"])
            .arg(&bundle)
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (tmp, dir)
    });
    dir
}

/// Replay arguments for comparable JSON lines (no timings).
fn json_args() -> Args {
    let mut a = Args::new(history());
    a.format = Format::Json;
    a.no_times = true;
    a
}

/// The replay's JSON lines (the summary line last) and its outcome.
pub(crate) fn replay_lines(args: &Args) -> (Vec<String>, replay::Replayed) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut out = String::new();
    let done = rt
        .block_on(replay::replay(args, &mut |l: &str| {
            out.push_str(l);
            Ok(())
        }))
        .unwrap();
    (out.lines().map(str::to_owned).collect(), done)
}

#[tokio::test]
async fn check_in_a_checkout_reads_a_pr_that_adds_a_file() {
    let dir = history();
    let (v, s, _) = sweepgate::snapshot::check_local(
        dir,
        &format!("{ADDS_FILES}^"),
        ADDS_FILES,
        None,
        Default::default(),
        None,
        chrono::NaiveDate::from_ymd_opt(2026, 8, 20).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(v.rows.len(), 18);
    // The PR number comes from the subject's last `(#NNNN)`.
    assert_eq!(s.pr.number, 2663);
    assert!(s.files.iter().any(|f| f.status == "added"), "{:?}", s.files);
}

#[tokio::test]
async fn lint_takes_the_pr_from_the_subject_and_judges_against_the_base() {
    let dir = history();
    let args = LintArgs::range(
        &dir.to_string_lossy(),
        &format!("{ADDS_FILES}^"),
        ADDS_FILES,
        None,
        LintFormat::Json,
    );
    let judged = run_judged(&args).await.unwrap();
    // The PR links its own number: no "link to another PR" error.
    assert!(
        !judged
            .iter()
            .any(|j| j.finding.rule == "L16" && j.finding.message.contains("2663")),
        "{judged:#?}"
    );
    for j in &judged {
        assert_eq!(j.fingerprint.len(), 32);
    }
}

#[test]
fn the_replay_keeps_history_order_whatever_the_jobs_and_does_not_crash() {
    let mut a = json_args();
    a.last = Some(4);
    let (one, done) = replay_lines(&a);
    a.jobs = 2;
    let (two, _) = replay_lines(&a);
    assert_eq!(one, two);
    assert_eq!(one.len(), 5, "{one:#?}");
    assert!(done.ok, "{one:#?}");
    assert_eq!(done.summary["panics"], 0);
    assert_eq!(done.summary["commits"], 4);
    let first: serde_json::Value = serde_json::from_str(&one[0]).unwrap();
    for k in ["commit", "pr", "lint", "check", "gate"] {
        assert!(first.get(k).is_some(), "{first}");
    }
    assert_eq!(first["check"]["rows"].as_array().unwrap().len(), 18);
    // Every rule whose inputs exist ran on every commit of August 2026.
    assert_eq!(done.summary["rules"]["L01"]["commits_run"], 4);
}

#[test]
fn old_commits_read_the_layout_of_their_time() {
    // #666 (2026-02-19): master configs under .github/configs/, no
    // scenario folders yet, no srt recipes, no MODELS.md.
    let mut a = json_args();
    a.range = Some("2477e8b^..2477e8b".into());
    let (lines, done) = replay_lines(&a);
    assert!(done.ok, "{lines:#?}");
    let r: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(r["pr"], 666);
    let ran: Vec<&str> = r["lint"]["rules_run"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for off in ["L01", "L02", "L04", "L18", "L19", "L29"] {
        assert!(!ran.contains(&off), "{off} ran: {ran:?}");
    }
    for on in ["L03", "L13", "L16", "L23"] {
        assert!(ran.contains(&on), "{on} did not run: {ran:?}");
    }
    // The master configs were read where they lived then: no finding names
    // today's `configs/` paths, and what today's parsers cannot read of
    // that era's files is counted and named, not skipped.
    let findings = r["lint"]["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .all(|f| !f["file"].as_str().unwrap().starts_with("configs/")),
        "{r}"
    );
    let unread = findings.iter().filter(|f| f["rule"] == "L00").count();
    assert_eq!(r["lint"]["unread"], unread);
}

#[tokio::test]
async fn a_configured_input_absent_at_base_and_head_is_a_finding() {
    // The default layout (`configs/`) on a commit of the `.github/configs/`
    // era: the lint says so instead of finding nothing.
    let dir = history();
    let args = LintArgs::range(
        &dir.to_string_lossy(),
        "2477e8b^",
        "2477e8b",
        None,
        LintFormat::Text,
    );
    let judged = run_judged(&args).await.unwrap();
    let l00: Vec<_> = judged
        .iter()
        .filter(|j| j.finding.rule == "L00" && j.finding.file == "configs/nvidia-master.yaml")
        .collect();
    // One finding for the set of master configs, naming both.
    assert!(
        l00[0].finding.message.contains("configs/amd-master.yaml"),
        "{}",
        l00[0].finding
    );
    assert_eq!(l00.len(), 1, "{judged:#?}");
    assert!(
        l00[0]
            .finding
            .message
            .contains("are absent at base and head"),
        "{}",
        l00[0].finding
    );
}

#[test]
fn the_root_commit_is_recorded_as_skipped_not_as_a_run() {
    let mut a = json_args();
    // "Moved to new org.", the first commit: no parent to compare with.
    a.range = Some("40fc9f704bdb".into());
    let (lines, done) = replay_lines(&a);
    assert!(done.ok);
    let r: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert!(r["skipped"].as_str().unwrap().contains("no parent"), "{r}");
    assert_eq!(done.summary["skipped"], 1);
    assert_eq!(done.summary["lint_exits"], serde_json::json!({}));
}
