//! Command line entry point: what operators and PR authors run. The
//! development commands (benchmarks, reliability runs, the sandbox as a
//! process) are `cargo xtask`.
pub(crate) mod check;
pub(crate) mod compare;
pub(crate) mod doctor;
pub mod lint;
pub mod matrix;
pub(crate) mod output;
pub mod replay;
pub(crate) mod runners;

use crate::config::server::{ServerArgs, ServerConfig};
use clap::{Parser, Subcommand};
use output::{TextOrJson, print_out};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "sweepgate",
    version,
    about = "Deterministic PR gate for GPU-inference benchmark repositories"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the webhook server and its workers.
    Serve(ServerArgs),
    /// Apply database migrations and exit.
    Migrate(ServerArgs),
    /// Run sweepgate against the built-in sandbox GitHub and play a
    /// scripted pull request.
    #[cfg(feature = "demo")]
    Demo(crate::demo::DemoArgs),
    /// Expand master configs into the sweep job matrix, exactly as the
    /// reference generator.
    Matrix(matrix::Args),
    /// Run the recipe lint on a local git range: exit 1 when it finds an
    /// error.
    Lint(lint::Args),
    /// Run the sign-off verification (checks 0–17) on a local git range:
    /// exit 0 on PASS, 1 on REJECTED.
    Check(check::Args),
    /// Replay each first-parent commit of a repository as a PR (lint,
    /// sweep gate, check without a sign-off): one record per commit and a
    /// summary. Exit 1 when a tool crashed.
    Replay(replay::Args),
    /// Verify a sign-off on GitHub from its URL
    /// (`…/pull/<n>#issuecomment-<id>`, `#pullrequestreview-<id>` or
    /// `#discussion_r<id>`); prints the verdict, publishes it with
    /// `--publish`. Exit 0 on PASS, 1 on REJECTED, 2 on an error. With
    /// `--pr N --compare`: the old verifier's verdict on the PR beside
    /// sweepgate's, check by check (read-only; exit 0 when shown).
    Verify {
        /// `owner/name` of the benchmark repository.
        #[arg(long)]
        repo: String,
        /// The sign-off's URL.
        #[arg(long, required_unless_present = "compare")]
        signoff: Option<String>,
        /// The pull request whose old verdict `--compare` reads.
        #[arg(long, requires = "compare")]
        pr: Option<u64>,
        /// Show the old verifier's verdict beside sweepgate's (needs `--pr`).
        #[arg(long, requires = "pr", conflicts_with_all = ["publish", "signoff"])]
        compare: bool,
        /// Post the verdict comment, status and check run.
        #[arg(long)]
        publish: bool,
        /// The date Check 7 assesses against (default: today, UTC).
        #[arg(long)]
        today: Option<chrono::NaiveDate>,
        /// `text` (the comment) or `json` (the rows).
        #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
        format: TextOrJson,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// List the runner labels and their nodes, and the labels master
    /// configs use that no runner carries.
    Runners {
        /// The benchmark repository checkout.
        #[arg(long, default_value = ".")]
        repo: std::path::PathBuf,
        #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
        format: TextOrJson,
    },
    /// Print the GitHub App manifest (least-privilege permissions, events).
    AppManifest {
        /// Public base URL of this server (the webhook is `<url>/webhook`).
        #[arg(long, default_value = "https://sweepgate.example.com")]
        public_url: String,
        /// The read-only variant for a shadow installation (`serve --mode shadow`).
        #[arg(long)]
        shadow: bool,
    },
    /// Check the configuration `serve` would use: the database and its
    /// migrations, the webhook secret, the App, its installations,
    /// permissions and events, and each repository's configuration,
    /// CODEOWNERS, checklist template and sweep workflow. Prints ✔ or ✘
    /// with the fix for each; exit 1 on any ✘.
    Doctor(ServerArgs),
}

/// Parses `args` (the program name first) as the command line would,
/// without running anything: the docs test checks the commands it cannot
/// run (they need a real GitHub) against the real flags.
pub fn try_parse(args: &[&str]) -> Result<(), clap::Error> {
    Cli::try_parse_from(args).map(|_| ())
}

pub fn main() -> ExitCode {
    main_from(std::env::args_os())
}

/// [`main`] on given arguments (the program name first): `cargo xtask`
/// runs the service's own command line through it.
pub fn main_from(args: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    // A usage error or `--help` is printed as clap prints it, with its exit
    // code, but returned rather than exiting (tests call this).
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => {
            let cfg = ServerConfig::resolve(&args)?;
            crate::app::init_logging(cfg.log_format);
            runtime()?.block_on(crate::app::serve(cfg))?;
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "demo")]
        Command::Demo(args) => {
            // The script's own lines are the demo's output; logs only for trouble.
            crate::app::init_logging_at(crate::config::server::LogFormat::Text, "warn");
            runtime()?.block_on(crate::demo::run(args))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Matrix(args) => Ok(matrix::run(args)),
        Command::Lint(args) => Ok(lint::run_cli(args)),
        Command::Check(args) => Ok(check::run(args)),
        Command::Replay(args) => Ok(replay::run(args)),
        Command::Verify {
            repo,
            signoff,
            pr,
            compare: _,
            publish,
            today,
            format,
            server,
        } => {
            let cfg = ServerConfig::resolve(&server)?;
            crate::app::init_logging_at(cfg.log_format, "warn");
            let json = format == TextOrJson::Json;
            match (signoff, pr) {
                (_, Some(pr)) => runtime()?.block_on(compare::run(&cfg, &repo, pr, today, json)),
                (Some(signoff), None) => runtime()?.block_on(crate::app::verify_once(
                    &cfg, &repo, &signoff, publish, today, json,
                )),
                (None, None) => anyhow::bail!("verify needs --signoff URL, or --pr N --compare"),
            }
        }
        Command::Runners { repo, format } => {
            let report = runners::read(&repo).map_err(anyhow::Error::msg)?;
            match format {
                TextOrJson::Json => print_out(&(serde_json::to_string_pretty(&report)? + "\n"))?,
                TextOrJson::Text => print_out(&runners::render_text(&report))?,
            }
            // A label nobody serves is worth a failing exit in scripts.
            Ok(if report.unserved.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::AppManifest { public_url, shadow } => {
            let json = if shadow {
                crate::deploy::shadow_app_manifest_json(&public_url)?
            } else {
                crate::deploy::app_manifest_json(&public_url)?
            };
            print_out(&json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Doctor(args) => {
            let cfg = ServerConfig::resolve(&args)?;
            crate::app::init_logging_at(cfg.log_format, "error");
            runtime()?.block_on(doctor::run(&cfg))
        }
        Command::Migrate(args) => {
            let cfg = ServerConfig::resolve(&args)?;
            crate::app::init_logging(cfg.log_format);
            runtime()?.block_on(async {
                crate::app::open_store(&cfg).await?;
                print_out(&format!(
                    "migrations applied to {}\n",
                    crate::app::redact_url(&cfg.database_url)
                ))?;
                anyhow::Ok(())
            })?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once("sweepgate").chain(args.iter().copied()))
            .map(|c| c.command)
    }

    #[test]
    fn check_takes_its_flags_and_refuses_bad_ones() {
        let Ok(Command::Check(a)) = parse(&[
            "check",
            "--repo",
            "r",
            "--base",
            "b",
            "--head",
            "h",
            "--today",
            "2026-10-16",
            "--format",
            "json",
        ]) else {
            panic!("check did not parse");
        };
        assert_eq!((a.base.as_str(), a.head.as_str()), ("b", "h"));
        assert_eq!(a.format, TextOrJson::Json);
        assert_eq!(a.today, chrono::NaiveDate::from_ymd_opt(2026, 10, 16));
        assert!(parse(&["check", "--repo"]).is_err());
        assert!(parse(&["check", "--base", "b", "--head", "h"]).is_err());
        assert!(
            parse(&[
                "check", "--repo", "r", "--base", "b", "--head", "h", "--today", "16.10."
            ])
            .is_err()
        );
    }

    #[test]
    fn lint_formats_are_an_enum() {
        let Ok(Command::Lint(a)) = parse(&[
            "lint", "--repo", "r", "--base", "b", "--head", "h", "--format", "sarif",
        ]) else {
            panic!("lint did not parse");
        };
        assert_eq!(a.format, lint::Format::Sarif);
        assert!(
            parse(&[
                "lint", "--repo", "r", "--base", "b", "--head", "h", "--format", "xml"
            ])
            .is_err()
        );
    }
}
