//! The matrix side by side with the reference generator: the full sweep of
//! both master configs by `sweepgate matrix` and by the reference
//! `generate_sweep_configs.py` of the history bundle's tip (PyYAML and
//! pydantic at pinned versions in a virtualenv under the target
//! directory), each a cold process, interleaved, with byte-identical
//! output required.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::model::{AMD, Fixtures, NVIDIA};
use super::report::{Report, Row, Status};
use super::{BenchArgs, cmd, ms};

/// The reference's dependencies, pinned.
pub(crate) const PINS: [(&str, &str); 2] = [("PyYAML", "6.0.3"), ("pydantic", "2.13.4")];
/// The speed-up the issue asks for.
pub(crate) const RATIO: f64 = 50.0;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"))
}

/// The virtualenv's python with the pinned packages (made on first use).
pub(crate) fn python() -> anyhow::Result<PathBuf> {
    let venv = target_dir().join("bench-venv");
    let py = venv.join("bin/python");
    let want = PINS.iter().map(|(_, v)| *v).collect::<Vec<_>>().join(" ");
    let have = |py: &Path| -> Option<String> {
        let out = Command::new(py)
            .args([
                "-c",
                "import yaml, pydantic; print(yaml.__version__, pydantic.VERSION)",
            ])
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    if have(&py).as_deref() == Some(want.as_str()) {
        return Ok(py);
    }
    eprintln!("bench: setting up {} ({want})", venv.display());
    let status = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .context("python3 -m venv")?;
    anyhow::ensure!(status.success(), "python3 -m venv exited with {status}");
    let status = Command::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(PINS.iter().map(|(n, v)| format!("{n}=={v}")))
        .status()
        .context("pip install")?;
    anyhow::ensure!(status.success(), "pip install exited with {status}");
    anyhow::ensure!(
        have(&py).as_deref() == Some(want.as_str()),
        "the virtualenv does not have {want}"
    );
    Ok(py)
}

/// The reference generator of the bundle's tip, in a temporary directory.
fn reference() -> anyhow::Result<(tempfile::TempDir, PathBuf, String)> {
    let (tmp, dir) = super::replay::clone_history()?;
    let tip = Command::new("git")
        .args(["-C"])
        .arg(&dir)
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()?;
    let tip = String::from_utf8_lossy(&tip.stdout).trim().to_owned();
    let script = dir.join("utils/matrix_logic/generate_sweep_configs.py");
    anyhow::ensure!(script.is_file(), "{} missing", script.display());
    Ok((tmp, script, tip))
}

/// `sweepgate matrix …`: the product binary, or this binary's copy of
/// the command line.
fn sweepgate(args: &BenchArgs, repo: &Path, argv: &[&str]) -> anyhow::Result<Command> {
    let mut c = match &args.sweepgate_bin {
        Some(bin) => Command::new(bin),
        None => {
            let mut c = Command::new(std::env::current_exe()?);
            c.arg("sweepgate");
            c
        }
    };
    c.arg("matrix").arg("--repo").arg(repo).args(argv);
    Ok(c)
}

/// Runs a process to its end; its stdout and wall time.
fn timed(c: &mut Command) -> anyhow::Result<(Vec<u8>, Duration)> {
    let t = Instant::now();
    let out = c.stderr(Stdio::piped()).output()?;
    let d = t.elapsed();
    anyhow::ensure!(
        out.status.success(),
        "{:?} exited with {}: {}",
        c.get_program(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((out.stdout, d))
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Instructions of one whole `sweepgate matrix` process.
fn process_ir(c: Command) -> anyhow::Result<u64> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("callgrind.out");
    let mut v = Command::new("valgrind");
    v.arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(c.get_program())
        .args(c.get_args())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(d) = c.get_current_dir() {
        v.current_dir(d);
    }
    let status = v.status().context("running valgrind")?;
    anyhow::ensure!(status.success(), "valgrind exited with {status}");
    super::memory::callgrind_total(&out)
}

pub(crate) fn rows(args: &BenchArgs, fx: &Fixtures, r: &mut Report) -> anyhow::Result<()> {
    let repo = fx.dirs.inferencex.clone();
    let argv = ["full-sweep", "--config-files", NVIDIA, AMD];
    let (_tmp, script, tip) = reference()?;
    let py = python()?;
    let reference_cmd = || {
        let mut c = Command::new(&py);
        c.arg(&script).args(argv).current_dir(&repo);
        c
    };
    let ours_cmd = || -> anyhow::Result<Command> {
        let mut c = sweepgate(args, &repo, &argv)?;
        c.current_dir(&repo);
        Ok(c)
    };
    let (want, _) = timed(&mut reference_cmd())?;
    let (got, _) = timed(&mut ours_cmd()?)?;
    let identical = want == got;
    let runs = if args.quick { 1 } else { 11 };
    let (mut theirs, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        theirs.push(timed(&mut reference_cmd())?.1);
        ours.push(timed(&mut ours_cmd()?)?.1);
    }
    let (t, o) = (median(&mut theirs), median(&mut ours));
    let ratio = t.as_secs_f64() / o.as_secs_f64().max(1e-9);
    let ir = if !args.quick && !args.no_callgrind {
        match process_ir(ours_cmd()?) {
            Ok(ir) => Some(ir),
            Err(e) => {
                eprintln!("bench: callgrind matrix: {e:#}");
                None
            }
        }
    } else {
        None
    };
    let pins = PINS
        .iter()
        .map(|(n, v)| format!("{n} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    r.rows.push(Row {
        id: "matrix".into(),
        what: format!(
            "Matrix side by side: `sweepgate matrix full-sweep --config-files {NVIDIA} {AMD}` against the reference generator (`utils/matrix_logic` at the history bundle's tip {tip}, {pins}), cold processes, interleaved"
        ),
        figure: format!(
            "**{ratio:.1}×** the reference (median {} against {}, {runs} runs each, min {} against {}); output {}",
            ms(o),
            ms(t),
            ms(ours[0]),
            ms(theirs[0]),
            if identical {
                format!("byte-identical ({} bytes)", got.len())
            } else {
                format!("DIFFERS ({} bytes against {})", got.len(), want.len())
            }
        ),
        budget: format!("≥ {RATIO:.0}× the reference, identical output"),
        status: Status::of(identical && ratio >= RATIO),
        ir,
        command: cmd("matrix"),
    });
    Ok(())
}
