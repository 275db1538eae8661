//! The recipe-lint summary comment (docs/contracts.md §4): marker per head SHA,
//! 🔴 errors, 🟡 warnings, ℹ️ info collapsed, one line per finding with
//! `file:line`, rule id and fix; one line for a clean PR.

use crate::lint_support as support;

use sweepgate::lint::summary::{marker, render};
use sweepgate_core::checks::lint::{BaselineState, Finding, Judged, Severity, lint_judged};

fn judged(name: &str) -> Vec<Judged> {
    lint_judged(&support::scenario(name))
}

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

#[test]
fn seed_003_summary_groups_by_severity() {
    let f = judged("seed003");
    let body = render(SHA, &f, |_| true).unwrap();
    assert!(body.starts_with(&marker(SHA)), "{body}");
    assert!(
        body.contains(
            "<!-- sweepgate:recipe-lint sha=0123456789abcdef0123456789abcdef01234567 -->"
        )
    );
    assert!(body.contains("**🔴 4 errors**"), "{body}");
    assert!(body.contains("🟡"), "{body}");
    assert!(body.contains("- `perf-changelog.yaml:"), "{body}");
    assert!(
        body.contains("**L16**")
            && body
                .contains("fix: pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1145"),
        "{body}"
    );
    let err_pos = body.find("🔴").unwrap();
    let warn_pos = body.find("🟡").unwrap();
    assert!(err_pos < warn_pos);
    let lines = body.lines().filter(|l| l.starts_with("- `")).count();
    assert_eq!(lines, f.len(), "{body}");
}

#[test]
fn info_is_collapsed_and_clean_is_one_line() {
    let f = judged("seed000");
    let body = render(SHA, &f, |_| true).unwrap();
    assert!(
        body.contains("<details><summary>ℹ️ 1 info</summary>"),
        "{body}"
    );
    let clean = render(SHA, &[], |_| true).unwrap();
    assert!(
        clean.contains("✅ No recipe lint findings on 0123456."),
        "{clean}"
    );
    assert_eq!(
        clean.lines().filter(|l| !l.trim().is_empty()).count(),
        3,
        "{clean}"
    );
}

fn existing(rule: &'static str, severity: Severity, file: &str, line: usize) -> Judged {
    Judged {
        finding: Finding {
            rule,
            severity,
            file: file.into(),
            line,
            message: format!("`{rule}` was already there"),
            fix: None,
            subject: None,
            identity: None,
            known_at_base: false,
        },
        fingerprint: "0".repeat(32),
        baseline: BaselineState::Unchanged,
        on_changed_line: false,
    }
}

#[test]
fn pre_existing_findings_are_collapsed_with_counts_and_never_listed_open() {
    let mut f = judged("seed004");
    let new_errors = f
        .iter()
        .filter(|j| j.is_new() && j.finding.severity == Severity::Error)
        .count();
    f.push(existing("L12", Severity::Error, "benchmarks/a.sh", 3));
    f.push(existing("L06", Severity::Warning, "benchmarks/a.sh", 9));
    f.push(existing(
        "L03",
        Severity::Warning,
        "configs/runners.yaml",
        1,
    ));
    let body = render(SHA, &f, |p| p == "benchmarks/a.sh").unwrap();
    assert!(body.contains(&format!("**🔴 {new_errors} error")), "{body}");
    assert!(
        body.contains("<details><summary>Already on the base branch, in files this PR touches: 1 error, 1 warning (not counted against this PR)</summary>"),
        "{body}"
    );
    assert!(body.contains("- 🔴 `benchmarks/a.sh:3` **L12**"), "{body}");
    assert!(
        body.contains("1 more finding already on the base branch in files this PR does not touch"),
        "{body}"
    );
    assert!(!body.contains("configs/runners.yaml:1"), "{body}");

    // Only pre-existing findings: no new one, said so.
    let only = vec![existing("L12", Severity::Error, "benchmarks/a.sh", 3)];
    let body = render(SHA, &only, |_| true).unwrap();
    assert!(
        body.contains("✅ No new recipe lint findings on 0123456."),
        "{body}"
    );
    assert!(!body.contains("**🔴"), "{body}");
}
