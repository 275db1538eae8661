//! `sweepgate check --repo PATH --base REV --head REV [--signoff FILE]
//! [--today YYYY-MM-DD] [--format text|json] [--artifacts DIR]
//! [--facts FILE]`: the verifier on a local git range.
//!
//! Facts that only GitHub has (check runs, comments, the pinned run, team
//! memberships, upstream PRs) are absent unless `--facts` gives them as
//! JSON ([`GithubFacts`]); the checks that need them then say N/A or
//! REVIEW with that reason, never a guess. `--artifacts` reads a
//! directory of downloaded run artifacts (`agg_bmk.json`,
//! `agg_eval_all.json`, `bmk_agentic_*` JSON files).
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chrono::NaiveDate;
use serde::Deserialize;

use super::{Verdict, render_comment, verify};
use crate::checks::snapshot::{
    AckRecord, ChangedFile, CheckRun, Comment, Commit, Membership, PageFetch, PinnedRun,
    PullRequest, RunArtifacts, Signoff, SignoffKind, Snapshot, UpstreamPr, diff_files,
    parse_master_cached,
};
use crate::checks::{VERIFIER_SETTINGS_PATH, VerifierSettings};
use crate::config::RepoConfig;
use crate::config::repo::REPO_CONFIG_PATH;
use crate::repo::{GitRepo, RepoError, RepoSource};

/// GitHub-only facts a caller can supply (all optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GithubFacts {
    pub repo: Option<String>,
    pub pr: Option<PullRequest>,
    pub check_runs: Option<BTreeMap<String, Vec<CheckRun>>>,
    pub comments: Option<Vec<Comment>>,
    pub reviews: Option<Vec<Comment>>,
    pub review_comments: Option<Vec<Comment>>,
    pub signoff: Option<Signoff>,
    pub pinned_run: Option<PinnedRun>,
    pub upstream_prs: Option<Vec<UpstreamPr>>,
    pub pages: Vec<PageFetch>,
    pub team_memberships: BTreeMap<String, Membership>,
    pub signer_permission: Option<String>,
    pub acks: Vec<AckRecord>,
    /// Commits of the PR, oldest first (overrides the local range).
    pub commits: Option<Vec<Commit>>,
}

/// Files of the benchmark repository on both sides of a change.
#[derive(Debug, Clone, Default)]
pub struct Trees {
    /// Default-branch policy files (CODEOWNERS, MODELS.md, …).
    pub policy: BTreeMap<String, String>,
    pub base: BTreeMap<String, String>,
    pub head: BTreeMap<String, String>,
    /// Changed files with patches; computed from `base`/`head` when `None`.
    pub files: Option<Vec<ChangedFile>>,
    pub base_sha: String,
    pub head_sha: String,
}

/// Assembles a snapshot from files and facts (the CLI and fixtures).
pub fn snapshot_from_trees(
    trees: Trees,
    facts: GithubFacts,
    artifacts: Option<RunArtifacts>,
    settings: VerifierSettings,
    today: NaiveDate,
) -> Snapshot {
    let files = trees
        .files
        .unwrap_or_else(|| diff_files(&trees.base, &trees.head));
    let mut pr = facts.pr.unwrap_or_default();
    if pr.base_sha.is_empty() {
        pr.base_sha = trees.base_sha.clone();
    }
    if pr.head_sha.is_empty() {
        pr.head_sha = trees.head_sha.clone();
    }
    let mut notes = Vec::new();
    if facts.check_runs.is_none() {
        notes.push("check runs not provided".to_owned());
    }
    if facts.comments.is_none() {
        notes.push("conversation comments not provided".to_owned());
    }
    if artifacts.is_none() {
        notes.push("run artifacts not provided".to_owned());
    }
    let mut s = Snapshot::default();
    s.repo = facts.repo.unwrap_or_default();
    s.pr = pr;
    s.files = files;
    s.commits = facts.commits.unwrap_or_default();
    s.check_runs = facts.check_runs;
    s.comments = facts.comments;
    s.reviews = facts.reviews;
    s.review_comments = facts.review_comments;
    s.signoff = facts.signoff;
    s.pinned_run = facts.pinned_run;
    s.artifacts = artifacts;
    s.policy = trees.policy;
    s.base_files = trees.base;
    s.head_files = trees.head;
    s.run_files = None;
    s.upstream_prs = facts.upstream_prs;
    s.pages = facts.pages;
    s.team_memberships = facts.team_memberships;
    s.signer_permission = facts.signer_permission;
    s.today = today;
    s.acks = facts.acks;
    s.settings = settings;
    s.notes = notes;
    if s.commits.is_empty() && !s.pr.head_sha.is_empty() {
        s.commits.push(Commit {
            sha: s.pr.head_sha.clone(),
            message: String::new(),
        });
    }
    s
}

/// A sign-off read from a file: author from its `Signed:` line.
pub fn signoff_from_text(body: &str) -> Signoff {
    Signoff {
        author: crate::signoff::signed_name(body).unwrap_or_default(),
        kind: SignoffKind::File,
        body: body.to_owned(),
        url: String::new(),
        created_at: String::new(),
    }
}

/// Adds one downloaded artifact file (`results-and-ingestion.md`) to the
/// run's rows: `agg_eval_all.json` holds eval rows, `agg_bmk.json` (and
/// other `agg_*` files) benchmark rows, and any file whose rows carry
/// `request_metrics` is an agentic result.
pub fn add_artifact_file(
    out: &mut RunArtifacts,
    name: &str,
    text: &str,
) -> Result<(), serde_json::Error> {
    let v: serde_json::Value = serde_json::from_str(text)?;
    let rows = match v {
        serde_json::Value::Array(a) => a,
        other => vec![other],
    };
    if name == "agg_eval_all.json" {
        out.eval_rows.extend(rows);
    } else if name == "agg_bmk.json" {
        out.bmk_rows.extend(rows);
    } else if rows.iter().any(|r| r.get("request_metrics").is_some()) {
        out.agentic_rows.extend(rows);
    } else if name.starts_with("agg_") {
        out.bmk_rows.extend(rows);
    }
    Ok(())
}

/// Reads a directory of run artifacts.
pub fn read_artifacts(dir: &Path) -> Result<RunArtifacts, CliError> {
    let mut out = RunArtifacts::default();
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d)
            .map_err(|e| CliError::Io(d.display().to_string(), e.to_string()))?;
        for entry in rd.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    for p in files {
        let text = std::fs::read_to_string(&p)
            .map_err(|e| CliError::Io(p.display().to_string(), e.to_string()))?;
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        add_artifact_file(&mut out, name, &text)
            .map_err(|e| CliError::Parse(p.display().to_string(), e.to_string()))?;
    }
    Ok(out)
}

/// What can go wrong running the local check.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("usage: {0}")]
    Usage(String),
    #[error("{0}: {1}")]
    Io(String, String),
    #[error("{0}: {1}")]
    Parse(String, String),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

const USAGE: &str = "sweepgate check --repo PATH --base REV --head REV [--signoff FILE] [--today YYYY-MM-DD] [--format text|json] [--artifacts DIR] [--facts FILE]";

#[derive(Debug, Default)]
struct Args {
    repo: PathBuf,
    base: String,
    head: String,
    signoff: Option<PathBuf>,
    today: Option<NaiveDate>,
    json: bool,
    artifacts: Option<PathBuf>,
    facts: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Args, CliError> {
    let mut it = args.iter().map(String::as_str).peekable();
    if it.peek().is_some_and(|a| a.ends_with("sweepgate")) {
        it.next();
    }
    if it.peek() == Some(&"check") {
        it.next();
    }
    let mut a = Args::default();
    let (mut repo, mut base, mut head) = (None, None, None);
    while let Some(flag) = it.next() {
        let mut val = || {
            it.next()
                .map(str::to_owned)
                .ok_or_else(|| CliError::Usage(format!("{flag} needs a value; {USAGE}")))
        };
        match flag {
            "--repo" => repo = Some(PathBuf::from(val()?)),
            "--base" => base = Some(val()?),
            "--head" => head = Some(val()?),
            "--signoff" => a.signoff = Some(PathBuf::from(val()?)),
            "--artifacts" => a.artifacts = Some(PathBuf::from(val()?)),
            "--facts" => a.facts = Some(PathBuf::from(val()?)),
            "--today" => {
                let v = val()?;
                a.today = Some(
                    NaiveDate::parse_from_str(&v, "%Y-%m-%d")
                        .map_err(|_| CliError::Usage(format!("--today {v}: not YYYY-MM-DD")))?,
                );
            }
            "--format" => match val()?.as_str() {
                "json" => a.json = true,
                "text" => a.json = false,
                other => return Err(CliError::Usage(format!("--format {other}: text or json"))),
            },
            "-h" | "--help" => return Err(CliError::Usage(USAGE.into())),
            other => {
                return Err(CliError::Usage(format!(
                    "unknown argument {other}; {USAGE}"
                )));
            }
        }
    }
    match (repo, base, head) {
        (Some(r), Some(b), Some(h)) => {
            a.repo = r;
            a.base = b;
            a.head = h;
            Ok(a)
        }
        _ => Err(CliError::Usage(USAGE.into())),
    }
}

async fn read_text(
    src: &dyn RepoSource,
    rev: &str,
    path: &str,
) -> Result<Option<String>, RepoError> {
    Ok(crate::repo::read_optional(src, rev, path)
        .await?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Reads several files at one revision, a few at a time (each is a request
/// on the GitHub API); files that do not exist are left out.
async fn read_many(
    src: &dyn RepoSource,
    rev: &str,
    paths: Vec<String>,
) -> Result<BTreeMap<String, String>, RepoError> {
    use futures::{StreamExt, TryStreamExt};
    let bar = crate::progress::Bar::new(
        format!("reading files at {}", &rev[..rev.len().min(12)]),
        paths.len(),
    );
    let bar = &bar;
    let read: Vec<(String, Option<String>)> = futures::stream::iter(paths)
        .map(|p| async move {
            let t = read_text(src, rev, &p).await?;
            bar.inc();
            Ok::<_, RepoError>((p, t))
        })
        .buffered(8)
        .try_collect()
        .await?;
    Ok(read
        .into_iter()
        .filter_map(|(p, t)| t.map(|t| (p, t)))
        .collect())
}

/// Where the policy files and the configuration come from.
pub struct PolicyAt<'a> {
    /// The default branch (the server); `None`: the merge base stands in
    /// for it (a local range).
    pub rev: Option<&'a str>,
    /// The repository configuration when the caller already holds it.
    pub cfg: Option<RepoConfig>,
}

/// Reads what the checks need of a range `base...head` through any
/// repository source (a local clone or the GitHub API): policy files,
/// master configs, the changelog, runners, every changed file on both
/// sides and the recipes and scripts the head's changed entries run.
pub async fn read_trees(
    src: &dyn RepoSource,
    base: &str,
    head: &str,
    policy_at: PolicyAt<'_>,
) -> Result<(Trees, RepoConfig, VerifierSettings), CliError> {
    let cmp = src.compare(base, head).await?;
    let base_sha = cmp.merge_base.clone();
    let head_sha = cmp.head.clone();
    let policy_rev = policy_at.rev.unwrap_or(&base_sha).to_owned();
    let cfg = match policy_at.cfg {
        Some(c) => c,
        None => match read_text(src, &policy_rev, REPO_CONFIG_PATH).await? {
            Some(t) => RepoConfig::from_toml(REPO_CONFIG_PATH, t.as_bytes())
                .map_err(|e| CliError::Parse(REPO_CONFIG_PATH.into(), e.to_string()))?,
            None => RepoConfig::default(),
        },
    };
    let settings = match read_text(src, &policy_rev, VERIFIER_SETTINGS_PATH).await? {
        Some(t) => VerifierSettings::from_toml(VERIFIER_SETTINGS_PATH, &t)
            .map_err(|e| CliError::Parse(VERIFIER_SETTINGS_PATH.into(), e.to_string()))?,
        None => VerifierSettings::default(),
    };
    let policy_tree = src.list_tree(&policy_rev).await?;
    let head_tree: BTreeSet<String> = src
        .list_tree(&head_sha)
        .await?
        .into_iter()
        .map(|e| e.path)
        .collect();
    let p = &cfg.paths;
    let singles = [
        &p.codeowners,
        &p.models_policy,
        &p.checklist_template,
        &p.eval_thresholds,
    ];
    let policy_paths: Vec<String> = policy_tree
        .into_iter()
        .map(|e| e.path)
        .filter(|path| {
            singles.contains(&path)
                || path.starts_with(&p.golden_al_dir)
                || path.starts_with(&p.waivers_dir)
        })
        .collect();
    let policy = read_many(src, &policy_rev, policy_paths).await?;
    let mut wanted: BTreeSet<String> = p.master_configs.iter().cloned().collect();
    wanted.insert(p.changelog.clone());
    wanted.insert(p.runners.clone());
    for f in &cmp.files {
        wanted.insert(f.path.clone());
        if let Some(prev) = &f.previous_path {
            wanted.insert(prev.clone());
        }
    }
    let base_files = read_many(src, &base_sha, wanted.iter().cloned().collect()).await?;
    let at_head: Vec<String> = wanted
        .iter()
        .filter(|p| head_tree.contains(p.as_str()))
        .cloned()
        .collect();
    let mut head_files = read_many(src, &head_sha, at_head).await?;
    // Recipes and scripts the head's master entries run.
    let mut extra: BTreeSet<String> = BTreeSet::new();
    for m in &p.master_configs {
        let Some(text) = head_files.get(m) else {
            continue;
        };
        // Cached: deriving the facts reads the same head text again.
        let parsed = parse_master_cached(m, text);
        for e in parsed.as_ref().as_ref().map_or(&[][..], Vec::as_slice) {
            if base_files
                .get(m)
                .is_some_and(|b| b.contains(&format!("\n{}:", e.key)) && b == text)
            {
                continue;
            }
            for cf in e.config_files() {
                let tail = cf.strip_prefix("recipes/").unwrap_or(&cf).to_owned();
                extra.extend(
                    head_tree
                        .iter()
                        .filter(|h| **h == cf || h.ends_with(&format!("/{tail}")))
                        .cloned(),
                );
            }
            let stem = format!("{}_{}_{}", e.prefix(), e.precision(), e.sku());
            extra.extend(
                head_tree
                    .iter()
                    .filter(|h| {
                        h.starts_with(&p.benchmarks)
                            && h.rsplit('/').next().is_some_and(|n| n.starts_with(&stem))
                    })
                    .cloned(),
            );
        }
    }
    let missing: Vec<String> = extra
        .into_iter()
        .filter(|p| !head_files.contains_key(p))
        .collect();
    head_files.extend(read_many(src, &head_sha, missing).await?);
    let files = cmp
        .files
        .iter()
        .map(|f| ChangedFile {
            path: f.path.clone(),
            previous_path: f.previous_path.clone(),
            status: f.status.as_str().to_owned(),
            patch: f.patch.clone(),
        })
        .collect();
    Ok((
        Trees {
            policy,
            base: base_files,
            head: head_files,
            files: Some(files),
            base_sha,
            head_sha,
        },
        cfg,
        settings,
    ))
}

/// `git rev-list --reverse base..head`; empty when git cannot tell.
fn commits_between(dir: &Path, base: &str, head: &str) -> Vec<Commit> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-list", "--reverse", &format!("{base}..{head}")])
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| Commit {
                sha: l.trim().to_owned(),
                message: String::new(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Runs the local check and returns the verdict.
pub async fn check_local(
    repo: &Path,
    base: &str,
    head: &str,
    signoff: Option<&str>,
    facts: GithubFacts,
    artifacts: Option<RunArtifacts>,
    today: NaiveDate,
) -> Result<(Verdict, Snapshot, RepoConfig), CliError> {
    let src = GitRepo::new(repo);
    let (trees, cfg, settings) = read_trees(
        &src,
        base,
        head,
        PolicyAt {
            rev: None,
            cfg: None,
        },
    )
    .await?;
    let commits = commits_between(src.dir(), &trees.base_sha, &trees.head_sha);
    let mut facts = facts;
    if facts.commits.is_none() {
        facts.commits = Some(commits);
    }
    if let Some(body) = signoff {
        facts.signoff = Some(signoff_from_text(body));
    }
    let s = snapshot_from_trees(trees, facts, artifacts, settings, today);
    let v = verify(&s, &cfg);
    Ok((v, s, cfg))
}

fn run(args: &Args) -> Result<(Verdict, Vec<String>), CliError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| CliError::Io(p.display().to_string(), e.to_string()))
    };
    let signoff = args.signoff.as_deref().map(read).transpose()?;
    let facts: GithubFacts = match &args.facts {
        Some(p) => serde_json::from_str(&read(p)?)
            .map_err(|e| CliError::Parse(p.display().to_string(), e.to_string()))?,
        None => GithubFacts::default(),
    };
    let artifacts = args.artifacts.as_deref().map(read_artifacts).transpose()?;
    let today = args
        .today
        .unwrap_or_else(|| chrono::Utc::now().date_naive());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Io("tokio runtime".into(), e.to_string()))?;
    let (v, s, _) = rt.block_on(check_local(
        &args.repo,
        &args.base,
        &args.head,
        signoff.as_deref(),
        facts,
        artifacts,
        today,
    ))?;
    Ok((v, s.notes))
}

/// Entry point of `sweepgate check`: exit 0 on PASS, 1 on REJECTED, 2 on a
/// usage or input error.
pub fn cli_main(args: Vec<String>) -> ExitCode {
    let parsed = match parse_args(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    crate::progress::enable_on_terminal();
    match run(&parsed) {
        Ok((v, notes)) => {
            if parsed.json {
                let out = serde_json::json!({
                    "verdict": if v.passed() { "PASS" } else { "REJECTED" },
                    "head_sha": v.head_sha,
                    "signer": v.signer,
                    "rows": v.rows,
                    "not_provided": notes,
                    "comment": render_comment(&v),
                });
                println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
            } else {
                println!("{}", render_comment(&v));
                if !notes.is_empty() {
                    eprintln!("not provided: {}", notes.join("; "));
                }
            }
            if v.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_with_or_without_the_subcommand() {
        let a = parse_args(
            &[
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
            ]
            .map(String::from),
        )
        .unwrap();
        assert_eq!((a.base.as_str(), a.head.as_str(), a.json), ("b", "h", true));
        assert_eq!(a.today, NaiveDate::from_ymd_opt(2026, 10, 16));
        assert!(matches!(
            parse_args(&["--repo".to_owned()]),
            Err(CliError::Usage(_))
        ));
        assert!(matches!(
            parse_args(&["--base", "b", "--head", "h"].map(String::from)),
            Err(CliError::Usage(_))
        ));
        assert!(
            parse_args(
                &[
                    "--repo", "r", "--base", "b", "--head", "h", "--today", "16.10."
                ]
                .map(String::from)
            )
            .is_err()
        );
    }
}
