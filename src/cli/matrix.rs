//! `sweepgate matrix [--repo PATH] full-sweep|test-config …`: the sweep job
//! matrix, printed exactly as the reference generator prints it. The
//! generator's own arguments keep its argparse behaviour (messages, exit
//! codes, `full-sweep --help`), which scripts written for it rely on.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sweepgate_core::matrix::{MatrixError, error_text, run_to_string, split_repo};

use super::output::print_out;

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Args {
    /// The benchmark repository checkout (also accepted after the
    /// generator's arguments).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    #[command(subcommand)]
    pub generator: Generator,
}

/// The reference generator's two modes; each takes the reference's
/// arguments (`sweepgate matrix full-sweep --help` lists them).
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum Generator {
    /// Every job of the master configs, filtered (`generate_sweep_configs.py
    /// full-sweep`).
    #[command(disable_help_flag = true)]
    FullSweep {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The jobs of named config keys (`generate_sweep_configs.py
    /// test-config`).
    #[command(disable_help_flag = true)]
    TestConfig {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// Runs `sweepgate matrix`.
pub(crate) fn run(args: Args) -> ExitCode {
    let (mode, rest) = match args.generator {
        Generator::FullSweep { args } => ("full-sweep", args),
        Generator::TestConfig { args } => ("test-config", args),
    };
    let argv: Vec<String> = std::iter::once(mode.to_owned()).chain(rest).collect();
    match split_repo(&argv) {
        Ok((argv, repo)) => print_matrix(&argv, &repo.map_or(args.repo, PathBuf::from)),
        Err(e) => fail(&e),
    }
}

/// The generator's arguments (without the program name), plus `--repo
/// PATH` anywhere among them (default: the current directory). Prints the
/// JSON on stdout exactly as the reference does; errors go to stderr with
/// the reference's exit codes (1 for input/generation errors, 2 for usage
/// errors).
pub fn cli_main(args: Vec<String>) -> ExitCode {
    match split_repo(&args) {
        Ok((argv, repo)) => print_matrix(&argv, Path::new(repo.as_deref().unwrap_or("."))),
        Err(e) => fail(&e),
    }
}

fn print_matrix(argv: &[String], root: &Path) -> ExitCode {
    let printed = match run_to_string(argv, |f| std::fs::read(root.join(f)).ok()) {
        Ok(json) => print_out(&json),
        Err(MatrixError::Help(text)) => print_out(&(text + "\n")),
        Err(e) => return fail(&e),
    };
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

fn fail(e: &MatrixError) -> ExitCode {
    eprintln!("{}", error_text(e));
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1))
}
