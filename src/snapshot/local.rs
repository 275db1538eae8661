//! The verifier on a local git range (`sweepgate check`, `cli::check`):
//! the snapshot read from a clone instead of the GitHub API.
//!
//! Facts that only GitHub has (check runs, comments, the pinned run, team
//! memberships, upstream PRs) are absent unless `--facts` gives them as
//! JSON ([`GithubFacts`]); the checks that need them then say N/A or
//! REVIEW with that reason, never a guess. `--artifacts` reads a
//! directory of downloaded run artifacts (`agg_bmk.json`,
//! `agg_eval_all.json`, `bmk_agentic_*` JSON files).
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::NaiveDate;
use serde::Deserialize;

use crate::repo::{GitRepo, RepoError, RepoSource};
use crate::verdict::{Verdict, verify};
use sweepgate_core::checks::VerifierSettings;
use sweepgate_core::checks::snapshot::{
    AckRecord, ChangedFile, CheckRun, Comment, Commit, Membership, PageFetch, PinnedRun,
    PullRequest, RunArtifacts, Signoff, SignoffKind, Snapshot, UpstreamPr, diff_files,
    parse_master_cached,
};
use sweepgate_core::config::RepoConfig;

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
pub(crate) fn signoff_from_text(body: &str) -> Signoff {
    Signoff {
        author: sweepgate_core::signoff::signed_name(body).unwrap_or_default(),
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
pub(crate) fn add_artifact_file(
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
pub fn read_artifacts(dir: &Path) -> Result<RunArtifacts, LocalError> {
    let mut out = RunArtifacts::default();
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d)
            .map_err(|e| LocalError::Io(d.display().to_string(), e.to_string()))?;
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
            .map_err(|e| LocalError::Io(p.display().to_string(), e.to_string()))?;
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        add_artifact_file(&mut out, name, &text)
            .map_err(|e| LocalError::Parse(p.display().to_string(), e.to_string()))?;
    }
    Ok(out)
}

/// What can go wrong reading a local range's facts.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("{0}: {1}")]
    Io(String, String),
    #[error("{0}: {1}")]
    Parse(String, String),
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// The repository configuration (`.github/sweepgate.toml`).
    #[error(transparent)]
    Config(sweepgate_core::config::ConfigError),
}

async fn read_text(
    src: &dyn RepoSource,
    rev: &str,
    path: &str,
) -> Result<Option<String>, RepoError> {
    Ok(crate::repo::read_optional_blob(src, rev, path)
        .await?
        .map(|b| text_of(&b)))
}

/// The bytes as text, invalid UTF-8 replaced: the whole-slice check first
/// (valid text, nearly every file, is copied once without a
/// character-by-character pass).
fn text_of(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(t) => t.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
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
pub(crate) struct PolicyAt<'a> {
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
pub(crate) async fn read_trees(
    src: &dyn RepoSource,
    base: &str,
    head: &str,
    policy_at: PolicyAt<'_>,
) -> Result<(Trees, RepoConfig), LocalError> {
    let cmp = src.compare(base, head).await?;
    let base_sha = cmp.merge_base.clone();
    let head_sha = cmp.head.clone();
    let policy_rev = policy_at.rev.unwrap_or(&base_sha).to_owned();
    let cfg = match policy_at.cfg {
        Some(c) => c,
        None => crate::config::repo::read_at(src, &policy_rev)
            .await?
            .map_err(LocalError::Config)?,
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
        // An unchanged file: the keys that start a line after the first
        // (`\n<key>:` in it), found in one pass over its lines.
        let unchanged = base_files.get(m).filter(|b| *b == text);
        let line_keys: std::collections::HashSet<&str> = unchanged
            .map(|b| {
                b.split('\n')
                    .skip(1)
                    .flat_map(|line| line.match_indices(':').map(move |(i, _)| &line[..i]))
                    .collect()
            })
            .unwrap_or_default();
        for e in parsed.as_ref().as_ref().map_or(&[][..], Vec::as_slice) {
            if unchanged.is_some_and(|b| {
                if e.key.contains('\n') {
                    b.contains(&format!("\n{}:", e.key))
                } else {
                    line_keys.contains(e.key.as_str())
                }
            }) {
                continue;
            }
            for cf in e.config_files() {
                let tail = format!("/{}", cf.strip_prefix("recipes/").unwrap_or(&cf));
                extra.extend(
                    head_tree
                        .iter()
                        .filter(|h| **h == cf || h.ends_with(&tail))
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
    ))
}

/// What a local check run is given beyond the range.
#[derive(Debug, Clone)]
pub struct LocalCheck {
    /// The sign-off checklist comment, if any.
    pub signoff: Option<String>,
    pub facts: GithubFacts,
    pub artifacts: Option<RunArtifacts>,
    pub today: NaiveDate,
    /// The PR number; default: the facts' PR, else the last `(#NNNN)` of
    /// the head commit's subject.
    pub pr: Option<u64>,
    /// The repository configuration (a replay passes the layout of the
    /// commit); default: `.github/sweepgate.toml` at the merge base.
    pub config: Option<RepoConfig>,
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
) -> Result<(Verdict, Snapshot, RepoConfig), LocalError> {
    let opts = LocalCheck {
        signoff: signoff.map(str::to_owned),
        facts,
        artifacts,
        today,
        pr: None,
        config: None,
    };
    check_repo(&GitRepo::new(repo), base, head, opts).await
}

/// [`check_local`] on an open repository handle (the replay keeps one
/// per worker, with its object reader and caches).
pub async fn check_repo(
    src: &GitRepo,
    base: &str,
    head: &str,
    opts: LocalCheck,
) -> Result<(Verdict, Snapshot, RepoConfig), LocalError> {
    let (trees, cfg) = read_trees(
        src,
        base,
        head,
        PolicyAt {
            rev: None,
            cfg: opts.config,
        },
    )
    .await?;
    let mut facts = opts.facts;
    if facts.commits.is_none() {
        // As before: no commit list when git cannot tell.
        let commits = src
            .commits_between(&trees.base_sha, &trees.head_sha)
            .await
            .unwrap_or_default();
        facts.commits = Some(
            commits
                .into_iter()
                .map(|sha| Commit {
                    sha,
                    message: String::new(),
                })
                .collect(),
        );
    }
    let known = facts.pr.as_ref().map_or(0, |p| p.number);
    let number = match opts.pr {
        Some(n) => Some(n),
        None if known != 0 => None,
        None => crate::repo::pr_from_subject(&src.commit_info(&trees.head_sha).await?.subject),
    };
    if let Some(n) = number {
        facts.pr.get_or_insert_with(PullRequest::default).number = n;
    }
    if let Some(body) = &opts.signoff {
        facts.signoff = Some(signoff_from_text(body));
    }
    let settings = cfg.verifier.clone();
    let legacy = crate::repo::legacy_images(src, &trees.base_sha, &cfg.paths.legacy_sweeps).await?;
    let mut s = snapshot_from_trees(trees, facts, opts.artifacts, settings, opts.today);
    s.base_legacy_images = legacy;
    let v = verify(&s, &cfg);
    Ok((v, s, cfg))
}
