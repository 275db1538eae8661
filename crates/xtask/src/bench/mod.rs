//! `cargo xtask bench`: every benchmark of the performance budget in one
//! run, written to `docs/performance.md` with the growth plots beside it.
//!
//! Budgets are reported, never asserted: a missed budget is a row saying
//! MISSED, and the command still succeeds.
pub(crate) mod ack;
pub(crate) mod baseline;
pub(crate) mod e2e;
pub(crate) mod inproc;
pub(crate) mod matrix;
pub(crate) mod memory;
pub(crate) mod model;
pub(crate) mod replay;
pub(crate) mod report;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use model::{Dirs, Fixtures};
use report::{Growth, GrowthPoint, Report, Row, Status};

/// Every benchmark name `--only` accepts, in report order.
pub(crate) const ONLY: [&str; 13] = [
    "ack",
    "parse-masters",
    "parse-changelog",
    "expansion",
    "matrix",
    "verdict",
    "verdict-warm",
    "lint",
    "lint-warm",
    "e2e",
    "memory",
    "growth",
    "replay",
];

#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Short runs, no callgrind: checks that every benchmark works, not
    /// how fast (the smoke test).
    #[arg(long)]
    pub quick: bool,
    /// The report; its SVG plots go beside it. Default
    /// `docs/performance.md` for a full run; `--only` prints to stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run one benchmark (ack, parse-masters, parse-changelog, expansion,
    /// matrix, verdict, verdict-warm, lint, lint-warm, e2e, memory, growth,
    /// replay).
    #[arg(long)]
    pub only: Option<String>,
    /// Commits of the replay benchmark, the newest ones (0: the whole
    /// history). The default keeps a full bench within about 15 minutes on
    /// the 2-core machine; the whole-history time is then projected from
    /// the rate.
    #[arg(long, default_value_t = 400)]
    pub replay_last: usize,
    /// The previous build to compare the in-process rows with: a commit of
    /// this repository, built once into `target/bench-baseline/` and timed
    /// side by side with this build in the same run.
    #[arg(long, value_name = "REV")]
    pub baseline: Option<String>,
    /// Skip the instruction counts (valgrind --tool=callgrind).
    #[arg(long)]
    pub no_callgrind: bool,
    /// Internal: run the named in-process workload once under callgrind.
    #[arg(long, hide = true)]
    pub callgrind_inner: bool,
    /// Internal: verify and lint a 3,000-file PR and print the peak RSS.
    #[arg(long, hide = true)]
    pub peak_inner: bool,
    /// The benchmark repository's data files (default: the repository's own
    /// `tests/data/inferencex`).
    #[arg(long)]
    pub fixtures: Option<PathBuf>,
    /// The `sweepgate` binary whose idle memory is measured (default: the
    /// service's command line run through this binary, `xtask sweepgate`).
    #[arg(long)]
    pub sweepgate_bin: Option<PathBuf>,
    /// PostgreSQL for the acknowledgement benchmark.
    #[arg(
        long,
        env = "SWEEPGATE_TEST_PG_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test",
        hide_env_values = true
    )]
    pub pg_url: String,
}

/// Budgets of issue 10 (2 cores).
pub(crate) mod budget {
    use std::time::Duration;
    pub(crate) const ACK_P99: Duration = Duration::from_millis(10);
    pub(crate) const EXPANSION: Duration = Duration::from_millis(40);
    pub(crate) const VERDICT: Duration = Duration::from_millis(50);
    pub(crate) const LINT: Duration = Duration::from_millis(50);
    pub(crate) const E2E: Duration = Duration::from_secs(1);
    pub(crate) const RSS_IDLE_MB: f64 = 50.0;
    pub(crate) const RSS_3000_MB: f64 = 200.0;
    pub(crate) const CONFIG_RATIO: f64 = 20.0;
    pub(crate) const FILES_RATIO: f64 = 400.0;
}

pub fn main(mut args: BenchArgs) -> anyhow::Result<ExitCode> {
    sweepgate::app::init_logging_at(sweepgate::config::server::LogFormat::Text, "error");
    // Benchmarks run the binary from other directories (the matrix from the
    // fixtures' folder): a relative path as documented
    // (`--sweepgate-bin target/release/sweepgate`) would not be found there.
    if let Some(bin) = &args.sweepgate_bin {
        let abs = std::fs::canonicalize(bin)
            .map_err(|e| anyhow::anyhow!("--sweepgate-bin {}: {e}", bin.display()))?;
        args.sweepgate_bin = Some(abs);
    }
    let dirs = Dirs::locate(args.fixtures.as_deref())?;
    let fx = Fixtures::load(dirs)?;
    if args.callgrind_inner {
        let name = args.only.as_deref().unwrap_or("");
        let mut work = inproc::prepare(name, &fx, 10, 1)?;
        // As the timed runs do: a warm workload is measured after one run
        // has filled what it keeps (its setup then resets the rest).
        if name.ends_with("-warm") {
            (work.setup)();
            (work.run)();
        }
        (work.setup)();
        inproc::callgrind_measured(&mut work);
        return Ok(ExitCode::SUCCESS);
    }
    if args.peak_inner {
        println!("VmHWM-kB {}", memory::peak_inner(&fx)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(o) = &args.only {
        anyhow::ensure!(
            ONLY.contains(&o.as_str()),
            "--only {o}: one of {}",
            ONLY.join(", ")
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let report = rt.block_on(run(&args, &fx))?;
    let out = match (&args.out, &args.only) {
        (Some(o), _) => Some(o.clone()),
        (None, None) => Some(PathBuf::from("docs/performance.md")),
        (None, Some(_)) => None,
    };
    match out {
        Some(path) => {
            report.write(&path)?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{}", report.markdown("performance.md")),
    }
    Ok(ExitCode::SUCCESS)
}

fn wants(args: &BenchArgs, name: &str) -> bool {
    args.only.as_deref().is_none_or(|o| o == name)
}

fn ms(d: Duration) -> String {
    let v = d.as_secs_f64() * 1e3;
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

fn cmd(name: &str) -> String {
    format!("cargo xtask bench --only {name}")
}

async fn run(args: &BenchArgs, fx: &Fixtures) -> anyhow::Result<Report> {
    let mut r = Report::new(args.quick, invocation());
    let callgrind = !args.quick && !args.no_callgrind;
    let previous = match &args.baseline {
        Some(rev) => Some(baseline::Baseline::build(rev)?),
        None => None,
    };
    r.baseline = previous.as_ref().map(|b| b.commit.clone());
    if wants(args, "ack") {
        eprintln!("bench: acknowledgement");
        ack::rows(args, &mut r).await?;
    }
    let inproc_rows: [(&str, &str, Option<Duration>); 7] = [
        (
            "parse-masters",
            "Parse both master configs (nvidia + amd, 377 KB)",
            None,
        ),
        (
            "parse-changelog",
            "Parse perf-changelog.yaml (396 KB)",
            None,
        ),
        (
            "expansion",
            "Full-sweep expansion, both master configs to JSON",
            Some(budget::EXPANSION),
        ),
        (
            "verdict",
            "Verdict, real-size snapshot, cold process (both master configs and the changelog at base and head, 10 changed files, 8 result points; nothing parsed before)",
            Some(budget::VERDICT),
        ),
        (
            "verdict-warm",
            "Verdict, same snapshot, base side already parsed (an earlier verdict on any PR off the same default-branch commit)",
            Some(budget::VERDICT),
        ),
        (
            "lint",
            "Lint, real-size PR (same change, 10 files, real-size files at base and head), cold: no parse cached in the process",
            Some(budget::LINT),
        ),
        (
            "lint-warm",
            "Lint, same PR, every file's parse cached by content (the same PR linted again)",
            Some(budget::LINT),
        ),
    ];
    for (name, what, bud) in inproc_rows {
        if !wants(args, name) {
            continue;
        }
        eprintln!("bench: {name}");
        let mut work = inproc::prepare(name, fx, 10, 1)?;
        let (runs, cap) = if args.quick {
            (1, Duration::ZERO)
        } else {
            (15, Duration::from_secs(5))
        };
        let t = inproc::time(runs, cap, &mut work);
        drop(work);
        let ir = if callgrind {
            match memory::callgrind(name, args) {
                Ok(ir) => Some(ir),
                Err(e) => {
                    eprintln!("bench: callgrind {name}: {e:#}");
                    None
                }
            }
        } else {
            None
        };
        let status = match bud {
            Some(b) => Status::of(t.median < b),
            None => Status::NoBudget,
        };
        if let Some(p) = &previous {
            eprintln!("bench: {name} beside {}", p.commit);
            let text = match p.compare(name, args, callgrind) {
                Ok(a) => anchor_text(&a, ir),
                Err(e) => format!("not compared: {e:#}"),
            };
            r.anchors.push((name.to_owned(), text));
        }
        r.rows.push(Row {
            id: name.to_owned(),
            what: what.to_owned(),
            figure: format!(
                "median {} (min {}, {} runs)",
                ms(t.median),
                ms(t.min),
                t.runs
            ),
            budget: bud.map_or("—".to_owned(), |b| format!("< {}", ms(b))),
            status,
            ir,
            command: if callgrind || args.quick {
                cmd(name)
            } else {
                format!("{} --no-callgrind", cmd(name))
            },
        });
    }
    explain_inproc(&mut r);
    if wants(args, "matrix") {
        eprintln!("bench: matrix side by side with the reference generator");
        if let Err(e) = matrix::rows(args, fx, &mut r) {
            r.rows.push(Row {
                id: "matrix".into(),
                what: "Matrix side by side with the reference generator".into(),
                figure: format!("failed: {e:#}"),
                budget: format!("≥ {:.0}× the reference", matrix::RATIO),
                status: Status::Skipped,
                ir: None,
                command: cmd("matrix"),
            });
        }
    }
    if wants(args, "e2e") {
        eprintln!("bench: delivery to verdict");
        let reps = if args.quick { 1 } else { 5 };
        let row = match e2e::bench(fx, reps).await {
            Ok(mut times) => {
                times.sort();
                let med = times[times.len() / 2];
                Row {
                    id: "e2e".into(),
                    what: "Delivery → verdict comment on the sandbox (sign-off comment on a seed-002-like PR on the real master configs, server with 4 workers, SQLite)".into(),
                    figure: format!(
                        "median {} (min {}, max {}, {} sign-offs)",
                        ms(med),
                        ms(times[0]),
                        ms(times[times.len() - 1]),
                        times.len()
                    ),
                    budget: format!("< {}", ms(budget::E2E)),
                    status: Status::of(med < budget::E2E),
                    ir: None,
                    command: cmd("e2e"),
                }
            }
            Err(e) => Row {
                id: "e2e".into(),
                what: "Delivery → verdict comment on the sandbox".into(),
                figure: format!("failed: {e:#}"),
                budget: format!("< {}", ms(budget::E2E)),
                status: Status::Skipped,
                ir: None,
                command: cmd("e2e"),
            },
        };
        r.rows.push(row);
    }
    if wants(args, "memory") {
        eprintln!("bench: memory");
        memory::rows(args, &mut r).await?;
    }
    if wants(args, "growth") {
        eprintln!("bench: growth");
        r.growth = Some(growth(args, fx)?);
    }
    if wants(args, "replay") {
        eprintln!("bench: replay of the history");
        replay::rows(args, &mut r).await?;
    }
    Ok(r)
}

/// The command line this report comes from, as typed through cargo.
fn invocation() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let profile = if cfg!(debug_assertions) {
        ""
    } else {
        "--release "
    };
    format!("cargo run {profile}-p xtask -- {}", args.join(" "))
}

/// "0.93× the time, 1.00× the Ir of <previous>": below 1 is faster.
fn anchor_text(a: &baseline::Anchor, ir: Option<u64>) -> String {
    let time = format!(
        "{:.2}× the time ({} against {}, medians of {} interleaved processes each)",
        a.this_ms / a.prev_ms.max(1e-9),
        ms(Duration::from_secs_f64(a.this_ms / 1e3)),
        ms(Duration::from_secs_f64(a.prev_ms / 1e3)),
        baseline::ROUNDS
    );
    match (ir, a.prev_ir) {
        (Some(now), Some(prev)) if prev > 0 => format!(
            "{time}; {:.2}× the Ir ({} against {})",
            now as f64 / prev as f64,
            report::group(now),
            report::group(prev)
        ),
        _ => time,
    }
}

/// The parts of the cold verdict and lint this run measured on their own:
/// the parses they cannot skip, as shares of their medians.
fn explain_inproc(r: &mut Report) {
    let median_of = |r: &Report, id: &str| -> Option<f64> {
        let row = r.rows.iter().find(|x| x.id == id)?;
        let f = row.figure.strip_prefix("median ")?;
        let (v, unit) = f.split_once(' ')?;
        let v: f64 = v.parse().ok()?;
        unit.starts_with("ms").then_some(v)
    };
    let ir_of = |r: &Report, id: &str| r.rows.iter().find(|x| x.id == id).and_then(|x| x.ir);
    let (masters, changelog) = (
        median_of(r, "parse-masters"),
        median_of(r, "parse-changelog"),
    );
    let irs = |r: &Report, id: &str, parts: &[&str]| -> String {
        match (
            ir_of(r, id),
            parts.iter().map(|p| ir_of(r, p)).sum::<Option<u64>>(),
        ) {
            (Some(total), Some(p)) if total > 0 => format!(
                " In instructions: {} of {} Ir ({:.0}%).",
                report::group(p),
                report::group(total),
                p as f64 * 100.0 / total as f64
            ),
            _ => String::new(),
        }
    };
    for (id, what) in [("verdict", "verdict"), ("lint", "lint")] {
        let (Some(total), Some(m), Some(c)) = (median_of(r, id), masters, changelog) else {
            continue;
        };
        let text = format!(
            "Cold, the {what} parses both master configs ({m:.1} ms alone, `parse-masters`) and \
             the changelog ({c:.1} ms, `parse-changelog`) at the base at least once: {:.0}% of its \
             {total:.1} ms median before any check runs.{}",
            (m + c) * 100.0 / total,
            irs(r, id, &["parse-masters", "parse-changelog"])
        );
        r.note(id, text);
    }
}

fn growth(args: &BenchArgs, fx: &Fixtures) -> anyhow::Result<Growth> {
    let (runs, cap) = if args.quick {
        (1, Duration::ZERO)
    } else {
        (7, Duration::from_secs(4))
    };
    let point = |files: usize, scale: usize| -> anyhow::Result<GrowthPoint> {
        let mut v = inproc::prepare("verdict", fx, files, scale)?;
        let verdict = inproc::time(runs, cap, &mut v).median;
        drop(v);
        let mut l = inproc::prepare("lint", fx, files, scale)?;
        let lint = inproc::time(runs, cap, &mut l).median;
        Ok(GrowthPoint {
            size: if scale > 1 { scale } else { files },
            verdict,
            lint,
        })
    };
    let mut g = Growth::default();
    for n in [10, 100, 1000, 3000] {
        eprintln!("bench: growth, {n} files");
        g.files.push(point(n, 1)?);
    }
    for k in [1, 4, 16] {
        eprintln!("bench: growth, master configs {k}×");
        let mut p = point(10, k)?;
        p.size = k;
        g.configs.push(p);
    }
    Ok(g)
}
