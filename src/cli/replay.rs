//! `sweepgate replay --repo PATH [--range A..B | --last N | --sample FILE]
//! [--jobs N] [--format text|json]`: replays each first-parent commit of a
//! benchmark repository as a pull request (base = its parent, head = the
//! commit): the recipe lint judged against the base, the sweep gate with
//! its matrix job count, and `check` without a sign-off (facts that need
//! GitHub stay REVIEW). Paths come from the layout table
//! (`sweepgate_core::config::layout`) at each commit's time.
//!
//! Output is one record per commit in history order whatever `--jobs` is
//! (JSON lines, or one text line), then a summary; `--no-times` leaves the
//! timings out so two runs compare byte for byte. Exit 0 when no tool
//! crashed, 1 when one did (a panic, or exit 2 on an input error), 2 on a
//! usage error.
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use sweepgate_core::checks::Outcome;
use sweepgate_core::checks::lint::context::parse_masters_cached;
use sweepgate_core::checks::lint::{
    Severity, baseline::normalise, has_new_errors, lint_judged, rules_run, sarif::FINGERPRINT_KEY,
};
use sweepgate_core::config::RepoConfig;
use sweepgate_core::config::layout::{self, HISTORY, Input};
use sweepgate_core::recipe::{changelog, master, runners};
use sweepgate_core::sweep::gate::{self, GateOutcome};

use super::output::print_out;
use crate::lint::gather::Gather;
use crate::repo::{self, CommitInfo, DEFAULT_MAX_BLOB, FileBytes, GitRepo, RepoSource};
use crate::snapshot::{LocalCheck, check_repo};

/// `--format`: a text line per commit and a table, or JSON lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The benchmark repository (a clone of its history).
    #[arg(long)]
    pub repo: PathBuf,
    /// Replay the first-parent commits of `A..B` (B alone: up to B).
    #[arg(long, conflicts_with_all = ["last", "sample"])]
    pub range: Option<String>,
    /// Replay the last N first-parent commits of HEAD.
    #[arg(long, conflicts_with = "sample")]
    pub last: Option<usize>,
    /// Replay the commits a file names (one commit id per line, `#`
    /// comments), in history order.
    #[arg(long)]
    pub sample: Option<PathBuf>,
    /// Commits replayed at once.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Leave the timings out (byte-identical output across runs).
    #[arg(long)]
    pub no_times: bool,
    /// Refuse (as a finding naming the file) any file larger than this.
    #[arg(long, default_value_t = DEFAULT_MAX_BLOB)]
    pub max_file_bytes: u64,
}

impl Args {
    /// Every first-parent commit of `repo`'s HEAD, one job, text.
    pub fn new(repo: impl Into<PathBuf>) -> Self {
        Self {
            repo: repo.into(),
            range: None,
            last: None,
            sample: None,
            jobs: 1,
            format: Format::Text,
            no_times: false,
            max_file_bytes: DEFAULT_MAX_BLOB,
        }
    }
}

/// What a replay ended with.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// No tool crashed on any commit.
    pub ok: bool,
    /// The summary (the JSON of the last line of `--format json`).
    pub summary: serde_json::Value,
}

/// One finding of the lint, as the replay records it.
#[derive(Debug, Clone, Serialize)]
struct FindingRow {
    rule: &'static str,
    severity: Severity,
    file: String,
    line: usize,
    new: bool,
    fingerprint: String,
    /// What the finding is about (part of its fingerprint), when the rule
    /// names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
    message: String,
}

#[derive(Debug, Clone, Default, Serialize)]
struct LintRecord {
    /// 0 clean or only pre-existing errors, 1 a new error, 2 an input error.
    exit: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    ms: Option<u64>,
    findings: Vec<FindingRow>,
    /// Inputs that could not be read or parsed (`L00` findings).
    unread: usize,
    /// Errors under today's whole-scope counting (any error) and new ones.
    errors: usize,
    new_errors: usize,
    rules_run: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct RowRecord {
    check: u8,
    outcome: Outcome,
    /// A FAIL or REVIEW row's reason, subject, first file of its evidence
    /// and fingerprint (`row_fingerprint`), for labelling its precision.
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<RowDetail>,
}

#[derive(Debug, Clone, Serialize)]
struct RowDetail {
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    line: usize,
    fingerprint: String,
}

/// The fingerprint of a verdict row, as the lint's: check, file, subject
/// and the reason with line numbers taken out.
fn row_fingerprint(r: &sweepgate_core::checks::CheckResult, file: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let number = format!("C{:02}", r.number);
    let subject = r.subject.as_deref().unwrap_or("");
    for part in [number.as_str(), file, subject, &normalise(&r.reason)] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..16])
}

fn row_record(r: &sweepgate_core::checks::CheckResult) -> RowRecord {
    let detail = matches!(r.outcome, Outcome::Fail | Outcome::Review).then(|| {
        let (file, line) = r
            .evidence
            .iter()
            .find_map(|e| match e {
                sweepgate_core::checks::Evidence::File { path, line } => {
                    Some((Some(path.clone()), *line))
                }
                _ => None,
            })
            .unwrap_or((None, 0));
        RowDetail {
            fingerprint: row_fingerprint(r, file.as_deref().unwrap_or("")),
            reason: r.reason.clone(),
            subject: r.subject.clone(),
            file,
            line,
        }
    });
    RowRecord {
        check: r.number,
        outcome: r.outcome,
        detail,
    }
}

#[derive(Debug, Clone, Default, Serialize)]
struct CheckRecord {
    /// 0 PASS, 1 REJECTED, 2 an input error.
    exit: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    ms: Option<u64>,
    rows: Vec<RowRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
struct GateRecord {
    /// 0 allowed, skipped or not a sweep; 1 refused or no job list.
    exit: u8,
    outcome: String,
    jobs: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Everything the replay records of one commit.
#[derive(Debug, Clone, Serialize)]
struct Record {
    commit: String,
    pr: Option<u64>,
    subject: String,
    lint: LintRecord,
    check: CheckRecord,
    gate: GateRecord,
    /// Panics caught in this commit's tools (each a crash).
    panics: Vec<String>,
    /// Why the commit was not replayed (the root commit has no parent).
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<String>,
}

impl Record {
    fn crashed(&self) -> bool {
        !self.panics.is_empty() || self.lint.exit == 2 || self.check.exit == 2
    }
}

/// Runs `sweepgate replay`.
pub(crate) fn run(args: Args) -> ExitCode {
    crate::progress::enable_on_terminal();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.jobs.clamp(1, 64))
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut emit = |line: &str| print_out(line).map_err(|e| e.to_string());
    match rt.block_on(replay(&args, &mut emit)) {
        Ok(r) if r.ok => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The commits to replay, oldest first.
async fn select(args: &Args, src: &GitRepo) -> Result<Vec<CommitInfo>, String> {
    let e = |e: repo::RepoError| e.to_string();
    if let Some(r) = &args.range {
        let (base, head) = match r.split_once("..") {
            Some((a, b)) => (Some(a), if b.is_empty() { "HEAD" } else { b }),
            None => (None, r.as_str()),
        };
        return src.first_parent_chain(base, head).await.map_err(e);
    }
    let chain = src.first_parent_chain(None, "HEAD").await.map_err(e)?;
    if let Some(path) = &args.sample {
        let text = std::fs::read_to_string(path).map_err(|x| format!("{}: {x}", path.display()))?;
        let mut wanted = BTreeSet::new();
        for (i, line) in text.lines().enumerate() {
            let id = line.split('#').next().unwrap_or("").trim();
            if id.is_empty() {
                continue;
            }
            let sha = src
                .resolve(id)
                .await
                .map_err(|x| format!("{}:{}: {x}", path.display(), i + 1))?;
            wanted.insert(sha);
        }
        let picked: Vec<CommitInfo> = chain
            .into_iter()
            .filter(|c| wanted.contains(&c.sha))
            .collect();
        if picked.len() != wanted.len() {
            return Err(format!(
                "{}: {} of its commits are not on the first-parent history of HEAD",
                path.display(),
                wanted.len() - picked.len()
            ));
        }
        return Ok(picked);
    }
    let n = args.last.unwrap_or(chain.len());
    Ok(chain[chain.len().saturating_sub(n)..].to_vec())
}

/// Replays the commits `args` selects; each output line (with its
/// newline) goes to `emit`.
pub async fn replay(
    args: &Args,
    emit: &mut (dyn FnMut(&str) -> Result<(), String> + Send),
) -> Result<Replayed, String> {
    let probe = GitRepo::new(&args.repo);
    let commits = select(args, &probe).await?;
    drop(probe);
    let total = commits.len();
    let queue: Arc<Mutex<VecDeque<(usize, CommitInfo)>>> =
        Arc::new(Mutex::new(commits.into_iter().enumerate().collect()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, Record)>();
    let started = Instant::now();
    let cap = args.max_file_bytes;
    // Tree listings and comparisons are shared by the workers.
    let shared = GitRepo::new(&args.repo).with_max_blob(cap);
    for _ in 0..args.jobs.max(1) {
        let queue = queue.clone();
        let tx = tx.clone();
        // One object reader per worker, kept across its commits.
        let src = shared.sharing_caches();
        tokio::spawn(async move {
            loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                let Some((i, c)) = next else { break };
                let record = replay_guarded(&src, c, cap).await;
                if tx.send((i, record)).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let bar = crate::progress::Bar::new("replaying commits", total);
    let mut done: BTreeMap<usize, Record> = BTreeMap::new();
    let mut next_out = 0;
    let mut all: Vec<Record> = Vec::with_capacity(total);
    while let Some((i, r)) = rx.recv().await {
        bar.inc();
        done.insert(i, r);
        // Print in history order as soon as the next one is in.
        while let Some(r) = done.remove(&next_out) {
            let line = match args.format {
                Format::Json => {
                    serde_json::to_string(&strip(&r, args.no_times)).map_err(|e| e.to_string())?
                }
                Format::Text => text_line(&r),
            };
            emit(&(line + "\n"))?;
            all.push(r);
            next_out += 1;
        }
    }
    drop(bar);
    let secs = started.elapsed().as_secs_f64();
    let summary = Summary::of(&all, secs, args.no_times);
    let json = serde_json::to_value(&summary).map_err(|e| e.to_string())?;
    let text = match args.format {
        Format::Json => serde_json::json!({ "summary": json }).to_string() + "\n",
        Format::Text => summary.table(),
    };
    emit(&text)?;
    Ok(Replayed {
        ok: all.iter().all(|r| !r.crashed()),
        summary: json,
    })
}

fn strip(r: &Record, no_times: bool) -> Record {
    let mut r = r.clone();
    if no_times {
        r.lint.ms = None;
        r.check.ms = None;
    }
    r
}

fn text_line(r: &Record) -> String {
    let short = &r.commit[..r.commit.len().min(10)];
    let pr = r.pr.map_or_else(|| "-".to_owned(), |n| format!("#{n}"));
    let mut s = format!(
        "{short} {pr:>6} lint {} ({} new errors, {} findings, {} unread) check {} gate {} ({} jobs)",
        r.lint.exit,
        r.lint.new_errors,
        r.lint.findings.len(),
        r.lint.unread,
        r.check.exit,
        r.gate.exit,
        r.gate.jobs
    );
    for e in [&r.lint.error, &r.check.error, &r.gate.error]
        .into_iter()
        .flatten()
    {
        s.push_str(&format!(" | {e}"));
    }
    for p in &r.panics {
        s.push_str(&format!(" | PANIC {p}"));
    }
    if let Some(why) = &r.skipped {
        s = format!("{short} {pr:>6} skipped: {why}");
    }
    s
}

/// One commit, each tool in its own task so a panic is recorded, not
/// fatal.
async fn replay_guarded(src: &GitRepo, c: CommitInfo, cap: u64) -> Record {
    let pr = repo::pr_from_subject(&c.subject);
    let mut record = Record {
        commit: c.sha.clone(),
        pr,
        subject: c.subject.clone(),
        lint: LintRecord::default(),
        check: CheckRecord::default(),
        gate: GateRecord::default(),
        panics: Vec::new(),
        skipped: None,
    };
    let Some(parent) = c.parents.first().cloned() else {
        record.skipped = Some("the root commit has no parent to compare with".into());
        return record;
    };
    let mut config = RepoConfig::default();
    let at = layout::at(HISTORY, c.time, &config.paths);
    config.paths = at.paths;
    let not_yet = at.not_yet;

    let panic_text = |e: tokio::task::JoinError| -> String {
        match e.try_into_panic() {
            Ok(p) => p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "a panic".into()),
            Err(e) => e.to_string(),
        }
    };

    let lint_task = {
        let (src, parent, head, config, not_yet) = (
            src.clone(),
            parent.clone(),
            c.sha.clone(),
            config.clone(),
            not_yet.clone(),
        );
        tokio::spawn(
            async move { replay_lint(&src, &parent, &head, pr, config, not_yet, cap).await },
        )
    };
    match lint_task.await {
        Ok(l) => record.lint = l,
        Err(e) => record.panics.push(format!("lint: {}", panic_text(e))),
    }

    let check_task = {
        let (src, parent, head, config, time) = (
            src.clone(),
            parent.clone(),
            c.sha.clone(),
            config.clone(),
            c.time,
        );
        tokio::spawn(async move { replay_check(&src, &parent, &head, pr, config, time).await })
    };
    match check_task.await {
        Ok(r) => record.check = r,
        Err(e) => record.panics.push(format!("check: {}", panic_text(e))),
    }

    let gate_task = {
        let (src, parent, c2, config) = (src.clone(), parent.clone(), c.clone(), config.clone());
        let changelog_exists = !not_yet.contains(&Input::Changelog);
        tokio::spawn(async move { replay_gate(&src, &parent, &c2, config, changelog_exists).await })
    };
    match gate_task.await {
        Ok(g) => record.gate = g,
        Err(e) => record.panics.push(format!("gate: {}", panic_text(e))),
    }
    record
}

fn ms(t: Instant) -> Option<u64> {
    Some(u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX))
}

async fn replay_lint(
    src: &GitRepo,
    base: &str,
    head: &str,
    pr: Option<u64>,
    config: RepoConfig,
    not_yet: BTreeSet<Input>,
    cap: u64,
) -> LintRecord {
    let t = Instant::now();
    let mut opts = Gather::new(pr, config);
    opts.inputs_not_yet = not_yet;
    opts.max_file_bytes = cap;
    let input = match crate::lint::gather::from_source(src, base, head, opts).await {
        Ok(i) => i,
        Err(e) => {
            return LintRecord {
                exit: 2,
                ms: ms(t),
                error: Some(e.to_string()),
                ..LintRecord::default()
            };
        }
    };
    let judged = lint_judged(&input);
    let errors = |new_only: bool| {
        judged
            .iter()
            .filter(|j| j.finding.severity == Severity::Error && (j.is_new() || !new_only))
            .count()
    };
    LintRecord {
        exit: u8::from(has_new_errors(&judged)),
        ms: ms(t),
        unread: judged.iter().filter(|j| j.finding.rule == "L00").count(),
        errors: errors(false),
        new_errors: errors(true),
        rules_run: rules_run(&input),
        findings: judged
            .into_iter()
            .map(|j| FindingRow {
                rule: j.finding.rule,
                severity: j.finding.severity,
                file: j.finding.file,
                line: j.finding.line,
                new: j.baseline == sweepgate_core::checks::lint::BaselineState::New,
                fingerprint: j.fingerprint,
                subject: j.finding.subject,
                message: j.finding.message,
            })
            .collect(),
        error: None,
    }
}

async fn replay_check(
    src: &GitRepo,
    base: &str,
    head: &str,
    pr: Option<u64>,
    config: RepoConfig,
    time: i64,
) -> CheckRecord {
    let t = Instant::now();
    // Check 7 assesses against the day the PR merged, anywhere on Earth
    // (UTC−12): a PR merged on a policy's last day in its committer's time
    // zone (`451a230`, #2472: 19:21 -0500) is not after it.
    let today = chrono::DateTime::from_timestamp(time - 12 * 3600, 0)
        .map(|d| d.date_naive())
        .unwrap_or_default();
    let opts = LocalCheck {
        signoff: None,
        facts: Default::default(),
        artifacts: None,
        today,
        pr,
        config: Some(config),
    };
    match check_repo(src, base, head, opts).await {
        Ok((v, _, _)) => CheckRecord {
            exit: u8::from(!v.passed()),
            ms: ms(t),
            rows: v.rows.iter().map(row_record).collect(),
            error: None,
        },
        Err(e) => CheckRecord {
            exit: 2,
            ms: ms(t),
            rows: Vec::new(),
            error: Some(e.to_string()),
        },
    }
}

/// The sweep gate as a PR labelled with the recommended primary label
/// would meet it, and the job count of its appended changelog entries.
async fn replay_gate(
    src: &GitRepo,
    base: &str,
    c: &CommitInfo,
    cfg: RepoConfig,
    changelog_exists: bool,
) -> GateRecord {
    let fail = |error: String| GateRecord {
        exit: 1,
        outcome: "error".into(),
        jobs: 0,
        error: Some(error),
    };
    let log = &cfg.paths.changelog;
    let read = |rev: &str, path: &str| {
        let (rev, path) = (rev.to_owned(), path.to_owned());
        async move { repo::read_optional(src, &rev, &path).await }
    };
    let (before, after) = if changelog_exists {
        match (read(base, log).await, read(&c.sha, log).await) {
            (Ok(b), Ok(a)) => (b, a),
            (Err(e), _) | (_, Err(e)) => return fail(e.to_string()),
        }
    } else {
        (None, None)
    };
    let touches = changelog_exists && before != after;
    let mut files = Vec::new();
    for p in &cfg.paths.master_configs {
        match repo::read_optional_blob(src, &c.sha, p).await {
            Ok(Some(b)) => files.push((p.as_str(), b)),
            Ok(None) => {}
            Err(e) => return fail(e.to_string()),
        }
    }
    // The lint parsed the same blobs a moment ago: its cache has them.
    let parts: Vec<(&str, &FileBytes)> = files.iter().map(|(p, b)| (*p, b)).collect();
    let master = parse_masters_cached(&parts);
    let keys: Vec<&str> = master
        .as_ref()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    let primary = cfg.labels.primary.first().cloned().unwrap_or_default();
    let labels = vec![primary.clone()];
    let report = touches.then(|| {
        let opts = changelog::GateOptions {
            all_evals_label: false,
            evals_only_label: false,
            master_keys: master.as_ref().ok().map(|_| keys.as_slice()),
        };
        changelog::pr_gate(
            log,
            before.as_deref().unwrap_or_default(),
            after.as_deref().unwrap_or_default(),
            &opts,
        )
    });
    let outcome = gate::decide(&gate::GateInput {
        cfg: &cfg,
        labels: if touches { &labels } else { &[] },
        draft: false,
        fork: false,
        head_message: &c.subject,
        changelog: report.as_ref(),
        labeler: None,
        head_sha: &c.sha,
        fork_bound: None,
    });
    match outcome {
        GateOutcome::NotASweep => GateRecord {
            outcome: "not a sweep".into(),
            ..GateRecord::default()
        },
        GateOutcome::Skipped(why) => GateRecord {
            outcome: format!("skipped: {why}"),
            ..GateRecord::default()
        },
        GateOutcome::Refused(r) => GateRecord {
            exit: 1,
            outcome: format!("refused: {}", r.join("; ")),
            jobs: 0,
            error: None,
        },
        GateOutcome::Allowed { primary, modifiers } => {
            let appended = report.as_ref().map_or(&[][..], |r| r.appended.as_slice());
            let master = master.clone().map(Arc::unwrap_or_clone);
            match job_count(src, &c.sha, &cfg, master, appended, &primary, &modifiers).await {
                Ok(jobs) => GateRecord {
                    exit: 0,
                    outcome: "allowed".into(),
                    jobs,
                    error: None,
                },
                Err(e) => fail(e),
            }
        }
    }
}

async fn job_count(
    src: &GitRepo,
    head: &str,
    cfg: &RepoConfig,
    master: Result<master::MasterConfig, sweepgate_core::recipe::ParseError>,
    appended: &[changelog::Entry],
    primary: &str,
    modifiers: &[String],
) -> Result<usize, String> {
    use sweepgate_core::matrix::{self, jobs};
    use sweepgate_core::sweep::dispatch;
    let master = master.map_err(|e| e.to_string())?;
    let rb = repo::read_optional(src, head, &cfg.paths.runners)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{} is missing", cfg.paths.runners))?;
    let runners = runners::parse(&cfg.paths.runners, &rb).map_err(|e| e.to_string())?;
    let inputs = matrix::Inputs { master, runners };
    let entries = dispatch::entry_flags(appended);
    let list = jobs::jobs_for_entries(
        &inputs,
        &entries,
        dispatch::label_flags(&cfg.labels.roles, primary, modifiers),
    )
    .map_err(|e| e.to_string())?;
    Ok(list.throughput_len() + list.eval_len())
}

/// Checks and the lint rules that encode the same rule (issue 17 item 9):
/// on each commit both should flag or both stay silent.
const PAIRS: [(u8, &[&str]); 7] = [
    (10, &["L23"]),
    (11, &["L19", "L20", "L22", "L27", "L28"]),
    (13, &["L24"]),
    (9, &["L25"]),
    (7, &["L18"]),
    (6, &["L15"]),
    (15, &["L17"]),
];

/// Whether a FAIL row of a paired check is the fact its lint rules judge.
/// Check 7 also FAILs deprecations MODELS.md enacts (a scenario, arm or
/// precision retired), which L18 does not speak about: only its rule 1
/// (the prefix is registered) is L18's.
fn shared_fact(check: u8, row: &RowRecord) -> bool {
    match check {
        7 => row
            .detail
            .as_ref()
            .is_some_and(|d| sweepgate_core::checks::is_unregistered_prefix(&d.reason)),
        _ => true,
    }
}

/// Commits where one side of a pair flags and the other is silent. A check
/// flags with a FAIL row, the lint with a new error of one of its rules:
/// what blocks on each side.
#[derive(Debug, Clone, Default, Serialize)]
struct PairTally {
    check_only: usize,
    lint_only: usize,
    /// The first commits of each kind (short ids), to read.
    check_only_commits: Vec<String>,
    lint_only_commits: Vec<String>,
}

impl PairTally {
    const SHOWN: usize = 10;

    fn add(&mut self, r: &Record, check: u8, rules: &[&str]) {
        let fails = r.check.rows.iter().any(|row| {
            row.check == check && row.outcome == Outcome::Fail && shared_fact(check, row)
        });
        let errs = r
            .lint
            .findings
            .iter()
            .any(|f| f.new && f.severity == Severity::Error && rules.contains(&f.rule));
        let short = r.commit[..r.commit.len().min(7)].to_owned();
        match (fails, errs) {
            (true, false) => {
                self.check_only += 1;
                if self.check_only_commits.len() < Self::SHOWN {
                    self.check_only_commits.push(short);
                }
            }
            (false, true) => {
                self.lint_only += 1;
                if self.lint_only_commits.len() < Self::SHOWN {
                    self.lint_only_commits.push(short);
                }
            }
            _ => {}
        }
    }
}

/// Per-rule counts over the replay.
#[derive(Debug, Clone, Default, Serialize)]
struct RuleTally {
    commits_run: usize,
    new_errors: usize,
    new_warnings: usize,
    new_info: usize,
    pre_existing: usize,
    /// Distinct fingerprints of its new findings.
    fingerprints: usize,
}

#[derive(Debug, Clone, Serialize)]
struct Timing {
    median_ms: u64,
    max_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
struct Summary {
    commits: usize,
    /// Commits not replayed (the root commit).
    skipped: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    commits_per_second: Option<f64>,
    /// Exit status → commits, per tool.
    lint_exits: BTreeMap<u8, usize>,
    check_exits: BTreeMap<u8, usize>,
    gate_exits: BTreeMap<u8, usize>,
    panics: usize,
    /// Inputs the lint could not read or parse (each also a finding).
    unread: usize,
    /// PRs with at least one error as the lint counted before (any error
    /// in scope), and with at least one new error (the PR's own).
    prs_with_error_before: usize,
    prs_with_new_error: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    lint_time: Option<Timing>,
    #[serde(skip_serializing_if = "Option::is_none")]
    check_time: Option<Timing>,
    rules: BTreeMap<&'static str, RuleTally>,
    /// Verdict rows: check number → outcome → commits.
    rows: BTreeMap<u8, BTreeMap<&'static str, usize>>,
    /// Paired check and lint rules: commits where only one side flags,
    /// keyed `C10/L23`.
    pairs: BTreeMap<String, PairTally>,
    fingerprint_key: &'static str,
}

fn timing(mut v: Vec<u64>) -> Option<Timing> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(Timing {
        median_ms: v[v.len() / 2],
        max_ms: v[v.len() - 1],
    })
}

impl Summary {
    fn of(records: &[Record], secs: f64, no_times: bool) -> Self {
        let mut s = Summary {
            commits: records.len(),
            skipped: records.iter().filter(|r| r.skipped.is_some()).count(),
            seconds: (!no_times).then_some((secs * 100.0).round() / 100.0),
            commits_per_second: (!no_times && secs > 0.0)
                .then(|| ((records.len() as f64 / secs) * 100.0).round() / 100.0),
            lint_exits: BTreeMap::new(),
            check_exits: BTreeMap::new(),
            gate_exits: BTreeMap::new(),
            panics: 0,
            unread: 0,
            prs_with_error_before: 0,
            prs_with_new_error: 0,
            lint_time: None,
            check_time: None,
            rules: BTreeMap::new(),
            rows: BTreeMap::new(),
            pairs: BTreeMap::new(),
            fingerprint_key: FINGERPRINT_KEY,
        };
        let pair_name = |c: u8, rules: &[&str]| format!("C{c:02}/{}", rules.join(","));
        for (c, rules) in PAIRS {
            s.pairs.insert(pair_name(c, rules), PairTally::default());
        }
        let mut fps: BTreeMap<&'static str, BTreeSet<&str>> = BTreeMap::new();
        for r in records.iter().filter(|r| r.skipped.is_none()) {
            *s.lint_exits.entry(r.lint.exit).or_default() += 1;
            *s.check_exits.entry(r.check.exit).or_default() += 1;
            *s.gate_exits.entry(r.gate.exit).or_default() += 1;
            s.panics += r.panics.len();
            s.unread += r.lint.unread;
            s.prs_with_error_before += usize::from(r.lint.errors > 0);
            s.prs_with_new_error += usize::from(r.lint.new_errors > 0);
            for id in &r.lint.rules_run {
                s.rules.entry(id).or_default().commits_run += 1;
            }
            for f in &r.lint.findings {
                let t = s.rules.entry(f.rule).or_default();
                if f.new {
                    match f.severity {
                        Severity::Error => t.new_errors += 1,
                        Severity::Warning => t.new_warnings += 1,
                        Severity::Info => t.new_info += 1,
                    }
                    fps.entry(f.rule).or_default().insert(&f.fingerprint);
                } else {
                    t.pre_existing += 1;
                }
            }
            for (c, rules) in PAIRS {
                if let Some(t) = s.pairs.get_mut(&pair_name(c, rules)) {
                    t.add(r, c, rules);
                }
            }
            for row in &r.check.rows {
                *s.rows
                    .entry(row.check)
                    .or_default()
                    .entry(row.outcome.as_str())
                    .or_default() += 1;
            }
        }
        for (rule, set) in fps {
            s.rules.entry(rule).or_default().fingerprints = set.len();
        }
        if !no_times {
            s.lint_time = timing(records.iter().filter_map(|r| r.lint.ms).collect());
            s.check_time = timing(records.iter().filter_map(|r| r.check.ms).collect());
        }
        s
    }

    fn table(&self) -> String {
        let exits = |m: &BTreeMap<u8, usize>| {
            m.iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = String::new();
        out.push_str(&format!("\nreplayed {} commits", self.commits));
        if self.skipped > 0 {
            out.push_str(&format!(" ({} skipped)", self.skipped));
        }
        if let (Some(secs), Some(cps)) = (self.seconds, self.commits_per_second) {
            out.push_str(&format!(" in {secs:.1} s ({cps:.2} commits/s)"));
        }
        out.push('\n');
        out.push_str(&format!(
            "exit status  lint {{{}}}  check {{{}}}  gate {{{}}}  panics {}\n",
            exits(&self.lint_exits),
            exits(&self.check_exits),
            exits(&self.gate_exits),
            self.panics
        ));
        out.push_str(&format!(
            "inputs not read or parsed: {}\nPRs with an error: {} counted on the whole scope, {} new\n",
            self.unread, self.prs_with_error_before, self.prs_with_new_error
        ));
        for (what, t) in [("lint", &self.lint_time), ("check", &self.check_time)] {
            if let Some(t) = t {
                out.push_str(&format!(
                    "{what} per commit: median {} ms, max {} ms\n",
                    t.median_ms, t.max_ms
                ));
            }
        }
        out.push_str("\nrule  commits run  new E  new W  new I  pre-existing  fingerprints\n");
        for (rule, t) in &self.rules {
            out.push_str(&format!(
                "{rule:<5} {:>11}  {:>5}  {:>5}  {:>5}  {:>12}  {:>12}\n",
                t.commits_run,
                t.new_errors,
                t.new_warnings,
                t.new_info,
                t.pre_existing,
                t.fingerprints
            ));
        }
        out.push_str("\npair (check/lint)              check only  lint only\n");
        for (name, t) in &self.pairs {
            out.push_str(&format!(
                "{name:<30} {:>10}  {:>9}\n",
                t.check_only, t.lint_only
            ));
        }
        out.push_str("\ncheck  PASS  FAIL  REVIEW  N/A\n");
        for (n, m) in &self.rows {
            let g = |k: &str| m.get(k).copied().unwrap_or(0);
            out.push_str(&format!(
                "{n:>5}  {:>4}  {:>4}  {:>6}  {:>3}\n",
                g("PASS"),
                g("FAIL"),
                g("REVIEW"),
                g("N/A")
            ));
        }
        out
    }
}
