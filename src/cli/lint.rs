//! `sweepgate lint --repo PATH --base REV --head REV [--pr N]
//! [--format text|json|sarif]`: the recipe lint on a local git range.

use std::process::ExitCode;

use sweepgate_core::checks::lint::{Finding, has_errors, lint, sarif};
use sweepgate_core::config::RepoConfig;
use sweepgate_core::config::repo::REPO_CONFIG_PATH;

use super::output::print_out;
use crate::repo::{self, GitRepo};

/// `--format`: findings as text lines, JSON or SARIF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Sarif,
}

#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// The benchmark repository checkout.
    #[arg(long)]
    pub repo: String,
    /// The PR's base revision (the diff starts at its merge base with
    /// `--head`, as GitHub compares a PR).
    #[arg(long)]
    pub base: String,
    /// The PR's head revision.
    #[arg(long)]
    pub head: String,
    /// The PR number (checked against changelog `pr-link`s).
    #[arg(long)]
    pub pr: Option<u64>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Render findings in a format.
pub fn render(findings: &[Finding], format: Format) -> String {
    match format {
        Format::Text => {
            let mut s: String = findings.iter().map(|f| format!("{f}\n")).collect();
            if findings.is_empty() {
                s.push_str("no recipe lint findings\n");
            }
            s
        }
        Format::Json => {
            serde_json::to_string_pretty(&serde_json::json!({ "findings": findings }))
                .unwrap_or_default()
                + "\n"
        }
        Format::Sarif => {
            serde_json::to_string_pretty(&sarif::to_sarif(findings)).unwrap_or_default() + "\n"
        }
    }
}

/// Read the PR from the local repository and lint it.
pub async fn run(args: &Args) -> Result<Vec<Finding>, String> {
    let src = GitRepo::new(&args.repo);
    let base_sha = crate::repo::RepoSource::resolve(&src, &args.base)
        .await
        .map_err(|e| e.to_string())?;
    let config = match repo::read_optional(&src, &base_sha, REPO_CONFIG_PATH)
        .await
        .map_err(|e| e.to_string())?
    {
        Some(bytes) => {
            RepoConfig::from_toml(REPO_CONFIG_PATH, &bytes).map_err(|e| e.to_string())?
        }
        None => RepoConfig::default(),
    };
    let input = crate::lint::gather::from_source(&src, &args.base, &args.head, args.pr, config)
        .await
        .map_err(|e| e.to_string())?;
    Ok(lint(&input))
}

/// Runs `sweepgate lint`: exit 1 when an error is found, 0 otherwise, 2
/// on an input error.
pub(crate) fn run_cli(args: Args) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    crate::progress::enable_on_terminal();
    let findings = match rt.block_on(run(&args)) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut text = render(&findings, args.format);
    if args.format == Format::Text && crate::progress::colour_stdout() {
        text = text
            .lines()
            .map(|l| crate::progress::paint_severity(l) + "\n")
            .collect();
    }
    if let Err(e) = print_out(&text) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    if has_errors(&findings) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
