//! The CLI on a temporary git repository (base and head commits of the seed
//! 004 fixture): the same findings as the in-memory input, SARIF 2.1.0
//! shape, exit status 1 on errors, 0 when clean, 2 on usage errors.

use crate::lint_support as support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use sweepgate::cli::lint::{self as cli, Args, Format};
use sweepgate_core::checks::lint::{lint, sarif};

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&st.stderr)
    );
}

fn write_tree(dir: &Path, tree: &BTreeMap<String, Vec<u8>>) {
    for (p, b) in tree {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b).unwrap();
    }
}

/// A repository whose `base` branch holds the base tree and `head` the head tree.
fn repo(name: &str) -> tempfile::TempDir {
    let (base, head, _) = support::trees(name);
    let d = tempfile::tempdir().unwrap();
    git(d.path(), &["init", "-q", "-b", "base"]);
    write_tree(d.path(), &base);
    git(d.path(), &["add", "-A"]);
    git(d.path(), &["commit", "-q", "-m", "base"]);
    git(d.path(), &["checkout", "-q", "-b", "head"]);
    for p in base.keys().filter(|p| !head.contains_key(*p)) {
        std::fs::remove_file(d.path().join(p)).unwrap();
    }
    write_tree(d.path(), &head);
    git(d.path(), &["add", "-A"]);
    git(d.path(), &["commit", "-q", "-m", "head"]);
    d
}

fn args(dir: &Path, format: Format, pr: Option<u64>) -> Args {
    Args::range(&dir.to_string_lossy(), "base", "head", pr, format)
}

#[tokio::test]
async fn git_input_matches_in_memory_input() {
    let d = repo("seed004");
    let from_git = cli::run(&args(d.path(), Format::Text, Some(1200)))
        .await
        .unwrap();
    let mem = lint(&support::scenario("seed004"));
    assert_eq!(
        support::keys(&from_git),
        support::keys(&mem),
        "{}",
        support::dump(&from_git)
    );
    assert!(from_git.iter().any(|f| f.rule == "L01"));
}

#[tokio::test]
async fn sarif_is_usable_by_code_scanning() {
    let d = repo("seed003");
    let findings = cli::run(&args(d.path(), Format::Sarif, Some(1145)))
        .await
        .unwrap();
    let v = sarif::to_sarif(&findings);
    assert_eq!(v["version"], "2.1.0");
    assert!(v["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let run = &v["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(run["tool"]["driver"]["name"], "sweepgate-recipe-lint");
    for id in ["L01", "L17", "L30"] {
        let r = rules.iter().find(|r| r["id"] == id).unwrap();
        assert!(!r["shortDescription"]["text"].as_str().unwrap().is_empty());
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), findings.len());
    for (r, f) in results.iter().zip(&findings) {
        assert_eq!(r["ruleId"], f.rule);
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx]["id"], f.rule);
        assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
        assert!(!r["message"]["text"].as_str().unwrap().is_empty());
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], f.file.as_str());
        assert_eq!(
            loc["region"]["startLine"].as_u64().unwrap() as usize,
            f.line
        );
    }
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "L09" && r["level"] == "error")
    );
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "L17" && r["level"] == "warning")
    );
    // JSON output carries the same findings.
    let json: serde_json::Value =
        serde_json::from_str(&cli::render(&findings, Format::Json)).unwrap();
    assert_eq!(json["findings"].as_array().unwrap().len(), findings.len());
    // Text: one line per finding, `file:line: severity[Lnn] message (fix: …)`.
    let text = cli::render(&findings, Format::Text);
    assert_eq!(text.lines().count(), findings.len());
    assert!(text.lines().any(|l| l.starts_with("perf-changelog.yaml:")
        && l.contains(": error[L16] ")
        && l.contains("(fix: pr-link:")));
}

#[test]
fn exit_status_follows_errors_and_usage() {
    let d = repo("seed004");
    let p = d.path().to_string_lossy().to_string();
    let code = |a: &[&str]| {
        format!(
            "{:?}",
            sweepgate::cli::main_from(
                std::iter::once("sweepgate")
                    .chain(a.iter().copied())
                    .map(std::ffi::OsString::from),
            )
        )
    };
    let errors = code(&[
        "lint", "--repo", &p, "--base", "base", "--head", "head", "--pr", "1200", "--format",
        "json",
    ]);
    assert_eq!(errors, format!("{:?}", std::process::ExitCode::from(1)));
    let clean = repo("seed001");
    let p1 = clean.path().to_string_lossy().to_string();
    assert_eq!(
        code(&[
            "lint", "--repo", &p1, "--base", "base", "--head", "head", "--pr", "1300"
        ]),
        format!("{:?}", std::process::ExitCode::SUCCESS)
    );
    assert_eq!(
        code(&["lint", "--repo", &p]),
        format!("{:?}", std::process::ExitCode::from(2))
    );
    assert_eq!(
        code(&["lint", "--repo", &p, "--base", "base", "--head", "nope"]),
        format!("{:?}", std::process::ExitCode::from(2))
    );
    assert_eq!(
        code(&[
            "lint", "--repo", &p, "--base", "base", "--head", "head", "--format", "xml"
        ]),
        format!("{:?}", std::process::ExitCode::from(2))
    );
}

#[tokio::test]
async fn sarif_carries_fingerprints_and_baseline_states() {
    let d = repo("seed003");
    let judged = cli::run_judged(&args(d.path(), Format::Sarif, Some(1145)))
        .await
        .unwrap();
    let v = sarif::to_sarif_judged(&judged);
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), judged.len());
    for (r, j) in results.iter().zip(&judged) {
        assert_eq!(
            r["partialFingerprints"][sarif::FINGERPRINT_KEY],
            j.fingerprint.as_str()
        );
        assert_eq!(r["baselineState"], j.baseline.as_str());
    }
    // The seed's scripts are new in the PR: every finding is new, and the
    // CLI's text marks none as pre-existing.
    assert!(results.iter().all(|r| r["baselineState"] == "new"));
    assert!(!cli::render_judged(&judged, Format::Text).contains("[pre-existing]"));
}
