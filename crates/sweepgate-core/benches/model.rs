//! `cargo bench --bench model`: the time of parsing every data file of the
//! benchmark repository and of the full-sweep expansion, on the real
//! fixtures, against the budget of issue 4 (expansion under 40 ms; the
//! reference generator needs about 0.9 s of CPU). Prints a table; asserts
//! nothing about time.
use std::path::Path;
use std::time::{Duration, Instant};
use sweepgate_core::matrix;
use sweepgate_core::recipe::{changelog, master, models_md, runners};

fn measure(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    f(); // warm-up
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    (times[0], times[times.len() / 2])
}

fn main() {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/inferencex"
    ));
    let read = |p: &str| std::fs::read(root.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    let nvidia = read("configs/nvidia-master.yaml");
    let amd = read("configs/amd-master.yaml");
    let runner_file = read("configs/runners.yaml");
    let log = read("perf-changelog.yaml");
    let models = read("MODELS.md");
    let runs = 15;

    let rows: Vec<(&str, (Duration, Duration), Option<Duration>)> = vec![
        (
            "parse master configs (nvidia + amd)",
            measure(runs, || {
                let m = master::parse_many([
                    ("configs/nvidia-master.yaml", nvidia.as_slice()),
                    ("configs/amd-master.yaml", amd.as_slice()),
                ]);
                assert!(m.is_ok());
            }),
            None,
        ),
        (
            "parse runners.yaml",
            measure(runs, || {
                assert!(runners::parse("configs/runners.yaml", &runner_file).is_ok());
            }),
            None,
        ),
        (
            "parse perf-changelog.yaml (772 entries)",
            measure(runs, || {
                assert!(changelog::parse("perf-changelog.yaml", &log).is_ok());
            }),
            None,
        ),
        (
            "parse MODELS.md",
            measure(runs, || {
                assert!(models_md::parse("MODELS.md", &models).is_ok());
            }),
            None,
        ),
        (
            "full-sweep expansion, files to JSON",
            measure(runs, || {
                let args: Vec<String> =
                    "full-sweep --config-files configs/nvidia-master.yaml configs/amd-master.yaml"
                        .split(' ')
                        .map(String::from)
                        .collect();
                // Reading the files is part of the measured work.
                assert!(matrix::run_to_string(&args, |f| std::fs::read(root.join(f)).ok()).is_ok());
            }),
            Some(Duration::from_millis(40)),
        ),
    ];
    println!(
        "{:<42} {:>10} {:>10} {:>8}",
        "benchmark", "min", "median", "budget"
    );
    for (name, (min, median), budget) in rows {
        let b = budget.map_or("-".to_string(), |b| format!("{} ms", b.as_millis()));
        let verdict = match budget {
            Some(b) if median > b => " (over budget)",
            _ => "",
        };
        println!(
            "{name:<42} {:>8.2}ms {:>8.2}ms {b:>8}{verdict}",
            min.as_secs_f64() * 1e3,
            median.as_secs_f64() * 1e3
        );
    }
}
