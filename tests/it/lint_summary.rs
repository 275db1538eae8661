//! The recipe-lint summary comment (docs/contracts.md §4): marker per head SHA,
//! 🔴 errors, 🟡 warnings, ℹ️ info collapsed, one line per finding with
//! `file:line`, rule id and fix; one line for a clean PR.

use crate::lint_support as support;

use sweepgate::lint::summary::{marker, render};

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

#[test]
fn seed_003_summary_groups_by_severity() {
    let f = support::run("seed003");
    let body = render(SHA, &f).unwrap();
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
    let f = support::run("seed000");
    let body = render(SHA, &f).unwrap();
    assert!(
        body.contains("<details><summary>ℹ️ 1 info</summary>"),
        "{body}"
    );
    let clean = render(SHA, &[]).unwrap();
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
