//! `cargo xtask`: sweepgate's development commands, kept out of the
//! production binary.
//!
//! - `bench`: every performance benchmark against its budget
//!   (`docs/performance.md`);
//! - `load`: acknowledgement under an open-loop load from this process to
//!   a `sweepgate serve` child;
//! - `reliability crash|replicas|load|send|report`: crash safety, replicas
//!   and load against real `serve` processes (`docs/reliability.md`);
//! - `engine-tables`: lint L30's option tables from released engine
//!   packages (by hand, not in CI);
//! - `sandbox`: the sandbox GitHub as its own process, with the reliability
//!   world and its control API;
//! - `sweepgate …`: the service's own command line (`sweepgate serve` and
//!   the rest), which the reliability runs start as child processes.
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sweepgate::config::server::LogFormat;
use xtask::{bench, load, reliability};

mod engines;

#[derive(Debug, Parser)]
#[command(name = "xtask", about = "sweepgate's development commands")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the performance benchmarks and write `docs/performance.md`
    /// (`--quick`, `--out PATH`, `--only NAME`).
    Bench(bench::BenchArgs),
    /// Signed `pull_request` deliveries at a fixed rate (open loop) from
    /// this process to a default `sweepgate serve` child on a fresh
    /// database: achieved rate, p50/p99/p99.9 from the scheduled send
    /// times, and the deliveries stored (`--rate 5000 --duration 60
    /// --warmup 10 --backend sqlite|postgres`).
    Load(load::LoadArgs),
    /// Reliability runs against real processes: `crash`, `replicas`,
    /// `load`, `send` (the load process) and `report`.
    Reliability(reliability::ReliabilityArgs),
    /// Serve the sandbox GitHub as its own process, with a seeded world and
    /// a control API under `/_sandbox/control/` (for reliability runs).
    Sandbox(sweepgate_sandbox::process::SandboxArgs),
    /// Generate lint L30's option tables from released engine packages
    /// (`vllm==0.21.0 sglang==0.5.16 …`; needs pip and the network, so it
    /// runs by hand and its output `lint-data/engine-tables.toml` is
    /// committed).
    EngineTables(engines::EngineTablesArgs),
    /// The service's command line (`xtask sweepgate serve …`), as the
    /// `sweepgate` binary runs it.
    #[command(disable_help_flag = true)]
    Sweepgate {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sweepgate { args } => {
            return sweepgate::cli::main_from(
                std::iter::once(std::ffi::OsString::from("sweepgate")).chain(args),
            );
        }
        Command::Bench(args) => bench::main(args),
        Command::EngineTables(args) => engines::main(args),
        Command::Sandbox(args) => {
            sweepgate::app::init_logging_at(LogFormat::Text, "warn");
            runtime()
                .and_then(|rt| rt.block_on(sweepgate_sandbox::process::run(args)))
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Load(args) => {
            sweepgate::app::init_logging_at(LogFormat::Text, "warn");
            runtime().and_then(|rt| rt.block_on(load::main(args)))
        }
        Command::Reliability(args) => {
            sweepgate::app::init_logging_at(LogFormat::Text, "warn");
            runtime().and_then(|rt| rt.block_on(reliability::main(args)))
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
