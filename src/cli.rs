//! Command line entry point.
use crate::config::server::{ServerArgs, ServerConfig};
use clap::{Parser, Subcommand};
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
    Demo(crate::demo::DemoArgs),
    /// Expand master configs into the sweep job matrix, exactly as the
    /// reference generator (`full-sweep …` or `test-config …`, plus `--repo PATH`).
    #[command(disable_help_flag = true)]
    Matrix {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Lint a local git range: `--repo PATH --base REV --head REV
    /// [--pr N] [--format text|json|sarif]`.
    #[command(disable_help_flag = true)]
    Lint {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run the sign-off verification on a local git range: `--repo PATH
    /// --base REV --head REV [--signoff FILE] [--today YYYY-MM-DD]`.
    #[command(disable_help_flag = true)]
    Check {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Verify a sign-off on GitHub from its URL
    /// (`…/pull/<n>#issuecomment-<id>`, `#pullrequestreview-<id>` or
    /// `#discussion_r<id>`); prints the verdict, publishes it with
    /// `--publish`. Exit 0 on PASS, 1 on REJECTED, 2 on an error.
    Verify {
        /// `owner/name` of the benchmark repository.
        #[arg(long)]
        repo: String,
        /// The sign-off's URL.
        #[arg(long)]
        signoff: String,
        /// Post the verdict comment, status and check run.
        #[arg(long)]
        publish: bool,
        /// The date Check 7 assesses against (default: today, UTC).
        #[arg(long)]
        today: Option<chrono::NaiveDate>,
        /// `text` (the comment) or `json` (the rows).
        #[arg(long, default_value = "text")]
        format: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// List the runner labels and their nodes, and the labels master
    /// configs use that no runner carries.
    Runners {
        /// The benchmark repository checkout.
        #[arg(long, default_value = ".")]
        repo: std::path::PathBuf,
        /// `text` or `json`.
        #[arg(long, default_value = "text")]
        format: String,
    },
    /// Run the performance benchmarks and write `docs/performance.md`
    /// (`--quick`, `--out PATH`, `--only NAME`).
    Bench(crate::bench::BenchArgs),
    /// Serve the sandbox GitHub as its own process, with a seeded world and
    /// a control API under `/_sandbox/control/` (for reliability runs).
    Sandbox(crate::sandbox::process::SandboxArgs),
    /// Reliability runs against real processes: `crash`, `replicas`,
    /// `load`, and `send` (the load process).
    Reliability(crate::reliability::ReliabilityArgs),
    /// Print the GitHub App manifest (least-privilege permissions, events).
    AppManifest {
        /// Public base URL of this server (the webhook is `<url>/webhook`).
        #[arg(long, default_value = "https://sweepgate.example.com")]
        public_url: String,
    },
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
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
        Command::Demo(args) => {
            // The script's own lines are the demo's output; logs only for trouble.
            crate::app::init_logging_at(crate::config::server::LogFormat::Text, "warn");
            runtime()?.block_on(crate::demo::run(args))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Matrix { args } => Ok(crate::matrix::cli_main(args)),
        Command::Lint { args } => Ok(crate::checks::lint::cli::cli_main(args)),
        Command::Check { args } => Ok(crate::verdict::local::cli_main(args)),
        Command::Verify {
            repo,
            signoff,
            publish,
            today,
            format,
            server,
        } => {
            let cfg = ServerConfig::resolve(&server)?;
            crate::app::init_logging_at(cfg.log_format, "warn");
            let json = match format.as_str() {
                "json" => true,
                "text" => false,
                other => anyhow::bail!("--format {other}: text or json"),
            };
            runtime()?.block_on(crate::app::verify_once(
                &cfg, &repo, &signoff, publish, today, json,
            ))
        }
        Command::Runners { repo, format } => {
            let report = crate::sweep::runners_cli::read(&repo).map_err(anyhow::Error::msg)?;
            match format.as_str() {
                "json" => println!("{}", serde_json::to_string_pretty(&report)?),
                "text" => print!("{}", crate::sweep::runners_cli::render_text(&report)),
                other => anyhow::bail!("--format {other}: text or json"),
            }
            // A label nobody serves is worth a failing exit in scripts.
            Ok(if report.unserved.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Bench(args) => crate::bench::main(args),
        Command::Sandbox(args) => {
            crate::app::init_logging_at(crate::config::server::LogFormat::Text, "warn");
            runtime()?.block_on(crate::sandbox::process::run(args))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Reliability(args) => {
            crate::app::init_logging_at(crate::config::server::LogFormat::Text, "warn");
            runtime()?.block_on(crate::reliability::main(args))
        }
        Command::AppManifest { public_url } => {
            print!("{}", crate::deploy::app_manifest_json(&public_url)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Migrate(args) => {
            let cfg = ServerConfig::resolve(&args)?;
            crate::app::init_logging(cfg.log_format);
            runtime()?.block_on(async {
                crate::app::open_store(&cfg).await?;
                println!(
                    "migrations applied to {}",
                    crate::app::redact_url(&cfg.database_url)
                );
                anyhow::Ok(())
            })?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
