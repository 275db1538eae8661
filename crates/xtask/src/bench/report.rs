//! The report: rows beside their budgets, the machine, the growth table
//! and ratios, and the growth plots as SVG files next to it.
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use super::budget;
use sweepgate::dashboard::svg::{LineSeries as Series, log_log_plot as plot};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Met,
    Missed,
    NoBudget,
    Skipped,
}

impl Status {
    pub(crate) fn of(met: bool) -> Status {
        if met { Status::Met } else { Status::Missed }
    }
    fn text(self) -> &'static str {
        match self {
            Status::Met => "met",
            Status::Missed => "**MISSED**",
            Status::NoBudget => "—",
            Status::Skipped => "skipped",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub id: String,
    pub what: String,
    pub figure: String,
    pub budget: String,
    pub status: Status,
    /// Instructions (callgrind `Ir`) of one run.
    pub ir: Option<u64>,
    pub command: String,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct GrowthPoint {
    /// Changed files, or the master-config scale factor.
    pub size: usize,
    pub verdict: Duration,
    pub lint: Duration,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Growth {
    pub files: Vec<GrowthPoint>,
    pub configs: Vec<GrowthPoint>,
}

fn ratio(
    points: &[GrowthPoint],
    lo: usize,
    hi: usize,
    f: fn(&GrowthPoint) -> Duration,
) -> Option<f64> {
    let a = points.iter().find(|p| p.size == lo)?;
    let b = points.iter().find(|p| p.size == hi)?;
    Some(f(b).as_secs_f64() / f(a).as_secs_f64().max(1e-12))
}

impl Growth {
    /// (label, ratio, limit) of both growth budgets, verdict and lint each.
    pub(crate) fn ratios(&self) -> Vec<(String, Option<f64>, f64)> {
        let v: fn(&GrowthPoint) -> Duration = |p| p.verdict;
        let l: fn(&GrowthPoint) -> Duration = |p| p.lint;
        vec![
            (
                "verdict time(16×)/time(1×)".into(),
                ratio(&self.configs, 1, 16, v),
                budget::CONFIG_RATIO,
            ),
            (
                "lint time(16×)/time(1×)".into(),
                ratio(&self.configs, 1, 16, l),
                budget::CONFIG_RATIO,
            ),
            (
                "verdict time(3,000 files)/time(10 files)".into(),
                ratio(&self.files, 10, 3000, v),
                budget::FILES_RATIO,
            ),
            (
                "lint time(3,000 files)/time(10 files)".into(),
                ratio(&self.files, 10, 3000, l),
                budget::FILES_RATIO,
            ),
        ]
    }
}

pub(crate) struct Report {
    pub quick: bool,
    pub rows: Vec<Row>,
    pub growth: Option<Growth>,
    /// Why a row missed its budget (or what its figure rests on), by row
    /// id, written from the run's own measurements.
    pub notes: Vec<(String, String)>,
    /// The command line the report comes from.
    pub invocation: String,
    /// The previous build the in-process rows are compared with (`--baseline`).
    pub baseline: Option<String>,
    /// Each compared row's ratio against the previous build, by row id.
    pub anchors: Vec<(String, String)>,
}

pub(crate) const FILES_SVG: &str = "perf-growth-files.svg";
pub(crate) const CONFIGS_SVG: &str = "perf-growth-configs.svg";

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

/// The machine the figures come from.
pub(crate) fn machine() -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|x| x.1.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or("unknown".into(), |kb| {
            format!("{:.1} GiB", kb / 1024.0 / 1024.0)
        });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let nproc = std::thread::available_parallelism().map_or(0, usize::from);
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    vec![
        ("nproc".into(), nproc.to_string()),
        ("CPU".into(), model),
        ("memory".into(), mem),
        ("kernel".into(), kernel.trim().to_owned()),
        (
            "build".into(),
            if cfg!(debug_assertions) {
                "debug".into()
            } else {
                "release".into()
            },
        ),
        ("commit".into(), commit),
        (
            "date".into(),
            chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
        ),
    ]
}

impl Report {
    pub(crate) fn new(quick: bool, invocation: String) -> Report {
        Report {
            quick,
            rows: Vec::new(),
            growth: None,
            notes: Vec::new(),
            invocation,
            baseline: None,
            anchors: Vec::new(),
        }
    }

    /// Explains row `id` under *Missed budgets* (a miss) or *Notes*.
    pub(crate) fn note(&mut self, id: &str, text: impl Into<String>) {
        self.notes.push((id.to_owned(), text.into()));
    }

    /// The Markdown text; `svg_dir` prefixes the plots' links.
    pub(crate) fn markdown(&self, _name: &str) -> String {
        let mut s = String::new();
        s.push_str("# Performance\n\n");
        let _ = write!(
            s,
            "Generated by `{}`. Budgets are reported here, never asserted \
             in tests; a missed budget says **MISSED** and is explained under *Missed budgets*. \
             Instruction counts (`Ir`, valgrind `--tool=callgrind`, counting only the measured \
             call) are repeatable where wall-clock times on a shared machine are not.\n\n",
            self.invocation.trim_end()
        );
        if self.quick {
            s.push_str("**Quick mode (`--quick`): short runs, no instruction counts; not figures to quote.**\n\n");
        }
        s.push_str("## Machine\n\n| | |\n|---|---|\n");
        for (k, v) in machine() {
            let _ = writeln!(s, "| {k} | {v} |");
        }
        let anchor_head = self.baseline.as_ref().map_or("Anchor".to_owned(), |c| {
            format!("Anchor: previous build `{c}`, this run")
        });
        let _ = write!(
            s,
            "\n## Figures\n\n| Benchmark | Figure | Ir | {anchor_head} | Budget | Status | Command |\n|---|---|---|---|---|---|---|\n"
        );
        for r in &self.rows {
            let ir = r.ir.map_or("—".to_owned(), group);
            let anchor = self
                .anchors
                .iter()
                .find(|(id, _)| *id == r.id)
                .map_or_else(|| anchor_of(&r.id), |(_, t)| t.clone());
            let _ = writeln!(
                s,
                "| {} <br>`{}` | {} | {} | {} | {} | {} | `{}` |",
                r.what.replace('|', "\\|"),
                r.id,
                r.figure.replace('|', "\\|"),
                ir,
                anchor.replace('|', "\\|"),
                r.budget,
                r.status.text(),
                r.command
            );
        }
        if let Some(g) = &self.growth {
            s.push_str("\n## Growth\n\nOne run, `cargo xtask bench --only growth`. Changed files: seed 002's three \
                        files plus benchmark scripts, on the real master configs. Master configs: every \
                        entry of both files cloned under new keys (`<key>-x<j>`), at base and head, \
                        with the same 10-file change. Times are medians in ms.\n\n");
            s.push_str("| PR size | verdict (ms) | lint (ms) |\n|---|---|---|\n");
            for p in &g.files {
                let _ = writeln!(
                    s,
                    "| {} files | {} | {} |",
                    p.size,
                    ms(p.verdict),
                    ms(p.lint)
                );
            }
            for p in &g.configs {
                let _ = writeln!(
                    s,
                    "| master configs {}× | {} | {} |",
                    p.size,
                    ms(p.verdict),
                    ms(p.lint)
                );
            }
            s.push_str("\n| Ratio | Value | Budget | Status |\n|---|---|---|---|\n");
            for (label, v, limit) in g.ratios() {
                let (val, st) = match v {
                    Some(v) => (format!("{v:.1}"), Status::of(v <= limit)),
                    None => ("—".into(), Status::Skipped),
                };
                let _ = writeln!(s, "| {label} | {val} | ≤ {limit:.0} | {} |", st.text());
            }
            let _ = write!(
                s,
                "\n![verdict and lint time by changed files]({FILES_SVG})\n\n![verdict and lint time by master-config size]({CONFIGS_SVG})\n"
            );
        }
        self.notes_markdown(&mut s);
        s
    }

    /// *Missed budgets* (every missed row, with the cause this run
    /// measured) and *Notes* (what the other figures rest on): generated,
    /// so no figure in the document is older than the run.
    fn notes_markdown(&self, s: &mut String) {
        let missed: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.status == Status::Missed)
            .collect();
        let notes_of = |id: &str| -> Vec<&str> {
            self.notes
                .iter()
                .filter(|(i, _)| i == id)
                .map(|(_, t)| t.as_str())
                .collect()
        };
        s.push_str("\n## Missed budgets\n\n");
        if missed.is_empty() {
            s.push_str("None in this run.\n");
        }
        for r in &missed {
            let notes = notes_of(&r.id);
            let _ = writeln!(
                s,
                "- **`{}`** ({}): {}",
                r.id,
                r.figure,
                if notes.is_empty() {
                    "no cause was measured by this run.".to_owned()
                } else {
                    notes.join(" ")
                }
            );
        }
        let other: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.status != Status::Missed && !notes_of(&r.id).is_empty())
            .collect();
        s.push_str(
            "\n## Notes\n\n- Wall-clock figures come from a shared 2-core machine: \
             other builds may run beside the benchmark, so medians can move between \
             runs; the instruction counts (`Ir`) do not.\n",
        );
        for r in other {
            let _ = writeln!(s, "- `{}`: {}", r.id, notes_of(&r.id).join(" "));
        }
    }

    fn plots(&self) -> Option<(String, String)> {
        let g = self.growth.as_ref()?;
        let pts = |ps: &[GrowthPoint], f: fn(&GrowthPoint) -> Duration| -> Vec<(f64, f64)> {
            ps.iter()
                .map(|p| (p.size as f64, f(p).as_secs_f64() * 1e3))
                .collect()
        };
        let series = |ps: &[GrowthPoint]| {
            vec![
                Series {
                    name: "verdict",
                    color: "#1f77b4",
                    points: pts(ps, |p| p.verdict),
                },
                Series {
                    name: "lint",
                    color: "#d62728",
                    points: pts(ps, |p| p.lint),
                },
            ]
        };
        Some((
            plot(
                "Time by changed files",
                "changed files",
                "ms (log)",
                &series(&g.files),
            ),
            plot(
                "Time by master-config size",
                "× real size",
                "ms (log)",
                &series(&g.configs),
            ),
        ))
    }

    /// Writes the report and, with growth figures, the two plots beside it.
    pub(crate) fn write(&self, path: &Path) -> anyhow::Result<()> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let text = self.markdown(&path.display().to_string());
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        if let Some((files, configs)) = self.plots() {
            std::fs::write(dir.join(FILES_SVG), files)?;
            std::fs::write(dir.join(CONFIGS_SVG), configs)?;
        }
        Ok(())
    }
}

/// The anchor of a row with no previous-build comparison: the matrix row
/// carries its own (the reference generator, in its figure).
fn anchor_of(id: &str) -> String {
    match id {
        "matrix" => "the reference generator (in the figure)".to_owned(),
        _ => "—".to_owned(),
    }
}

/// `1234567` as `1,234,567`.
pub(crate) fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
