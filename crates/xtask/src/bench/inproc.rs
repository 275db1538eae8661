//! In-process benchmarks: parsing, full-sweep expansion, the verdict and
//! the lint. Each is a closure over prepared inputs, so the same code is
//! timed here and counted under callgrind.
use std::time::{Duration, Instant};

use super::model::{AMD, CHANGELOG, Fixtures, NVIDIA};
use sweepgate::verdict;
use sweepgate_core::checks::{lint, snapshot};
use sweepgate_core::config::RepoConfig;
use sweepgate_core::recipe::{changelog, master};

/// Timings of repeated runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub median: Duration,
    pub min: Duration,
    pub runs: usize,
}

/// Runs the work once to warm up (not for a single run), then `runs` times
/// (at least once, and for at most about `cap` in total); its setup runs
/// before each, untimed.
pub(crate) fn time(runs: usize, cap: Duration, w: &mut Work) -> Timing {
    if runs > 1 {
        (w.setup)();
        (w.run)();
    }
    let start = Instant::now();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        (w.setup)();
        let t = Instant::now();
        (w.run)();
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

/// A prepared workload: `setup` (untimed) then `run`, the measured work.
pub(crate) struct Work {
    pub setup: Box<dyn FnMut()>,
    pub run: Box<dyn FnMut()>,
}

fn work(run: impl FnMut() + 'static) -> Work {
    Work {
        setup: Box::new(|| {}),
        run: Box::new(run),
    }
}

/// Prepares the named workload (inputs read and built outside the timing).
pub(crate) fn prepare(
    name: &str,
    fx: &Fixtures,
    files: usize,
    scale: usize,
) -> anyhow::Result<Work> {
    Ok(match name {
        "parse-masters" => {
            let (nv, amd) = (fx.nvidia.clone(), fx.amd.clone());
            work(move || {
                let m = master::parse_many([(NVIDIA, nv.as_bytes()), (AMD, amd.as_bytes())]);
                std::hint::black_box(m.is_ok());
            })
        }
        "parse-changelog" => {
            let log = fx.changelog.clone();
            work(move || {
                std::hint::black_box(changelog::parse(CHANGELOG, log.as_bytes()).is_ok());
            })
        }
        "expansion" => {
            let root = fx.dirs.inferencex.clone();
            let args: Vec<String> = format!("full-sweep --config-files {NVIDIA} {AMD}")
                .split(' ')
                .map(String::from)
                .collect();
            let read = move |f: &str| std::fs::read(root.join(f)).ok();
            anyhow::ensure!(
                sweepgate_core::matrix::run_to_string(&args, &read).is_ok(),
                "full-sweep expansion failed on the fixtures"
            );
            work(move || {
                std::hint::black_box(sweepgate_core::matrix::run_to_string(&args, &read).is_ok());
            })
        }
        "verdict" | "verdict-warm" => {
            // The snapshot caches what it derives; every run gets a fresh one.
            let s = fx.snapshot(files, scale)?;
            let cfg = RepoConfig::default();
            let rows = verdict::verify(&s.clone(), &cfg).rows.len();
            anyhow::ensure!(rows == 18, "the verdict has {rows} rows, not 18");
            let warm = name == "verdict-warm";
            let base = s.base_files.clone();
            Work {
                // Cold: nothing parsed yet. Warm: the base side parsed by an
                // earlier verdict (any PR off the same default-branch commit).
                setup: Box::new(move || {
                    snapshot::clear_parse_caches();
                    if warm {
                        for p in &cfg_paths() {
                            if let Some(t) = base.get(p) {
                                if p.ends_with(CHANGELOG) {
                                    snapshot::read_changelog_cached(p, t);
                                } else {
                                    snapshot::parse_master_cached(p, t);
                                }
                            }
                        }
                    }
                }),
                run: Box::new(move || {
                    std::hint::black_box(verdict::verify(&s.clone(), &cfg).passed());
                }),
            }
        }
        "lint" | "lint-warm" => {
            let input = fx.lint_input(files, scale)?;
            let warm = name == "lint-warm";
            Work {
                // Cold: nothing parsed in this process yet. Warm: the parse
                // cache by content holds every file (the same PR linted
                // again, or a replay's next commit for unchanged files).
                setup: Box::new(move || {
                    if !warm {
                        lint::clear_parse_caches();
                    }
                }),
                run: Box::new(move || {
                    std::hint::black_box(lint::lint(&input).len());
                }),
            }
        }
        other => anyhow::bail!("unknown workload {other}"),
    })
}

/// The measured call, a symbol of its own so callgrind can count only it
/// (`--toggle-collect=*callgrind_measured*`).
#[inline(never)]
pub(crate) fn callgrind_measured(w: &mut Work) {
    (w.run)();
}

fn cfg_paths() -> Vec<String> {
    let p = RepoConfig::default().paths;
    let mut v = p.master_configs;
    v.push(p.changelog);
    v
}
