//! Every case of `tests/data/expected-matrix/cases.tsv` against the reference
//! outputs: the JSON list (values and order), the exit code, and for failing
//! cases the problem named on the last line of stderr.
use std::path::Path;

use sweepgate_core::matrix;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn args_of(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// The problem named on the last line of an error text, without the
/// Python exception class or argparse program prefix.
fn problem(last_line: &str) -> &str {
    let l = last_line.trim();
    if let Some((_, rest)) = l.split_once("error: ") {
        return rest;
    }
    match l.split_once(": ") {
        Some((class, rest)) if class.ends_with("Error") => rest,
        _ => l,
    }
}

#[test]
fn every_reference_case() {
    let dir = format!("{DATA}/expected-matrix");
    let repo = format!("{DATA}/inferencex");
    let cases = std::fs::read_to_string(format!("{dir}/cases.tsv")).unwrap();
    let mut checked = 0;
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (name, code, argline) = (cols[0], cols[1].parse::<i32>().unwrap(), cols[2]);
        let args = args_of(argline);
        let read = |f: &str| std::fs::read(Path::new(&repo).join(f)).ok();
        let got = matrix::run(&args, read);
        if code == 0 {
            let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
            let want: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(format!("{dir}/{name}.json")).unwrap(),
            )
            .unwrap();
            let (g, w) = (got.as_array().unwrap(), want.as_array().unwrap());
            assert_eq!(g.len(), w.len(), "{name}: row count");
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                assert_eq!(a, b, "{name}: row {i} differs");
            }
            // The printed text parses back to the same list.
            let text = matrix::run_to_string(&args, read).unwrap();
            assert!(text.ends_with("]\n"));
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&text).unwrap(),
                want,
                "{name}: text"
            );
        } else {
            let e = got
                .err()
                .unwrap_or_else(|| panic!("{name}: expected exit {code}"));
            assert_eq!(e.exit_code(), code, "{name}: exit code ({e})");
            let want = std::fs::read_to_string(format!("{dir}/{name}.stderr")).unwrap();
            let want_last = want.trim_end().lines().last().unwrap();
            let text = matrix::error_text(&e);
            let got_last = text.trim_end().lines().last().unwrap();
            assert_eq!(problem(got_last), problem(want_last), "{name}: stderr");
        }
        checked += 1;
    }
    assert_eq!(checked, 15);
}

#[test]
fn cli_exit_codes() {
    let repo = format!("{DATA}/inferencex");
    let run = |a: &str| {
        let mut v = args_of(a);
        v.push("--repo".into());
        v.push(repo.clone());
        sweepgate::cli::matrix::cli_main(v)
    };
    assert_eq!(
        run("full-sweep --step-size 1 --config-files configs/amd-master.yaml"),
        std::process::ExitCode::from(2)
    );
    assert_eq!(
        run("test-config --config-files configs/amd-master.yaml --config-keys nope"),
        std::process::ExitCode::from(1)
    );
    assert_eq!(
        run("full-sweep --config-files configs/missing.yaml"),
        std::process::ExitCode::from(1)
    );
}
