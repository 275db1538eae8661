//! Lint where authors are: the Action's entry script and the pre-commit
//! hook, run locally on a real commit of the history corpus (#2697, which
//! inserts its changelog entry before existing ones and links another PR:
//! two new L16 errors, and a moving image tag: an L13 warning).
use crate::common;
use crate::repo_git::git;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const COMMIT: &str = "e58af4a702f33acb29af9f6199cdb53f813458de";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn history() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("history");
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(common::data_dir().join("history/inferencex-history.bundle"))
        .arg(&clone)
        .output()
        .unwrap();
    assert!(out.status.success());
    (dir, clone)
}

/// `git commit` with `PATH` as given (the hook finds `sweepgate` on it).
fn commit_through_hook(clone: &Path, path: &str, message: &str) -> std::process::Output {
    Command::new("git")
        .arg("-C")
        .arg(clone)
        .args(["commit", "-q", "-m", message])
        .env("PATH", path)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap()
}

fn sweepgate(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_action_script_uploads_sarif_and_annotates_a_real_commit() {
    let (dir, clone) = history();
    let base = format!("{COMMIT}^");
    let sarif = dir.path().join("lint.sarif");
    let outputs = dir.path().join("github-output");
    let out = Command::new(root().join("scripts/sweepgate-lint-action.sh"))
        .args([base.as_str(), COMMIT])
        .arg(&sarif)
        .env("SWEEPGATE_BIN", env!("CARGO_BIN_EXE_sweepgate"))
        .env("SWEEPGATE_REPO", &clone)
        .env("GITHUB_OUTPUT", &outputs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // A new error fails the step.
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let annotations: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(
        annotations,
        [
            "::error file=perf-changelog.yaml,line=6211,title=L16::pr-link points at #2670, but this is PR #2697 Fix: pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2697",
            "::warning file=configs/amd-master.yaml,line=655,title=L13::`kimik3-fp4-mi355x-atom-agentic-mtp` uses the moving tag `ubuntu24.04_py3.12_pytorch_release_2.10.0_kimi_k3_agentic_0820`; a rerun may measure a different image Fix: pin `rocm/atom-dev:ubuntu24.04_py3.12_pytorch_release_2.10.0_kimi_k3_agentic_0820@sha256:<digest>`",
            "::warning file=perf-changelog.yaml,line=6199,title=L16::a new changelog entry is inserted before existing ones; new entries go at the end of the file Fix: move the new entry to the end of the file",
        ]
    );
    // The SARIF the upload step takes: the same findings.
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), annotations.len());
    let rules: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["L16", "L13", "L16"]);
    assert_eq!(
        std::fs::read_to_string(&outputs).unwrap(),
        format!("sarif={}\n", sarif.display())
    );
}

#[test]
fn the_pre_commit_hook_lints_the_staged_change() {
    let (_dir, clone) = history();
    // The commit's change, staged on its parent: HEAD is the parent, the
    // index and work tree are the commit.
    git(
        &clone,
        &["checkout", "-q", "--detach", &format!("{COMMIT}^")],
    );
    git(&clone, &["read-tree", "-u", "--reset", COMMIT]);
    let staged = git(&clone, &["diff", "--cached", "--name-only"]);
    assert!(staged.contains("perf-changelog.yaml"), "{staged}");

    // `--staged` judges exactly what `--base HEAD --head <commit>` does;
    // the PR number, which a commit subject names, is given.
    let repo = clone.to_str().unwrap();
    let (code, text) = sweepgate(&["lint", "--repo", repo, "--staged", "--pr", "2697"]);
    let (want_code, want) =
        sweepgate(&["lint", "--repo", repo, "--base", "HEAD", "--head", COMMIT]);
    assert_eq!((code, text.as_str()), (want_code, want.as_str()));
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("error[L16] pr-link points at #2670"),
        "{text}"
    );
    // Without it (a hook knows no PR), the pr-link is not judged, and the
    // entry's position is a warning (a squash merge's placement looks like
    // an insertion against a parent, `docs/precision.md`).
    let (code, text) = sweepgate(&["lint", "--repo", repo, "--staged"]);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("pr-link"), "{text}");
    assert!(
        text.contains("warning[L16] a new changelog entry is inserted before existing ones"),
        "{text}"
    );

    // A link with a suffix is not canonical whatever the PR: staged, it is
    // a new error without `--pr`.
    let log = clone.join("perf-changelog.yaml");
    let changed = std::fs::read_to_string(&log).unwrap().replace(
        "pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2670\n",
        "pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2670/changes\n",
    );
    std::fs::write(&log, changed).unwrap();
    git(&clone, &["add", "perf-changelog.yaml"]);

    // As git's pre-commit hook: the commit is refused, nothing moves.
    let hook = clone.join(".git/hooks/pre-commit");
    std::fs::copy(root().join("scripts/sweepgate-pre-commit.sh"), &hook).unwrap();
    let head = git(&clone, &["rev-parse", "HEAD"]);
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_sweepgate"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let commit = commit_through_hook(&clone, &path, "the staged change");
    assert!(!commit.status.success(), "the hook let a new error in");
    // git shows a hook's output on its stderr.
    let said = String::from_utf8_lossy(&commit.stdout).into_owned()
        + &String::from_utf8_lossy(&commit.stderr);
    assert!(
        said.contains("error[L16] pr-link `https://github.com/SemiAnalysisAI/InferenceX/pull/2670/changes` is not a canonical"),
        "{said}"
    );
    assert_eq!(git(&clone, &["rev-parse", "HEAD"]), head);
    // The hook file the framework runs names the same script.
    let hooks = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    assert!(hooks.contains("entry: scripts/sweepgate-pre-commit.sh"));
    assert!(hooks.contains("pass_filenames: false"));

    // A clean staged change commits.
    git(&clone, &["read-tree", "-u", "--reset", "HEAD"]);
    std::fs::write(clone.join("NOTES.txt"), "a note\n").unwrap();
    git(&clone, &["add", "NOTES.txt"]);
    let ok = commit_through_hook(&clone, &path, "a clean change");
    assert!(
        ok.status.success(),
        "{}{}",
        String::from_utf8_lossy(&ok.stdout),
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_ne!(git(&clone, &["rev-parse", "HEAD"]), head);
}
