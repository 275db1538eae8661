//! The PR snapshot: plain data, built once at a pinned head SHA by the
//! server (GitHub) or the CLI (a local git range), then only read by the
//! checks. A fact that only GitHub has is `None` when it was not provided,
//! so a check can say "not provided" instead of guessing.
//!
//! [`Facts`] are derived from the snapshot once (parsed master configs at
//! base and head, changed keys, new changelog entries) and cached inside it.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use super::VerifierSettings;
use crate::config::RepoConfig;
use crate::recipe::changelog::{
    self,
    yaml::{self, Node, Value},
};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PullRequest {
    pub number: u64,
    pub author: String,
    pub title: String,
    pub body: String,
    pub draft: bool,
    /// `open` or `closed`.
    pub state: String,
    pub labels: Vec<String>,
    /// Merge base of the head with the base branch.
    pub base_sha: String,
    /// The pinned head: every check assesses this commit.
    pub head_sha: String,
    /// The PR head when the snapshot was built, if it moved past the pin.
    pub current_head_sha: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChangedFile {
    pub path: String,
    pub previous_path: Option<String>,
    /// GitHub's `status`: added, removed, modified, renamed, copied, changed.
    pub status: String,
    /// Unified-diff hunks without headers; `None` for binary files.
    pub patch: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Commit {
    pub sha: String,
    pub message: String,
}

/// The latest check run of one name on one commit (`filter=latest`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckRun {
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub details_url: Option<String>,
}

/// A conversation comment, review or review comment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Comment {
    pub id: u64,
    pub author: String,
    /// `author_association`: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, …
    pub association: String,
    pub body: String,
    pub url: String,
    /// RFC 3339.
    pub created_at: String,
    /// Repository role (`role_name`) read through the API, when known.
    pub permission: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignoffKind {
    #[default]
    IssueComment,
    Review,
    ReviewComment,
    /// Given to the CLI as a file.
    File,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Signoff {
    pub author: String,
    pub kind: SignoffKind,
    pub body: String,
    pub url: String,
    pub created_at: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArtifactInfo {
    pub name: String,
    pub expired: bool,
}

/// The run pinned by the newest authorized `/use` (or found by Check 1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PinnedRun {
    pub id: u64,
    pub attempt: u32,
    pub head_sha: String,
    /// `pull_request` or `workflow_dispatch`.
    pub event: String,
    pub status: String,
    pub conclusion: Option<String>,
    /// Workflow file path (`.github/workflows/run-sweep.yml`).
    pub path: String,
    pub created_at: String,
    /// Labels the run was swept under.
    pub labels: Vec<String>,
    pub artifacts: Vec<ArtifactInfo>,
    pub url: String,
}

/// Parsed contents of the run's artifacts
/// (`results-and-ingestion.md`): rows as JSON objects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunArtifacts {
    /// `eval_results_all` → `agg_eval_all.json`.
    pub eval_rows: Vec<serde_json::Value>,
    /// `results_bmk` → `agg_bmk.json` (fixed-seq-len rows, and the agentic
    /// rows it also collects).
    pub bmk_rows: Vec<serde_json::Value>,
    /// `bmk_agentic_*` → `<RESULT_FILENAME>.json`, one object each.
    pub agentic_rows: Vec<serde_json::Value>,
}

/// An upstream recipe PR (`vllm-project/recipes`, `sgl-project/sglang`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct UpstreamPr {
    /// `owner/name`.
    pub repo: String,
    pub number: u64,
    pub state: String,
    pub merged: bool,
    pub merged_at: Option<String>,
    pub draft: bool,
    pub url: String,
    pub files: Vec<ChangedFile>,
}

/// A published page fetched for Check 3 (`status` None: not fetched).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PageFetch {
    pub url: String,
    pub status: Option<u16>,
    pub body: Option<String>,
}

/// A team membership as the API reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum Membership {
    Member,
    NotMember,
    /// 403/404 or not asked: the API could not tell.
    Unknown {
        status: String,
    },
}

/// An authorized `/ack-check <N> <reason>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AckRecord {
    pub check: u8,
    pub user: String,
    pub reason: String,
    pub url: String,
    pub created_at: String,
}

/// Everything the checks read.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Snapshot {
    /// `owner/name`.
    pub repo: String,
    pub pr: PullRequest,
    pub files: Vec<ChangedFile>,
    pub commits: Vec<Commit>,
    /// Per commit SHA, the latest check run per name; `None`: not provided.
    pub check_runs: Option<BTreeMap<String, Vec<CheckRun>>>,
    pub comments: Option<Vec<Comment>>,
    pub reviews: Option<Vec<Comment>>,
    pub review_comments: Option<Vec<Comment>>,
    pub signoff: Option<Signoff>,
    pub pinned_run: Option<PinnedRun>,
    pub artifacts: Option<RunArtifacts>,
    /// Policy files from the default branch, by path (CODEOWNERS, MODELS.md,
    /// checklist template, golden AL curves, thresholds, waivers).
    pub policy: BTreeMap<String, String>,
    /// Recipe files at the merge base: master configs, changelog, and the
    /// base side of every changed file.
    pub base_files: BTreeMap<String, String>,
    /// Recipe files at the pinned head: master configs, changelog, runners,
    /// every changed file and every recipe a changed key references.
    pub head_files: BTreeMap<String, String>,
    /// Master configs at the pinned run's head SHA (Check 2's image test).
    pub run_files: Option<BTreeMap<String, String>>,
    /// Upstream recipe PRs linked by the sign-off; `None`: not provided.
    pub upstream_prs: Option<Vec<UpstreamPr>>,
    pub pages: Vec<PageFetch>,
    /// `org/team` → the signer's membership.
    pub team_memberships: BTreeMap<String, Membership>,
    /// The signer's repository role, when read.
    pub signer_permission: Option<String>,
    /// Check 7's clock.
    pub today: NaiveDate,
    pub acks: Vec<AckRecord>,
    pub settings: VerifierSettings,
    /// What the builder could not provide, for the reader.
    pub notes: Vec<String>,
    #[serde(skip)]
    facts: OnceLock<Facts>,
}

impl Snapshot {
    /// The signer's login, when there is a sign-off.
    pub fn signer(&self) -> Option<&str> {
        self.signoff.as_ref().map(|s| s.author.as_str())
    }

    /// Text of a file at the pinned head.
    pub(crate) fn head_text(&self, path: &str) -> Option<&str> {
        self.head_files.get(path).map(String::as_str)
    }

    /// The derived facts, computed on first use.
    pub(crate) fn facts(&self, cfg: &RepoConfig) -> &Facts {
        self.facts.get_or_init(|| Facts::derive(self, cfg))
    }

    /// The sign-off's additional detail section (empty without a sign-off).
    pub(crate) fn detail_section(&self) -> String {
        self.signoff
            .as_ref()
            .map(|s| crate::signoff::detail_section(&s.body))
            .unwrap_or_default()
    }

    /// Whether the commit is one of the PR's.
    pub(crate) fn has_commit(&self, sha: &str) -> bool {
        !sha.is_empty() && self.commits.iter().any(|c| c.sha == sha)
    }
}

// ---------------------------------------------------------------------
// Master configs.

/// One search-space row, flattened (multi-node rows take the decode side).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SearchRow {
    pub agentic: bool,
    pub isl: Option<i64>,
    pub osl: Option<i64>,
    pub tp: Option<i64>,
    pub ep: Option<i64>,
    pub dp_attn: bool,
    pub spec: String,
    pub conc: Vec<i64>,
    /// `additional-settings` items of the row (and its roles), with lines.
    pub settings: Vec<(String, usize)>,
    pub kv_offloading: Option<String>,
    pub line: usize,
}

/// A master-config entry with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct MasterEntry {
    pub key: String,
    pub file: String,
    pub line: usize,
    pub node: Node,
}

impl MasterEntry {
    pub(crate) fn str(&self, field: &str) -> Option<&str> {
        self.node.get(field).and_then(Node::as_str)
    }
    pub(crate) fn field_line(&self, field: &str) -> usize {
        self.node.get(field).map_or(self.line, |n| n.line)
    }
    pub(crate) fn flag(&self, field: &str) -> bool {
        self.node
            .get(field)
            .and_then(Node::as_bool)
            .unwrap_or(false)
    }
    pub(crate) fn image(&self) -> &str {
        self.str("image").unwrap_or("")
    }
    pub(crate) fn framework(&self) -> &str {
        self.str("framework").unwrap_or("")
    }
    pub fn prefix(&self) -> &str {
        self.str("model-prefix")
            .unwrap_or_else(|| self.key.split('-').next().unwrap_or(""))
    }
    pub fn precision(&self) -> &str {
        self.str("precision").unwrap_or("")
    }
    pub(crate) fn runner(&self) -> &str {
        self.str("runner").unwrap_or("")
    }
    pub(crate) fn model(&self) -> &str {
        self.str("model").unwrap_or("")
    }
    /// SKU: the key's third token, else the runner label's.
    pub fn sku(&self) -> String {
        if let Some(t) = self.key.split('-').nth(2) {
            return t.to_owned();
        }
        let r = self.runner().trim_start_matches("cluster:");
        r.split('-').next().unwrap_or("").to_owned()
    }
    /// Multi-node or disaggregated (§0.4.3).
    pub(crate) fn is_multinode(&self) -> bool {
        let fw = self.framework();
        self.flag("multinode")
            || self.flag("disagg")
            || fw.starts_with("dynamo-")
            || matches!(
                fw,
                "sglang-disagg" | "vllm-disagg" | "atom-disagg" | "llmd-vllm" | "tilert"
            )
    }
    pub(crate) fn family(&self) -> Family {
        family_of(self.framework())
    }

    /// Every search-space row of every scenario.
    pub(crate) fn rows(&self) -> Vec<SearchRow> {
        let mut out = Vec::new();
        let Some(scen) = self.node.get("scenarios").and_then(Node::as_map) else {
            return out;
        };
        for (k, blocks) in scen {
            let agentic = k.as_str() == Some("agentic-coding");
            for block in blocks.as_seq().unwrap_or(&[]) {
                let isl = block.get("isl").and_then(Node::as_i64);
                let osl = block.get("osl").and_then(Node::as_i64);
                for row in block
                    .get("search-space")
                    .and_then(Node::as_seq)
                    .unwrap_or(&[])
                {
                    out.push(search_row(row, agentic, isl, osl));
                }
            }
        }
        out
    }

    pub(crate) fn has_agentic(&self) -> bool {
        self.node
            .get("scenarios")
            .and_then(|s| s.get("agentic-coding"))
            .is_some()
    }

    pub(crate) fn has_fixed(&self) -> bool {
        self.node
            .get("scenarios")
            .and_then(|s| s.get("fixed-seq-len"))
            .is_some()
    }

    /// Every `additional-settings` item of the entry.
    pub(crate) fn settings(&self) -> Vec<(String, usize)> {
        self.rows().into_iter().flat_map(|r| r.settings).collect()
    }

    /// `CONFIG_FILE=` / `EVAL_CONFIG_FILE=` values.
    pub fn config_files(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (s, _) in self.settings() {
            for k in ["CONFIG_FILE=", "EVAL_CONFIG_FILE="] {
                if let Some(v) = s.trim().strip_prefix(k) {
                    let v = v.trim().trim_matches('"').to_owned();
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
            }
        }
        out
    }
}

fn search_row(row: &Node, agentic: bool, isl: Option<i64>, osl: Option<i64>) -> SearchRow {
    let side = row.get("decode").unwrap_or(row);
    let int = |n: &Node, k: &str| n.get(k).and_then(Node::as_i64);
    let mut settings = Vec::new();
    for n in [Some(row), row.get("prefill"), row.get("decode")]
        .into_iter()
        .flatten()
    {
        for s in n
            .get("additional-settings")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            if let Some(t) = s.as_str() {
                settings.push((t.to_owned(), s.line));
            }
        }
    }
    let mut conc: Vec<i64> = row
        .get("conc-list")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(Node::as_i64)
        .collect();
    if conc.is_empty()
        && let (Some(a), Some(b)) = (int(row, "conc-start"), int(row, "conc-end"))
    {
        let mut c = a.max(1);
        while c <= b && conc.len() < 64 {
            conc.push(c);
            c *= 2;
        }
    }
    SearchRow {
        agentic,
        isl,
        osl,
        tp: int(side, "tp").or_else(|| int(row, "tp")),
        ep: int(side, "ep").or_else(|| int(row, "ep")),
        dp_attn: side
            .get("dp-attn")
            .or_else(|| row.get("dp-attn"))
            .and_then(Node::as_bool)
            .unwrap_or(false),
        spec: row
            .get("spec-decoding")
            .and_then(Node::as_str)
            .unwrap_or("none")
            .to_owned(),
        conc,
        settings,
        kv_offloading: row
            .get("kv-offloading")
            .and_then(Node::as_str)
            .map(str::to_owned),
        line: row.line,
    }
}

/// Framework family (§0.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    Vllm,
    Sglang,
    Other,
}

pub(crate) fn family_of(framework: &str) -> Family {
    match framework {
        "vllm" | "dynamo-vllm" | "vllm-disagg" | "llmd-vllm" => Family::Vllm,
        "sglang" | "dynamo-sglang" | "sglang-disagg" => Family::Sglang,
        _ => Family::Other,
    }
}

/// Structural equality of two YAML nodes, positions ignored.
pub(crate) fn node_eq(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| node_eq(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| node_eq(k1, k2) && node_eq(v1, v2))
        }
        (x, y) => x == y,
    }
}

/// Parses the top-level entries of one master config.
pub(crate) fn parse_master(file: &str, text: &str) -> Result<Vec<MasterEntry>, String> {
    let root = yaml::parse(file, text.as_bytes()).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    match &root.value {
        Value::Map(items) => {
            for (k, v) in items {
                if let Some(key) = k.as_str() {
                    out.push(MasterEntry {
                        key: key.to_owned(),
                        file: file.to_owned(),
                        line: k.line,
                        node: v.clone(),
                    });
                }
            }
        }
        Value::Null => {}
        _ => return Err(format!("{file}: a master config must be a mapping")),
    }
    Ok(out)
}

/// Parse results by file content, shared by every snapshot of the process:
/// the base side of the PRs off one default-branch commit is the same text,
/// and the server reads a head's master configs before deriving facts from
/// them, so each text is parsed once. Bounded by the source bytes held.
pub(crate) struct ParseCache<T> {
    slots: std::sync::Mutex<Vec<CacheSlot<T>>>,
    max_bytes: usize,
}

struct CacheSlot<T> {
    file: String,
    /// The source itself: comparing it is cheaper than hashing it.
    text: std::sync::Arc<str>,
    value: std::sync::Arc<T>,
}

impl<T> ParseCache<T> {
    pub(crate) const fn new(max_bytes: usize) -> Self {
        Self {
            slots: std::sync::Mutex::new(Vec::new()),
            max_bytes,
        }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<CacheSlot<T>>> {
        // A panic while holding the lock leaves a consistent Vec.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached value for `text` of `file`, or `parse()` stored.
    pub(crate) fn get_or(
        &self,
        file: &str,
        text: &str,
        parse: impl FnOnce() -> T,
    ) -> std::sync::Arc<T> {
        {
            let mut slots = self.slots();
            if let Some(i) = slots
                .iter()
                .position(|c| c.file == file && *c.text == *text)
            {
                // Most recently used last.
                let slot = slots.remove(i);
                let v = slot.value.clone();
                slots.push(slot);
                return v;
            }
        }
        // Parsed outside the lock: other snapshots are not held up.
        let value = std::sync::Arc::new(parse());
        if text.len() <= self.max_bytes / 2 {
            let mut slots = self.slots();
            slots.push(CacheSlot {
                file: file.to_owned(),
                text: std::sync::Arc::from(text),
                value: value.clone(),
            });
            while slots.iter().map(|c| c.text.len()).sum::<usize>() > self.max_bytes {
                slots.remove(0);
            }
        }
        value
    }

    pub(crate) fn clear(&self) {
        self.slots().clear();
    }
}

/// Master configs: about 8 versions of the real 320 KB nvidia file.
static MASTER_CACHE: ParseCache<Result<Vec<MasterEntry>, String>> = ParseCache::new(3 << 20);
static CHANGELOG_CACHE: ParseCache<Result<changelog::Document, crate::recipe::ParseError>> =
    ParseCache::new(2 << 20);

/// [`parse_master`] through the process-wide cache.
pub fn parse_master_cached(
    file: &str,
    text: &str,
) -> std::sync::Arc<Result<Vec<MasterEntry>, String>> {
    MASTER_CACHE.get_or(file, text, || parse_master(file, text))
}

/// [`changelog::read`] through the process-wide cache.
pub fn read_changelog_cached(
    file: &str,
    text: &str,
) -> std::sync::Arc<Result<changelog::Document, crate::recipe::ParseError>> {
    CHANGELOG_CACHE.get_or(file, text, || changelog::read(file, text.as_bytes()))
}

/// Empties the parse caches (benchmarks measure a cold process with it).
pub fn clear_parse_caches() {
    MASTER_CACHE.clear();
    CHANGELOG_CACHE.clear();
}

/// Top-level blocks of a master config (first line, 0-based, and text up
/// to the next top-level key), or `None` unless every column-0 content
/// line is a plain `key:` line and nothing could be an anchor, alias,
/// directive or document marker: then blocks are independent documents.
fn top_blocks(text: &str) -> Option<Vec<(usize, &str)>> {
    let mut starts: Vec<(usize, usize)> = Vec::new();
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        let t = line.trim_start();
        if !t.is_empty() && !t.starts_with('#') {
            if changelog::may_anchor_in_line(line) {
                return None;
            }
            if !line.starts_with([' ', '\t']) {
                const SPECIAL: [char; 16] = [
                    '-', '[', '{', '?', '&', '*', '!', '|', '>', '%', '@', '`', '"', '\'', '.',
                    '\u{feff}',
                ];
                if line.starts_with(SPECIAL) || !line.contains(':') {
                    return None;
                }
                starts.push((i, offset));
            } else if starts.is_empty() {
                return None;
            }
        }
        offset += raw.len();
    }
    if starts.is_empty() {
        return None;
    }
    Some(
        starts
            .iter()
            .enumerate()
            .map(|(j, &(line, at))| {
                let end = starts.get(j + 1).map_or(text.len(), |n| n.1);
                (line, &text[at..end])
            })
            .collect(),
    )
}

fn shift_node(n: &mut Node, from: usize, to: usize) {
    n.line = n.line + to - from;
    match &mut n.value {
        Value::Seq(items) => items.iter_mut().for_each(|i| shift_node(i, from, to)),
        Value::Map(pairs) => pairs.iter_mut().for_each(|(k, v)| {
            shift_node(k, from, to);
            shift_node(v, from, to);
        }),
        _ => {}
    }
}

/// The head's entries, reusing the base's parse for every top-level block
/// whose text is unchanged (moved to its line in the head) and parsing each
/// changed block alone; the same entries as [`parse_master`] of `head`.
/// `None` when that cannot be shown (the caller parses the whole file).
/// On a PR touching one entry of a 320 KB master config this parses a few
/// hundred bytes instead of the file.
pub(crate) fn parse_master_reusing(
    file: &str,
    base: &str,
    base_entries: &[MasterEntry],
    head: &str,
) -> Option<Vec<MasterEntry>> {
    let bb = top_blocks(base)?;
    let hb = top_blocks(head)?;
    if bb.len() != base_entries.len() {
        return None;
    }
    let mut by_text: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, ((_, t), e)) in bb.iter().zip(base_entries).enumerate() {
        if !t.starts_with(&format!("{}:", e.key)) {
            return None;
        }
        by_text.entry(t).or_insert(i);
    }
    let mut out = Vec::with_capacity(hb.len());
    let mut keys = BTreeSet::new();
    for (line, text) in hb {
        let (mut e, from) = match by_text.get(text) {
            Some(&i) => (base_entries[i].clone(), bb[i].0),
            None => {
                let mut es = parse_master(file, text).ok()?;
                if es.len() != 1 {
                    return None;
                }
                (es.pop()?, 0)
            }
        };
        // Lines are 1-based; `from`/`line` are 0-based block starts.
        if !matches!(e.node.value, Value::Map(_)) || !keys.insert(e.key.clone()) {
            return None;
        }
        e.line = e.line + line - from;
        shift_node(&mut e.node, from, line);
        out.push(e);
    }
    Some(out)
}

// ---------------------------------------------------------------------
// Derived facts.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Changed,
    /// Unchanged entry whose script, recipe or launcher changed.
    Indirect,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChangedKey {
    pub key: String,
    pub kind: ChangeKind,
    pub entry: MasterEntry,
    /// Head files the key runs (recipes it references, scripts named after
    /// it), existing at head.
    pub files: Vec<String>,
}

impl ChangedKey {
    /// The launch text: every file the key runs plus its settings, shell
    /// comments stripped.
    pub(crate) fn launch_texts<'a>(&'a self, s: &'a Snapshot) -> Vec<(&'a str, &'a str)> {
        self.files
            .iter()
            .filter_map(|f| s.head_text(f).map(|t| (f.as_str(), t)))
            .collect()
    }

    /// Speculative decoding in use (§0.5).
    pub(crate) fn uses_spec(&self, s: &Snapshot) -> bool {
        self.entry.rows().iter().any(|r| r.spec != "none")
            || self.files.iter().any(|f| f.ends_with("_mtp.sh"))
            || self
                .launch_texts(s)
                .iter()
                .any(|(_, t)| has_spec_marker(&super::strip_shell_comments(t)))
    }
}

/// The spec-decoding markers of §0.5.
pub(crate) fn has_spec_marker(text: &str) -> bool {
    const MARKERS: [&str; 10] = [
        "--speculative-algorithm",
        "--speculative-algo",
        "--speculative-config",
        "speculative-config:",
        "num_speculative_tokens",
        "--num-speculative-tokens",
        "--speculative-num-steps",
        "speculative-num-steps:",
        "speculative-algorithm:",
        "speculative_config:",
    ];
    MARKERS.iter().any(|m| text.contains(m))
        || ["mtp", "eagle", "eagle3", "dspark"]
            .iter()
            .any(|m| text.contains(&format!("--method {m}")))
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub masters_base: BTreeMap<String, MasterEntry>,
    pub masters_head: BTreeMap<String, MasterEntry>,
    /// Added, changed and indirectly changed keys at head, in key order.
    pub changed: Vec<ChangedKey>,
    pub removed: Vec<String>,
    /// Changelog entries past the base length.
    pub new_entries: Vec<changelog::Entry>,
    /// New changelog items that do not validate, as `file:line: message`.
    pub new_entry_errors: Vec<(usize, String)>,
    /// Problems reading recipe files (a check that needs them says so).
    pub errors: Vec<String>,
}

impl Facts {
    pub(crate) fn derive(s: &Snapshot, cfg: &RepoConfig) -> Facts {
        let mut f = Facts::default();
        for path in &cfg.paths.master_configs {
            let base = s.base_files.get(path);
            let head = s.head_files.get(path);
            let parsed_base = base.map(|t| parse_master_cached(path, t));
            let parsed_head = match (head, base, parsed_base.as_deref()) {
                // An unchanged file: the head's parse is the base's.
                (Some(h), Some(b), _) if b == h => parsed_base.clone(),
                // Unchanged entries are taken from the base's parse.
                (Some(h), Some(b), Some(Ok(be))) => Some(MASTER_CACHE.get_or(path, h, || {
                    parse_master_reusing(path, b, be, h).map_or_else(|| parse_master(path, h), Ok)
                })),
                (Some(h), _, _) => Some(parse_master_cached(path, h)),
                (None, _, _) => None,
            };
            for (side, parsed, out) in [
                ("base", parsed_base, &mut f.masters_base),
                ("head", parsed_head, &mut f.masters_head),
            ] {
                match parsed.as_deref() {
                    Some(Ok(es)) => {
                        for e in es {
                            out.insert(e.key.clone(), e.clone());
                        }
                    }
                    Some(Err(e)) => f.errors.push(format!("{path} at {side}: {e}")),
                    None => {}
                }
            }
        }
        let changed_paths: BTreeSet<&str> = s
            .files
            .iter()
            .flat_map(|c| std::iter::once(c.path.as_str()).chain(c.previous_path.as_deref()))
            .collect();
        for (key, head) in &f.masters_head {
            let files = key_files(s, cfg, head);
            let kind = match f.masters_base.get(key) {
                None => Some(ChangeKind::Added),
                Some(b) if !node_eq(&b.node, &head.node) => Some(ChangeKind::Changed),
                Some(_) if files.iter().any(|p| changed_paths.contains(p.as_str())) => {
                    Some(ChangeKind::Indirect)
                }
                Some(_) => None,
            };
            if let Some(kind) = kind {
                f.changed.push(ChangedKey {
                    key: key.clone(),
                    kind,
                    entry: head.clone(),
                    files,
                });
            }
        }
        f.removed = f
            .masters_base
            .keys()
            .filter(|k| !f.masters_head.contains_key(*k))
            .cloned()
            .collect();
        let cl = &cfg.paths.changelog;
        let base = s.base_files.get(cl).map(|t| read_changelog_cached(cl, t));
        // A head that only appends items: read the appended text alone.
        let appended = match (base.as_deref(), s.base_files.get(cl), s.head_files.get(cl)) {
            (Some(Ok(b)), Some(bt), Some(ht)) => changelog::read_appended(cl, bt, b.items, ht),
            _ => None,
        };
        let head = match appended {
            Some(doc) => Some(std::sync::Arc::new(Ok(doc))),
            None => s.head_files.get(cl).map(|t| read_changelog_cached(cl, t)),
        };
        match (base.as_deref(), head.as_deref()) {
            (None | Some(Ok(_)), Some(Ok(head))) => {
                let n = match base.as_deref() {
                    Some(Ok(b)) => b.items,
                    _ => 0,
                };
                f.new_entry_errors = head
                    .errors
                    .iter()
                    .filter(|e| e.index >= n)
                    .map(|e| (e.loc.line, e.message.clone()))
                    .collect();
                f.new_entries = head
                    .entries
                    .iter()
                    .filter(|e| e.index >= n)
                    .cloned()
                    .collect();
            }
            (None | Some(Ok(_)), None) => {}
            (Some(Err(e)), _) | (_, Some(Err(e))) => f.errors.push(e.to_string()),
        }
        f
    }

    /// Whether a benchmark-affecting path changed (Check 1's N/A rule).
    pub(crate) fn benchmark_affecting(&self, s: &Snapshot, cfg: &RepoConfig) -> bool {
        !self.new_entries.is_empty()
            || !self.changed.is_empty()
            || s.files.iter().any(|f| {
                cfg.paths.master_configs.contains(&f.path)
                    || f.path.starts_with(&cfg.paths.benchmarks)
                    || f.path.starts_with("runners/")
                    || f.path.contains("utils/bench_serving/")
                    || f.path.contains("utils/agentic/")
            })
    }
}

/// Files a key runs, among the head files: the recipes its settings name and
/// the benchmark scripts named after it (`<prefix>_<precision>_<sku>…`).
fn key_files(s: &Snapshot, cfg: &RepoConfig, e: &MasterEntry) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for cf in e.config_files() {
        let tail = cf.strip_prefix("recipes/").unwrap_or(&cf);
        let hit = s.head_files.keys().find(|p| {
            **p == cf || p.ends_with(&format!("/{tail}")) || p.ends_with(&format!("/{cf}"))
        });
        if let Some(p) = hit
            && !out.contains(p)
        {
            out.push(p.clone());
        }
    }
    let stem = format!("{}_{}_{}", e.prefix(), e.precision(), e.sku());
    for p in s.head_files.keys() {
        if !p.starts_with(&cfg.paths.benchmarks) || !p.ends_with(".sh") {
            continue;
        }
        let name = p.rsplit('/').next().unwrap_or(p);
        let spec = e.rows().iter().any(|r| r.spec == "mtp");
        let matches_spec = name.ends_with("_mtp.sh") == spec;
        let in_scenario = if e.has_agentic() && !e.has_fixed() {
            p.contains("/agentic/")
        } else if e.has_fixed() && !e.has_agentic() {
            !p.contains("/agentic/")
        } else {
            true
        };
        if name.starts_with(&stem)
            && matches_spec
            && in_scenario
            && (name == format!("{stem}.sh")
                || name == format!("{stem}_mtp.sh")
                || name.starts_with(&format!("{stem}_{}", e.framework())))
            && !out.contains(p)
        {
            out.push(p.clone());
        }
    }
    out
}

// ---------------------------------------------------------------------
// Assembling a snapshot from files (the CLI and fixtures).

/// A unified-diff patch (hunks only, as GitHub sends them) from `base` to
/// `head`; `None` when they are equal.
pub(crate) fn unified_patch(base: &str, head: &str) -> Option<String> {
    if base == head {
        return None;
    }
    let a: Vec<&str> = base.lines().collect();
    let b: Vec<&str> = head.lines().collect();
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suf = a.len().min(b.len()) - pre;
    let suf = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    // LCS on the middle (small for real edits; bounded for safety).
    let ops = if am.len() * bm.len() <= 4_000_000 {
        lcs_ops(am, bm)
    } else {
        let mut v: Vec<Op> = am.iter().map(|_| Op::Del).collect();
        v.extend(bm.iter().map(|_| Op::Add));
        v
    };
    let ctx_start = pre.saturating_sub(3);
    let mut body = String::new();
    for l in &a[ctx_start..pre] {
        body.push(' ');
        body.push_str(l);
        body.push('\n');
    }
    let (mut i, mut j) = (0usize, 0usize);
    let mut old_n = pre - ctx_start;
    let mut new_n = old_n;
    for op in ops {
        match op {
            Op::Keep => {
                body.push(' ');
                body.push_str(am[i]);
                i += 1;
                j += 1;
                old_n += 1;
                new_n += 1;
            }
            Op::Del => {
                body.push('-');
                body.push_str(am[i]);
                i += 1;
                old_n += 1;
            }
            Op::Add => {
                body.push('+');
                body.push_str(bm[j]);
                j += 1;
                new_n += 1;
            }
        }
        body.push('\n');
    }
    let tail_end = (a.len() - suf + 3).min(a.len());
    for l in &a[a.len() - suf..tail_end] {
        body.push(' ');
        body.push_str(l);
        body.push('\n');
        old_n += 1;
        new_n += 1;
    }
    Some(format!(
        "@@ -{},{} +{},{} @@\n{}",
        ctx_start + 1,
        old_n,
        ctx_start + 1,
        new_n,
        body
    ))
}

#[derive(Clone, Copy)]
enum Op {
    Keep,
    Del,
    Add,
}

fn lcs_ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    let mut t = vec![0u32; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * (m + 1) + j] = if a[i] == b[j] {
                t[(i + 1) * (m + 1) + j + 1] + 1
            } else {
                t[(i + 1) * (m + 1) + j].max(t[i * (m + 1) + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n + m);
    while i < n && j < m {
        if a[i] == b[j] {
            out.push(Op::Keep);
            i += 1;
            j += 1;
        } else if t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1] {
            out.push(Op::Del);
            i += 1;
        } else {
            out.push(Op::Add);
            j += 1;
        }
    }
    out.extend((i..n).map(|_| Op::Del));
    out.extend((j..m).map(|_| Op::Add));
    out
}

/// Changed files between two file maps (added, removed, modified), with
/// patches, sorted by path.
pub fn diff_files(
    base: &BTreeMap<String, String>,
    head: &BTreeMap<String, String>,
) -> Vec<ChangedFile> {
    let mut out = Vec::new();
    let paths: BTreeSet<&String> = base.keys().chain(head.keys()).collect();
    for p in paths {
        let (status, patch) = match (base.get(p), head.get(p)) {
            (None, Some(h)) => ("added", unified_patch("", h)),
            (Some(b), None) => ("removed", unified_patch(b, "")),
            (Some(b), Some(h)) if b != h => ("modified", unified_patch(b, h)),
            _ => continue,
        };
        out.push(ChangedFile {
            path: p.clone(),
            previous_path: None,
            status: status.into(),
            patch,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::added_lines;

    #[test]
    fn patch_reports_added_lines_at_head_numbers() {
        let base = "a\nb\nc\nd\ne\nf\ng\n";
        let head = "a\nb\nc\nX\nd\ne\nf\ng\nY\n";
        let p = unified_patch(base, head).unwrap();
        let added = added_lines(&p);
        assert_eq!(added, vec![(4, "X"), (9, "Y")], "{p}");
    }

    #[test]
    fn new_file_patch_counts_every_line() {
        let p = unified_patch("", "x\ny\n").unwrap();
        assert_eq!(added_lines(&p), vec![(1, "x"), (2, "y")]);
    }

    fn real(p: &str) -> String {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/data/inferencex")
                .join(p),
        )
        .unwrap()
    }

    #[test]
    fn reusing_the_base_parse_gives_the_full_parse() {
        let base = real("configs/nvidia-master.yaml");
        let be = parse_master("m.yaml", &base).unwrap();
        // An entry in the middle grows by two lines, one is appended.
        let key = &be[be.len() / 2].key;
        let at = base.find(&format!("\n{key}:\n")).unwrap() + key.len() + 3;
        let mut head = base.clone();
        head.insert_str(at, "  # a new comment\n  bench-extra-field: 1\n");
        head.push_str("zz-fp8-h200-vllm:\n  image: x\n  runner: h200\n");
        let reused = parse_master_reusing("m.yaml", &base, &be, &head);
        let full = parse_master("m.yaml", &head);
        match (reused, full) {
            (Some(r), Ok(f)) => assert!(r == f, "reused parse differs from the full parse"),
            (r, f) => panic!("reused {:?} full {:?}", r.is_some(), f.map(|x| x.len())),
        }
        // A duplicate key falls back to the full parse (which rejects it).
        let dup = format!("{head}{key}:\n  image: y\n");
        assert!(parse_master_reusing("m.yaml", &base, &be, &dup).is_none());
        assert!(parse_master("m.yaml", &dup).is_err());
    }

    #[test]
    fn reading_an_appended_changelog_tail_gives_the_full_read() {
        let base = real("perf-changelog.yaml");
        let b = changelog::read("c.yaml", base.as_bytes()).unwrap();
        let head = format!(
            "{base}\n# new\n- config-keys:\n    - a-fp8-*-vllm\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n- config-keys: []\n"
        );
        let tail = changelog::read_appended("c.yaml", &base, b.items, &head).unwrap();
        let full = changelog::read("c.yaml", head.as_bytes()).unwrap();
        assert_eq!(tail.items, full.items);
        let new = |d: &changelog::Document| {
            (
                d.entries
                    .iter()
                    .filter(|e| e.index >= b.items)
                    .cloned()
                    .collect::<Vec<_>>(),
                d.errors
                    .iter()
                    .filter(|e| e.index >= b.items)
                    .cloned()
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(new(&tail), new(&full));
        assert_eq!(tail.errors.len(), 1);
        // Not an append: an edited base line.
        let edited = head.replacen("- config-keys:", "- config-keys:  ", 1);
        assert!(changelog::read_appended("c.yaml", &base, b.items, &edited).is_none());
    }

    #[test]
    fn master_rows_flatten_search_space() {
        let text = "k-fp4-b200-sglang:\n  image: lmsysorg/sglang:v1\n  model-prefix: k\n  precision: fp4\n  framework: sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, ep: 1, conc-start: 4, conc-end: 16, spec-decoding: mtp }\n";
        let es = parse_master("m.yaml", text).unwrap();
        let rows = es[0].rows();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].tp, Some(8));
        assert_eq!(rows[0].conc, vec![4, 8, 16]);
        assert_eq!(rows[0].spec, "mtp");
        assert_eq!(es[0].sku(), "b200");
        assert!(!es[0].is_multinode());
    }
}
