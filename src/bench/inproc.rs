//! In-process benchmarks: parsing, full-sweep expansion, the verdict and
//! the lint. Each is a closure over prepared inputs, so the same code is
//! timed here and counted under callgrind.
use std::time::{Duration, Instant};

use super::model::{AMD, CHANGELOG, Fixtures, NVIDIA};
use crate::checks::lint;
use crate::config::RepoConfig;
use crate::recipe::{changelog, master};
use crate::verdict;

/// Timings of repeated runs.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub median: Duration,
    pub min: Duration,
    pub runs: usize,
}

/// Runs `f` once to warm up, then `runs` times (at least once, and for at
/// most about `cap` in total).
pub fn time(runs: usize, cap: Duration, mut f: impl FnMut()) -> Timing {
    f();
    let start = Instant::now();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
        if start.elapsed() > cap {
            break;
        }
    }
    times.sort();
    Timing {
        median: times[times.len() / 2],
        min: times[0],
        runs: times.len(),
    }
}

/// A prepared workload: call it to do the measured work once.
pub type Work = Box<dyn FnMut()>;

/// Prepares the named workload (inputs read and built outside the timing).
pub fn prepare(name: &str, fx: &Fixtures, files: usize, scale: usize) -> anyhow::Result<Work> {
    Ok(match name {
        "parse-masters" => {
            let (nv, amd) = (fx.nvidia.clone(), fx.amd.clone());
            Box::new(move || {
                let m = master::parse_many([(NVIDIA, nv.as_bytes()), (AMD, amd.as_bytes())]);
                std::hint::black_box(m.is_ok());
            })
        }
        "parse-changelog" => {
            let log = fx.changelog.clone();
            Box::new(move || {
                std::hint::black_box(changelog::parse(CHANGELOG, log.as_bytes()).is_ok());
            })
        }
        "expansion" => {
            let root = fx.dirs.inferencex.clone();
            let args: Vec<String> = format!("full-sweep --config-files {NVIDIA} {AMD}")
                .split(' ')
                .map(String::from)
                .collect();
            anyhow::ensure!(
                crate::matrix::run_to_string(&args, &root).is_ok(),
                "full-sweep expansion failed on the fixtures"
            );
            Box::new(move || {
                std::hint::black_box(crate::matrix::run_to_string(&args, &root).is_ok());
            })
        }
        "verdict" => {
            // The snapshot caches what it derives; every run gets a fresh one.
            let s = fx.snapshot(files, scale)?;
            let cfg = RepoConfig::default();
            let rows = verdict::verify(&s.clone(), &cfg).rows.len();
            anyhow::ensure!(rows == 18, "the verdict has {rows} rows, not 18");
            Box::new(move || {
                std::hint::black_box(verdict::verify(&s.clone(), &cfg).passed());
            })
        }
        "lint" => {
            let input = fx.lint_input(files, scale)?;
            Box::new(move || {
                std::hint::black_box(lint::lint(&input).len());
            })
        }
        other => anyhow::bail!("unknown workload {other}"),
    })
}

/// The measured call, a symbol of its own so callgrind can count only it
/// (`--toggle-collect=*callgrind_measured*`).
#[inline(never)]
pub fn callgrind_measured(work: &mut Work) {
    work();
}
