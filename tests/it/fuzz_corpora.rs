//! Replays every committed fuzz input (`fuzz/corpus/<target>/` and the
//! fixed crash reproducers in `fuzz/artifacts/<target>/`) through the body
//! its fuzz target runs (`sweepgate::fuzzing::TARGETS`), in an ordinary build: CI
//! keeps what the long fuzz runs found without an instrumented build.
use std::fs;
use std::path::{Path, PathBuf};
use sweepgate::fuzzing::TARGETS;

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_committed_input_replays_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for (name, body) in TARGETS {
        let corpus = inputs(&root.join("corpus").join(name));
        // A target without seeds would be fuzzed from nothing and replay nothing.
        assert!(!corpus.is_empty(), "fuzz/corpus/{name} is empty");
        let files: Vec<PathBuf> = corpus
            .into_iter()
            .chain(inputs(&root.join("artifacts").join(name)))
            .collect();
        for file in &files {
            let data = fs::read(file).unwrap();
            if std::panic::catch_unwind(|| body(&data)).is_err() {
                failures.push(file.display().to_string());
            }
        }
        counts.push(format!("{name}: {}", files.len()));
    }
    eprintln!("replayed {}", counts.join(", "));
    assert!(failures.is_empty(), "inputs that panic: {failures:#?}");
}

#[test]
fn every_target_has_a_fuzz_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for (name, _) in TARGETS {
        let src = fs::read_to_string(root.join(format!("fuzz_targets/{name}.rs"))).unwrap();
        // The parser bodies live in the domain crate, the webhook's and the
        // plot's in the service.
        let home = if matches!(*name, "webhook" | "pareto_svg") {
            "sweepgate"
        } else {
            "sweepgate_core"
        };
        assert!(
            src.contains(&format!("{home}::fuzzing::{name}(data)")),
            "fuzz_targets/{name}.rs does not call {home}::fuzzing::{name}"
        );
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has no [[bin]] {name}"
        );
    }
}
