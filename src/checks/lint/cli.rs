//! `sweepgate lint --repo PATH --base REV --head REV [--pr N]
//! [--format text|json|sarif]`: exit 1 when an error is found, 0
//! otherwise, 2 on usage or I/O errors.

use std::process::ExitCode;

use crate::config::RepoConfig;
use crate::config::repo::REPO_CONFIG_PATH;
use crate::repo::{self, GitRepo};

use super::input::LintInput;
use super::{Finding, has_errors, lint, sarif};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Sarif,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub repo: String,
    pub base: String,
    pub head: String,
    pub pr: Option<u64>,
    pub format: Format,
}

const USAGE: &str =
    "usage: sweepgate lint --repo PATH --base REV --head REV [--pr N] [--format text|json|sarif]";

/// Parse the arguments after `lint` (a leading `lint` is skipped).
pub fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut it = args.iter().peekable();
    if it.peek().is_some_and(|a| a.as_str() == "lint") {
        it.next();
    }
    let (mut repo, mut base, mut head, mut pr, mut format) = (None, None, None, None, Format::Text);
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "--repo" => repo = Some(value()?),
            "--base" => base = Some(value()?),
            "--head" => head = Some(value()?),
            "--pr" => {
                let v = value()?;
                pr = Some(
                    v.parse::<u64>()
                        .map_err(|_| format!("--pr must be a number, not `{v}`"))?,
                );
            }
            "--format" => {
                format = match value()?.as_str() {
                    "text" => Format::Text,
                    "json" => Format::Json,
                    "sarif" => Format::Sarif,
                    other => return Err(format!("unknown format `{other}` (text, json or sarif)")),
                }
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unexpected argument `{other}`")),
        }
    }
    Ok(Args {
        repo: repo.ok_or("--repo is required")?,
        base: base.ok_or("--base is required")?,
        head: head.ok_or("--head is required")?,
        pr,
        format,
    })
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
    let input = LintInput::from_source(&src, &args.base, &args.head, args.pr, config)
        .await
        .map_err(|e| e.to_string())?;
    Ok(lint(&input))
}

/// Entry point of `sweepgate lint`.
pub fn cli_main(args: Vec<String>) -> ExitCode {
    let args = match parse_args(&args) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
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
    match rt.block_on(run(&args)) {
        Ok(findings) => {
            let text = render(&findings, args.format);
            if args.format == Format::Text && crate::progress::colour_stdout() {
                for l in text.lines() {
                    println!("{}", crate::progress::paint_severity(l));
                }
            } else {
                print!("{text}");
            }
            if has_errors(&findings) {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
