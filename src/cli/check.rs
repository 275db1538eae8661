//! `sweepgate check`: the sign-off verification (checks 0–17) on a local
//! git range. Exit 0 on PASS, 1 on REJECTED, 2 on a usage or input error.
//!
//! Facts that only GitHub has (check runs, comments, the pinned run, team
//! memberships, upstream PRs) are absent unless `--facts` gives them as
//! JSON (`verdict::GithubFacts`); the checks that need them then say N/A or
//! REVIEW with that reason, never a guess.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chrono::NaiveDate;

use super::output::{TextOrJson, print_out};
use crate::repo::GitRepo;
use crate::snapshot::{GithubFacts, LocalCheck, LocalError, check_repo, read_artifacts};
use crate::verdict::render_comment;

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Args {
    /// The benchmark repository checkout.
    #[arg(long)]
    pub repo: PathBuf,
    /// The PR's base revision (the merge base with `--head` is assessed).
    #[arg(long)]
    pub base: String,
    /// The PR's head revision.
    #[arg(long)]
    pub head: String,
    /// A file holding the sign-off checklist comment.
    #[arg(long)]
    pub signoff: Option<PathBuf>,
    /// The date Check 7 assesses against (default: today, UTC).
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub today: Option<NaiveDate>,
    /// `text` (the verdict comment) or `json` (the rows).
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    /// A directory of downloaded run artifacts (`agg_bmk.json`,
    /// `agg_eval_all.json`, `bmk_agentic_*` JSON files).
    #[arg(long)]
    pub artifacts: Option<PathBuf>,
    /// GitHub-only facts as JSON (check runs, comments, the pinned run…).
    #[arg(long)]
    pub facts: Option<PathBuf>,
    /// The PR number (waivers, changelog links); default: the last
    /// `(#NNNN)` of the head commit's subject.
    #[arg(long)]
    pub pr: Option<u64>,
}

/// Runs `sweepgate check`.
pub(crate) fn run(args: Args) -> ExitCode {
    crate::progress::enable_on_terminal();
    match verify(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn verify(args: &Args) -> Result<ExitCode, LocalError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map_err(|e| LocalError::Io(p.display().to_string(), e.to_string()))
    };
    let signoff = args.signoff.as_deref().map(read).transpose()?;
    let facts: GithubFacts = match &args.facts {
        Some(p) => serde_json::from_str(&read(p)?)
            .map_err(|e| LocalError::Parse(p.display().to_string(), e.to_string()))?,
        None => GithubFacts::default(),
    };
    let artifacts = args.artifacts.as_deref().map(read_artifacts).transpose()?;
    let today = args
        .today
        .unwrap_or_else(|| chrono::Utc::now().date_naive());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| LocalError::Io("tokio runtime".into(), e.to_string()))?;
    let opts = LocalCheck {
        signoff,
        facts,
        artifacts,
        today,
        pr: args.pr,
        config: None,
    };
    let (v, s, _) = rt.block_on(check_repo(
        &GitRepo::new(&args.repo),
        &args.base,
        &args.head,
        opts,
    ))?;
    let notes = s.notes;
    let text = match args.format {
        TextOrJson::Json => {
            let out = serde_json::json!({
                "verdict": if v.passed() { "PASS" } else { "REJECTED" },
                "head_sha": v.head_sha,
                "signer": v.signer,
                "rows": v.rows,
                "not_provided": notes,
                "comment": render_comment(&v),
            });
            serde_json::to_string_pretty(&out).unwrap_or_default() + "\n"
        }
        TextOrJson::Text => render_comment(&v) + "\n",
    };
    print_out(&text).map_err(|e| LocalError::Io("standard output".into(), e.to_string()))?;
    if args.format == TextOrJson::Text && !notes.is_empty() {
        eprintln!("not provided: {}", notes.join("; "));
    }
    Ok(if v.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
