//! Expansion of master configs into the sweep job matrix, identical to the
//! reference generator (`generate_sweep_configs.py full-sweep|test-config`,
//! spec `docs/matrix-generator.md`).
//!
//! The pieces are pure and separately callable: [`parse_args`], [`load`]
//! (which parses the files a caller-given reader returns: this crate does no
//! I/O), [`generate::full_sweep`] / [`generate::test_config`],
//! [`evals::apply`], and the output writers in [`rows`]. [`run`] chains
//! them; the service's `sweepgate matrix` reads the files and prints.

pub(crate) mod args;
pub(crate) mod evals;
pub(crate) mod generate;
pub mod jobs;
pub(crate) mod rows;

pub use args::{
    Command, FullSweepOptions, MatrixArgs, ScenarioType, SeqLen, SharedOptions, TestConfigOptions,
    parse_args,
};
pub(crate) use evals::EvalMode;
pub use rows::{Row, to_python_json};

use crate::recipe::ParseError;
use crate::recipe::master::{self, MasterConfig, MasterDocument};
use crate::recipe::runners::{self, RunnerConfig};

/// Why the generator stops. `exit_code` gives the reference's status.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MatrixError {
    /// `-h`/`--help`: the text to print on stdout (exit 0).
    #[error("{0}")]
    Help(String),
    /// An argparse-style failure (exit 2).
    #[error("{message}")]
    Usage { usage: String, message: String },
    #[error("Input file '{0}' does not exist.")]
    MasterFileMissing(String),
    #[error("Runner config file '{0}' does not exist.")]
    RunnerFileMissing(String),
    /// A master or runner file that does not load or validate.
    #[error("{}", .0.message)]
    Config(ParseError),
    #[error("Invalid runner type(s): {bad}. Valid runner types are: {valid}")]
    InvalidRunnerType { bad: String, valid: String },
    #[error("Config key(s) not found: {key}.\nAvailable keys: {available}")]
    KeyNotFound { key: String, available: String },
    #[error("Pattern '{pattern}' matched no config keys.\nAvailable keys: {available}")]
    PatternNoMatch { pattern: String, available: String },
    /// Agentic DRAM sizing failed (missing hardware, topology).
    #[error("{0}")]
    Dram(String),
    /// An input the reference accepts in validation but crashes on (null
    /// scenario list, topology that does not match `multinode`).
    #[error("{0}")]
    Crash(String),
    #[error("The following parsed matrix entry failed validation: {0}")]
    RowValidation(String),
}

impl MatrixError {
    pub fn exit_code(&self) -> i32 {
        match self {
            MatrixError::Help(_) => 0,
            MatrixError::Usage { .. } => 2,
            _ => 1,
        }
    }
}

impl From<ParseError> for MatrixError {
    fn from(e: ParseError) -> Self {
        MatrixError::Config(e)
    }
}

/// The loaded inputs of one invocation.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub master: MasterConfig,
    pub runners: RunnerConfig,
}

/// Loads the master files (merged in order) and the runner file, in the
/// reference's order of checks (§1.5 steps 6–7). `read` returns a file's
/// bytes by its path as given in the arguments (relative to the benchmark
/// repository), `None` when it does not exist.
pub fn load(
    shared: &SharedOptions,
    read: impl Fn(&str) -> Option<Vec<u8>>,
) -> Result<Inputs, MatrixError> {
    // Every file is read and parsed at once (the later ones on threads of
    // their own); errors are then taken in the reference's order.
    let masters: Vec<Option<Vec<u8>>> = shared.config_files.iter().map(|f| read(f)).collect();
    let parse =
        |(f, b): (&String, &Option<Vec<u8>>)| b.as_ref().map(|b| master::parse_document(f, b));
    let mut files = shared.config_files.iter().zip(&masters);
    let parsed: Vec<Option<Result<MasterDocument, ParseError>>> = std::thread::scope(|s| {
        let first = files.next();
        let rest: Vec<_> = files.map(|x| s.spawn(move || parse(x))).collect();
        let mut out = vec![first.and_then(parse)];
        out.extend(
            rest.into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
        );
        out
    });
    let mut doc = MasterDocument::default();
    for (f, p) in shared.config_files.iter().zip(parsed) {
        let d = p.ok_or_else(|| MatrixError::MasterFileMissing(f.clone()))?;
        doc.merge(d?)?;
    }
    let master = doc.validate()?;
    let rf = &shared.runner_config;
    let bytes = read(rf).ok_or_else(|| MatrixError::RunnerFileMissing(rf.clone()))?;
    let runners = runners::parse(rf, &bytes)?;
    Ok(Inputs { master, runners })
}

/// Generation plus eval steps over loaded inputs (§1.5 steps 8–9).
pub fn generate<'a>(args: &MatrixArgs, inputs: &'a Inputs) -> Result<Vec<Row<'a>>, MatrixError> {
    let s = &args.shared;
    let rows = match &args.command {
        Command::FullSweep(o) => generate::full_sweep(&inputs.master, &inputs.runners, s, o)?,
        Command::TestConfig(o) => generate::test_config(&inputs.master, &inputs.runners, s, o)?,
    };
    Ok(evals::apply(
        rows,
        EvalMode::from_flags(s.no_evals, s.evals_only, s.all_evals),
    ))
}

/// Splits off `--repo PATH` / `--repo=PATH` (ours, not the reference's).
pub fn split_repo(args: &[String]) -> Result<(Vec<String>, Option<String>), MatrixError> {
    let mut rest = Vec::with_capacity(args.len());
    let mut repo = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--repo" {
            match it.next() {
                Some(p) => repo = Some(p.clone()),
                None => {
                    return Err(MatrixError::Usage {
                        usage: "usage: sweepgate matrix [--repo PATH] {full-sweep,test-config} ..."
                            .into(),
                        message: "argument --repo: expected one argument".into(),
                    });
                }
            }
        } else if let Some(p) = a.strip_prefix("--repo=") {
            repo = Some(p.to_string());
        } else {
            rest.push(a.clone());
        }
    }
    Ok((rest, repo))
}

/// Runs the generator's arguments (without the program name) on the files
/// `read` returns (see [`load`]); returns the JSON list.
pub fn run(
    args: &[String],
    read: impl Fn(&str) -> Option<Vec<u8>>,
) -> Result<serde_json::Value, MatrixError> {
    let (args, _) = split_repo(args)?;
    let parsed = parse_args(&args)?;
    let inputs = load(&parsed.shared, read)?;
    let rows = generate(&parsed, &inputs)?;
    Ok(serde_json::Value::Array(
        rows.iter().map(Row::to_value).collect(),
    ))
}

/// Like [`run`] but returns the exact text the reference prints on stdout.
pub fn run_to_string(
    args: &[String],
    read: impl Fn(&str) -> Option<Vec<u8>>,
) -> Result<String, MatrixError> {
    let parsed = parse_args(args)?;
    let inputs = load(&parsed.shared, read)?;
    let rows = generate(&parsed, &inputs)?;
    Ok(to_python_json(&rows))
}

/// The text printed on stderr for an error (its last line names the problem).
pub fn error_text(e: &MatrixError) -> String {
    match e {
        MatrixError::Help(t) => t.clone(),
        MatrixError::Usage { usage, message } => {
            format!("{usage}\nsweepgate matrix: error: {message}")
        }
        MatrixError::Config(p) => format!("error: {}: {}", p.loc, p.message),
        other => format!("error: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture file, read at run time (test code may read files; an
    /// `include_str!` would put the test data in the container's build).
    fn fixture(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/inferencex/configs")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The caller's reader decides what exists; missing files are named in
    /// the reference's order (masters first).
    #[test]
    fn load_reads_through_the_callers_reader() {
        let shared = SharedOptions {
            config_files: vec!["configs/amd-master.yaml".into()],
            ..SharedOptions::default()
        };
        let files = |present: &'static [&'static str]| {
            move |f: &str| {
                present.contains(&f).then(|| match f {
                    "configs/runners.yaml" => fixture("runners.yaml"),
                    _ => fixture("amd-master.yaml"),
                })
            }
        };
        assert_eq!(
            load(&shared, files(&["configs/runners.yaml"])).unwrap_err(),
            MatrixError::MasterFileMissing("configs/amd-master.yaml".into())
        );
        assert_eq!(
            load(&shared, files(&["configs/amd-master.yaml"])).unwrap_err(),
            MatrixError::RunnerFileMissing("configs/runners.yaml".into())
        );
        let inputs = load(
            &shared,
            files(&["configs/amd-master.yaml", "configs/runners.yaml"]),
        )
        .unwrap();
        assert!(!inputs.master.entries.is_empty());
    }
}
