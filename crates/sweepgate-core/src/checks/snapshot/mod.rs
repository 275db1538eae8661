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
    /// Images the base's legacy sweep workflows name
    /// (`Paths::legacy_sweeps`; empty outside a replay's early history).
    pub base_legacy_images: BTreeSet<String>,
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

mod diff;
mod facts;
mod master;

pub use diff::diff_files;
pub(crate) use facts::has_spec_marker;
pub use facts::{ChangeKind, ChangedKey, Facts};
pub(crate) use master::{Family, SearchRow, family_of, parse_master};
pub use master::{MasterEntry, clear_parse_caches, parse_master_cached, read_changelog_cached};
