//! The previous build as the anchor of the in-process rows: its bench
//! binary, built from a commit of this repository, measured side by side
//! with this one in the same run.
//!
//! Both builds are timed as separate processes, interleaved (this, the
//! previous, this, …), so a machine that gets busier half-way through
//! slows both alike; their instruction counts come from the same callgrind
//! method.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

use super::BenchArgs;
use super::memory;

/// Processes of each build per row; the anchor is the ratio of the medians
/// of their medians.
pub(crate) const ROUNDS: usize = 5;

/// The previous build, ready to run.
pub(crate) struct Baseline {
    /// The commit it was built from (short form).
    pub commit: String,
    bin: PathBuf,
}

/// One row's comparison.
pub(crate) struct Anchor {
    /// Median of this build's process medians, in ms.
    pub this_ms: f64,
    /// Median of the previous build's process medians, in ms.
    pub prev_ms: f64,
    /// The previous build's instruction count, when counted.
    pub prev_ir: Option<u64>,
}

impl Baseline {
    /// Extracts `rev` into `target/bench-baseline/<sha>` (`git archive`, so
    /// the working tree is untouched) and builds its `xtask` with this
    /// build's profile; both are kept for the next run.
    pub(crate) fn build(rev: &str) -> anyhow::Result<Baseline> {
        let root = crate::workspace_root();
        let git = |args: &[&str]| -> anyhow::Result<String> {
            let out = Command::new("git")
                .args(args)
                .current_dir(&root)
                .output()
                .context("running git")?;
            anyhow::ensure!(
                out.status.success(),
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        };
        let sha = git(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])?;
        let short = git(&["rev-parse", "--short", &sha])?;
        let base = root.join("target/bench-baseline");
        let src = base.join(&sha);
        if !src.join("Cargo.toml").is_file() {
            std::fs::create_dir_all(&src)?;
            let archive = Command::new("git")
                .args(["archive", "--format=tar", &sha])
                .current_dir(&root)
                .stdout(Stdio::piped())
                .spawn()
                .context("running git archive")?;
            let status = Command::new("tar")
                .args(["-x", "-C"])
                .arg(&src)
                .stdin(archive.stdout.context("git archive's output")?)
                .status()
                .context("running tar")?;
            anyhow::ensure!(
                status.success(),
                "extracting {short}: tar exited with {status}"
            );
        }
        let release = !cfg!(debug_assertions);
        let target = base.join("target");
        eprintln!("bench: building the previous build {short} (xtask)");
        let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cargo
            .args(["build", "--locked", "-p", "xtask"])
            .current_dir(&src)
            .env("CARGO_TARGET_DIR", &target)
            .stdout(Stdio::null());
        if release {
            cargo.arg("--release");
        }
        let status = cargo.status().context("running cargo build")?;
        anyhow::ensure!(
            status.success(),
            "building {short}: cargo exited with {status}"
        );
        let bin = target
            .join(if release { "release" } else { "debug" })
            .join("xtask");
        anyhow::ensure!(bin.is_file(), "{} was not built", bin.display());
        Ok(Baseline { commit: short, bin })
    }

    /// Times `name` in both builds, interleaved, and counts the previous
    /// build's instructions unless `callgrind` is off.
    pub(crate) fn compare(
        &self,
        name: &str,
        args: &BenchArgs,
        callgrind: bool,
    ) -> anyhow::Result<Anchor> {
        let this = memory::exe()?;
        let fixtures = fixtures_arg(args)?;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            a.push(process_median(&this, name, &fixtures)?);
            b.push(process_median(&self.bin, name, &fixtures)?);
        }
        let prev_ir = if callgrind {
            match memory::callgrind_of(&self.bin, name, &fixtures) {
                Ok(ir) => Some(ir),
                Err(e) => {
                    eprintln!("bench: callgrind {name} of {}: {e:#}", self.commit);
                    None
                }
            }
        } else {
            None
        };
        Ok(Anchor {
            this_ms: median(a),
            prev_ms: median(b),
            prev_ir,
        })
    }
}

/// Both builds read the same inputs: this run's fixtures directory.
fn fixtures_arg(args: &BenchArgs) -> anyhow::Result<Vec<String>> {
    let dir = match &args.fixtures {
        Some(f) => f.clone(),
        None => crate::workspace_root().join("tests/data/inferencex"),
    };
    Ok(vec![
        "--fixtures".to_owned(),
        dir.canonicalize()
            .with_context(|| format!("{} not found", dir.display()))?
            .display()
            .to_string(),
    ])
}

/// The median a `bench --only <name> --no-callgrind` process reports.
fn process_median(bin: &Path, name: &str, fixtures: &[String]) -> anyhow::Result<f64> {
    let out = Command::new(bin)
        .args(["bench", "--only", name, "--no-callgrind"])
        .args(fixtures)
        .stderr(Stdio::null())
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    anyhow::ensure!(
        out.status.success(),
        "{} bench --only {name} exited with {}",
        bin.display(),
        out.status
    );
    let text = String::from_utf8_lossy(&out.stdout);
    parse_median(&text, name)
        .with_context(|| format!("no median for {name} in the output of {}", bin.display()))
}

/// `median 12.3 ms` in the report row of `name`.
fn parse_median(report: &str, name: &str) -> Option<f64> {
    let row = report
        .lines()
        .find(|l| l.contains(&format!("<br>`{name}` |")))?;
    let rest = row.split("| median ").nth(1)?;
    let (value, unit) = rest.split_once(' ')?;
    // The bench prints every median in ms.
    (unit.split_whitespace().next()? == "ms").then_some(value.parse().ok()?)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_median_of_a_report_row() {
        let text = "| Parse perf-changelog.yaml (396 KB) <br>`parse-changelog` | median 1.81 ms (min 1.70 ms, 15 runs) | — | — | — | `x` |\n\
                    | Lint <br>`lint` | median 126 ms (min 100 ms, 15 runs) | — |";
        assert_eq!(parse_median(text, "parse-changelog"), Some(1.81));
        assert_eq!(parse_median(text, "lint"), Some(126.0));
        assert_eq!(parse_median(text, "lint-warm"), None);
    }
}
