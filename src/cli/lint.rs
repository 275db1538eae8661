//! `sweepgate lint --repo PATH --base REV --head REV [--pr N]
//! [--format text|json|sarif]`: the recipe lint on a local git range,
//! judged against its base (only new errors fail), or `--all`: an audit of
//! the whole tree at `--head`.

use std::process::ExitCode;

use sweepgate_core::checks::lint::{Finding, Judged, Scope, has_new_errors, lint_judged, sarif};

use super::output::print_out;
use crate::lint::gather::Gather;
use crate::repo::{self, DEFAULT_MAX_BLOB, GitRepo};

/// `--format`: findings as text lines, JSON or SARIF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Sarif,
    /// GitHub workflow commands: `::error file=…,line=…::…` per new
    /// finding (annotations where code scanning cannot be used, e.g. a
    /// fork's pull request); pre-existing ones as `::notice`.
    Github,
}

#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// The benchmark repository checkout.
    #[arg(long)]
    pub repo: String,
    /// The PR's base revision (the diff starts at its merge base with
    /// `--head`, as GitHub compares a PR).
    #[arg(long, required_unless_present_any = ["all", "staged"])]
    pub base: Option<String>,
    /// The PR's head revision.
    #[arg(long, default_value = "HEAD")]
    pub head: String,
    /// The PR number (checked against changelog `pr-link`s); default: the
    /// last `(#NNNN)` of the head commit's subject.
    #[arg(long)]
    pub pr: Option<u64>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Audit the whole tree at `--head`: every key, script and recipe,
    /// every finding counted as new.
    #[arg(long, conflicts_with = "base")]
    pub all: bool,
    /// Lint the staged change: the index against `HEAD` (a pre-commit
    /// hook). `--repo` is the work tree.
    #[arg(long, conflicts_with_all = ["base", "all"])]
    pub staged: bool,
    /// Refuse (as a finding naming the file) any file larger than this.
    #[arg(long, default_value_t = DEFAULT_MAX_BLOB)]
    pub max_file_bytes: u64,
}

impl Args {
    /// A range lint with the defaults (tests and callers).
    pub fn range(repo: &str, base: &str, head: &str, pr: Option<u64>, format: Format) -> Self {
        Self {
            repo: repo.into(),
            base: Some(base.into()),
            head: head.into(),
            pr,
            format,
            all: false,
            staged: false,
            max_file_bytes: DEFAULT_MAX_BLOB,
        }
    }
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
        Format::Github => findings.iter().map(|f| workflow_command(f, true)).collect(),
    }
}

/// Escapes a workflow command's property (`%`, CR, LF, `:` and `,`) or,
/// with `data`, its message (`%`, CR, LF).
fn escape(s: &str, property: bool) -> String {
    let mut out = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    if property {
        out = out.replace(':', "%3A").replace(',', "%2C");
    }
    out
}

/// One finding as a GitHub workflow command (an annotation on the file
/// and line); a pre-existing one is only a notice.
fn workflow_command(f: &Finding, new: bool) -> String {
    let level = match (new, f.severity.to_string().as_str()) {
        (false, _) => "notice",
        (true, "error") => "error",
        (true, "warning") => "warning",
        _ => "notice",
    };
    let mut message = f.message.clone();
    if let Some(fix) = &f.fix {
        message.push_str(&format!(" Fix: {fix}"));
    }
    format!(
        "::{level} file={},line={},title={}::{}\n",
        escape(&f.file, true),
        f.line.max(1),
        escape(f.rule, true),
        escape(&message, false)
    )
}

/// Render judged findings: as [`render`], pre-existing ones marked (text),
/// with fingerprints and baseline states (JSON, SARIF).
pub fn render_judged(judged: &[Judged], format: Format) -> String {
    match format {
        Format::Text => {
            let mut s: String = judged
                .iter()
                .map(|j| {
                    if j.is_new() {
                        format!("{}\n", j.finding)
                    } else {
                        format!("{} [pre-existing]\n", j.finding)
                    }
                })
                .collect();
            if judged.is_empty() {
                s.push_str("no recipe lint findings\n");
            }
            s
        }
        Format::Json => {
            serde_json::to_string_pretty(&serde_json::json!({ "findings": judged }))
                .unwrap_or_default()
                + "\n"
        }
        Format::Sarif => {
            serde_json::to_string_pretty(&sarif::to_sarif_judged(judged)).unwrap_or_default() + "\n"
        }
        Format::Github => judged
            .iter()
            .map(|j| workflow_command(&j.finding, j.is_new()))
            .collect(),
    }
}

/// Read the PR from the local repository and lint it: every head finding.
pub async fn run(args: &Args) -> Result<Vec<Finding>, String> {
    Ok(run_judged(args)
        .await?
        .into_iter()
        .map(|j| j.finding)
        .collect())
}

/// Read the PR from the local repository, lint it and judge each finding
/// against the base.
pub async fn run_judged(args: &Args) -> Result<Vec<Judged>, String> {
    let src = GitRepo::new(&args.repo).with_max_blob(args.max_file_bytes);
    let head = crate::repo::RepoSource::resolve(&src, &args.head)
        .await
        .map_err(|e| e.to_string())?;
    // An audit reads the configuration and judges the tree at the head.
    let base = args.base.clone().unwrap_or_else(|| head.clone());
    let base_sha = crate::repo::RepoSource::resolve(&src, &base)
        .await
        .map_err(|e| e.to_string())?;
    let config = crate::config::repo::read_at(&src, &base_sha)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let pr = match args.pr {
        Some(n) => Some(n),
        None => src
            .commit_info(&head)
            .await
            .map_err(|e| e.to_string())
            .map(|c| repo::pr_from_subject(&c.subject))?,
    };
    let mut opts = Gather::new(pr, config);
    opts.max_file_bytes = args.max_file_bytes;
    if args.all {
        opts.scope = Scope::All;
    }
    let input = crate::lint::gather::from_source(&src, &base, &head, opts)
        .await
        .map_err(|e| e.to_string())?;
    Ok(lint_judged(&input))
}

/// Runs `sweepgate lint`: exit 1 when a new error is found, 0 otherwise,
/// 2 on an input error.
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
    let mut args = args;
    if args.staged {
        match rt.block_on(GitRepo::new(&args.repo).staged_commit()) {
            Ok(sha) => {
                args.base = Some("HEAD".into());
                args.head = sha;
            }
            Err(e) => {
                eprintln!("error: --staged: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let findings = match rt.block_on(run_judged(&args)) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut text = render_judged(&findings, args.format);
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
    // Only what the PR introduces fails it (`--all`: everything is new).
    if has_new_errors(&findings) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
