//! `cargo xtask bench --quick` runs every benchmark and writes a report with
//! every row and two well-formed SVG plots. Nothing here asserts a time:
//! budgets are reported by the benchmark, never tested.
use std::process::Command;

/// Every tag opened is closed in order (a well-formedness check without an
/// XML dependency); the root is `<svg>`.
fn assert_well_formed_svg(text: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = text;
    let mut saw_root = false;
    while let Some(i) = rest.find('<') {
        let after = &rest[i + 1..];
        let end = after.find('>').expect("unterminated tag");
        let tag = &after[..end];
        rest = &after[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.trim()),
                "mismatched </{name}>"
            );
            continue;
        }
        let name = tag
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap()
            .to_string();
        if stack.is_empty() {
            assert_eq!(name, "svg", "the root element is <svg>");
            assert!(!saw_root, "one root element");
            saw_root = true;
        }
        if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    assert!(saw_root && stack.is_empty(), "unclosed elements: {stack:?}");
    assert!(
        !text.contains("NaN") && !text.contains("inf"),
        "no NaN/inf coordinates"
    );
}

#[test]
fn quick_bench_writes_every_row_and_both_plots() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("performance.md");
    let run = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["bench", "--quick", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "bench failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = std::fs::read_to_string(&out).unwrap();
    for id in [
        "`ack-sqlite`",
        "`ack-sqlite-max`",
        "`ack-postgres`",
        "`ack-postgres-max`",
        "`parse-masters`",
        "`parse-changelog`",
        "`expansion`",
        "`matrix`",
        "`verdict`",
        "`verdict-warm`",
        "`lint`",
        "`lint-warm`",
        "`e2e`",
        "`rss-idle`",
        "`rss-3000`",
        "`replay`",
    ] {
        assert!(report.contains(id), "row {id} missing:\n{report}");
    }
    for needle in [
        "## Machine",
        "| nproc |",
        "| CPU |",
        "| memory |",
        "cargo xtask bench --only",
        "| 10 files |",
        "| 100 files |",
        "| 1000 files |",
        "| 3000 files |",
        "| master configs 1× |",
        "| master configs 4× |",
        "| master configs 16× |",
        "verdict time(16×)/time(1×)",
        "verdict time(3,000 files)/time(10 files)",
        "perf-growth-files.svg",
        "perf-growth-configs.svg",
        "## Missed budgets",
        "## Notes",
    ] {
        assert!(report.contains(needle), "{needle} missing:\n{report}");
    }
    // Every budgeted row says met or MISSED; a failure would say "failed".
    assert!(!report.contains("failed:"), "a benchmark failed:\n{report}");
    for svg in ["perf-growth-files.svg", "perf-growth-configs.svg"] {
        let text = std::fs::read_to_string(dir.path().join(svg)).unwrap();
        assert_well_formed_svg(&text);
        assert!(text.contains("<polyline"), "{svg} has no line");
    }
}
