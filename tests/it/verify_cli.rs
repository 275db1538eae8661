//! `sweepgate check` on a local git range built from the seed 002 fixture:
//! facts only GitHub has are absent, and the checks that need them say so
//! (REVIEW or N/A with the reason) instead of guessing.
use std::path::Path;
use std::process::Command;

use chrono::NaiveDate;
use sweepgate::snapshot::{self, GithubFacts};
use sweepgate_core::checks::Outcome;

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_AUTHOR_DATE", "2026-10-14T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-10-14T00:00:00Z")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

fn repo() -> tempfile::TempDir {
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify/seed002");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    copy_tree(&fx.join("policy"), d);
    copy_tree(&fx.join("base"), d);
    std::fs::copy(fx.join("config.toml"), d.join(".github/sweepgate.toml")).unwrap();
    std::fs::copy(
        fx.join("verifier.toml"),
        d.join(".github/sweepgate-verifier.toml"),
    )
    .unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["checkout", "-q", "-b", "pr"]);
    copy_tree(&fx.join("head"), d);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "head"]);
    dir
}

#[test]
fn local_range_without_github_facts_reviews_what_it_cannot_know() {
    let dir = repo();
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify/seed002");
    let signoff = std::fs::read_to_string(fx.join("signoff.md")).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let today = NaiveDate::from_ymd_opt(2026, 10, 16).unwrap();
    let (v, s, _) = rt
        .block_on(snapshot::check_local(
            dir.path(),
            "main",
            "pr",
            Some(&signoff),
            GithubFacts::default(),
            None,
            today,
        ))
        .unwrap();
    assert_eq!(
        s.files.len(),
        3,
        "{:?}",
        s.files.iter().map(|f| &f.path).collect::<Vec<_>>()
    );
    let o = |n: usize| (v.rows[n].outcome, v.rows[n].reason.as_str());
    assert_eq!(o(0).0, Outcome::Pass, "{}", o(0).1);
    assert_eq!(
        o(1),
        (
            Outcome::Review,
            "check runs were not provided (local range); cannot confirm a green sweep on an in-PR commit."
        )
    );
    assert_eq!(
        o(2),
        (
            Outcome::Review,
            "run artifacts were not provided; eval scores and image cannot be read."
        )
    );
    assert_eq!(o(3).0, Outcome::Review, "{}", o(3).1);
    assert!(o(3).1.contains("sgl-project/sglang#44712"), "{}", o(3).1);
    assert_eq!(o(4).0, Outcome::Review);
    for n in [5, 6, 7, 8, 9, 10, 11, 13, 16] {
        assert_eq!(o(n).0, Outcome::Pass, "Check {n}: {}", o(n).1);
    }
    assert_eq!(o(12).0, Outcome::NotApplicable);
    assert_eq!(o(14).0, Outcome::Review);
    assert_eq!(o(17).0, Outcome::NotApplicable);
    assert!(!v.passed());

    // With the run's artifacts, Checks 2 and 14 decide.
    let art = snapshot::read_artifacts(&fx.join("artifacts")).unwrap();
    let (v, _, _) = rt
        .block_on(snapshot::check_local(
            dir.path(),
            "main",
            "pr",
            Some(&signoff),
            GithubFacts::default(),
            Some(art),
            today,
        ))
        .unwrap();
    assert_eq!(v.rows[2].outcome, Outcome::Pass, "{}", v.rows[2].reason);
    assert_eq!(v.rows[14].outcome, Outcome::Pass, "{}", v.rows[14].reason);
}

#[test]
fn cli_exit_codes() {
    let dir = repo();
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify/seed002");
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = ["check", "--repo"].map(String::from).to_vec();
        a.push(dir.path().display().to_string());
        a.extend(["--base", "main", "--head", "pr", "--today", "2026-10-16"].map(String::from));
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let main = |a: Vec<String>| {
        sweepgate::cli::main_from(
            std::iter::once("sweepgate".to_owned())
                .chain(a)
                .map(std::ffi::OsString::from),
        )
    };
    let signoff = fx.join("signoff.md").display().to_string();
    // Rejected (GitHub facts missing): exit 1.
    assert_eq!(
        main(args(&["--signoff", &signoff, "--format", "json"])),
        std::process::ExitCode::from(1)
    );
    // Usage error: exit 2.
    assert_eq!(
        main(args(&["--format", "yaml"])),
        std::process::ExitCode::from(2)
    );
}
