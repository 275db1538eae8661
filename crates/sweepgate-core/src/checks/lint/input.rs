//! [`LintInput`]: what the lint reads of a PR, built once by the service
//! (from a local clone or the GitHub API) so the CLI and the server share
//! it. Rules never do I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::config::RepoConfig;
use crate::config::layout::Input;
use crate::files::FileStatus;

use super::context::KeyChange;

use super::data::LintData;

/// One file the PR changes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChangedPath {
    pub path: String,
    pub previous_path: Option<String>,
    pub status: FileStatus,
}

/// Which master-config keys, scripts and recipes the rules look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Scope {
    /// What the PR changes (directly or through the files a key runs).
    #[default]
    Diff,
    /// Every key and every script and recipe of the head tree
    /// (`sweepgate lint --all`).
    All,
    /// These keys, as the PR changed them: the base side of a PR judged
    /// against its own head ([`super::baseline`]).
    Keys(BTreeMap<String, KeyChange>),
}

/// A file the lint needed but did not read (over the read cap): it
/// becomes a finding naming the file and the reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unread {
    pub path: String,
    pub reason: String,
}

/// A file's bytes, shared: the input, its base view ([`super::baseline`])
/// and the reader's blob cache hold one allocation, and a clone copies
/// no byte.
#[derive(Debug, Clone)]
pub struct FileBytes {
    bytes: Arc<[u8]>,
    /// The git blob id, when the bytes come from a reader that fetched
    /// them by that id (our `git cat-file`, a GitHub tree or contents
    /// answer): the id then names exactly these bytes.
    id: Option<Arc<str>>,
}

impl FileBytes {
    /// Bytes without a blob id (built by hand, or from a source that has
    /// none): the parse caches key them by content.
    pub fn new(bytes: impl Into<Arc<[u8]>>) -> Self {
        Self {
            bytes: bytes.into(),
            id: None,
        }
    }

    /// Bytes a reader fetched by their blob id `id`. Only for ids from our
    /// own reads, never from a user: the parse caches trust the id to name
    /// the bytes and do not hash them.
    pub fn from_blob(bytes: Arc<[u8]>, id: &str) -> Self {
        Self {
            bytes,
            id: Some(Arc::from(id)),
        }
    }

    /// The git blob id these bytes were read by.
    pub fn blob_id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl From<Vec<u8>> for FileBytes {
    fn from(bytes: Vec<u8>) -> Self {
        Self::new(bytes)
    }
}

/// Equal content, whatever the ids (one side may have none).
impl PartialEq for FileBytes {
    fn eq(&self, other: &Self) -> bool {
        match (&self.id, &other.id) {
            (Some(a), Some(b)) => a == b,
            _ => Arc::ptr_eq(&self.bytes, &other.bytes) || self.bytes == other.bytes,
        }
    }
}

impl Eq for FileBytes {}

/// Path → contents of one side of a PR, shared between an input and its
/// base view.
pub type Files = Arc<BTreeMap<String, FileBytes>>;

/// The paths of one side's tree, shared likewise.
pub type Tree = Arc<BTreeSet<String>>;

/// A PR as the lint sees it: contents at base and head of the changed files
/// and of the files they resolve to, the head tree and the configuration.
#[derive(Debug, Clone)]
pub struct LintInput {
    pub pr: Option<u64>,
    /// The assessed commit (full id).
    pub head_sha: String,
    /// The merge base the diff starts from.
    pub base_sha: String,
    pub config: RepoConfig,
    pub data: LintData,
    pub changed: Vec<ChangedPath>,
    pub head_tree: Tree,
    pub base_tree: Tree,
    pub base_files: Files,
    pub head_files: Files,
    pub scope: Scope,
    /// Head line numbers the PR adds or changes, per head path.
    pub changed_lines: BTreeMap<String, BTreeSet<usize>>,
    /// Inputs that did not exist yet at this commit
    /// (`config::layout`): the rules that need them do not run, and their
    /// absence is no finding.
    pub inputs_not_yet: BTreeSet<Input>,
    /// Files the reader refused (over the cap), at head or base.
    pub unread: Vec<Unread>,
    /// Images the base's legacy sweep definitions name
    /// (`Paths::legacy_sweeps`): they ran before the PR.
    pub base_legacy_images: Arc<BTreeSet<String>>,
}

impl LintInput {
    /// An input with no files, for building one by hand (tests, callers
    /// holding the contents already).
    pub fn new(config: RepoConfig, data: LintData) -> Self {
        Self {
            pr: None,
            head_sha: String::new(),
            base_sha: String::new(),
            config,
            data,
            changed: Vec::new(),
            head_tree: Tree::default(),
            base_tree: Tree::default(),
            base_files: Files::default(),
            head_files: Files::default(),
            scope: Scope::Diff,
            changed_lines: BTreeMap::new(),
            inputs_not_yet: BTreeSet::new(),
            unread: Vec::new(),
            base_legacy_images: Arc::default(),
        }
    }

    /// Records the head lines a file's unified-diff patch adds.
    pub fn add_patch(&mut self, path: &str, patch: &str) {
        let lines: BTreeSet<usize> = crate::checks::added_lines(patch)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        if !lines.is_empty() {
            self.changed_lines
                .entry(path.to_owned())
                .or_default()
                .extend(lines);
        }
    }

    pub(crate) fn head(&self, path: &str) -> Option<&[u8]> {
        self.head_files.get(path).map(FileBytes::as_slice)
    }

    pub(crate) fn base(&self, path: &str) -> Option<&[u8]> {
        self.base_files.get(path).map(FileBytes::as_slice)
    }

    /// The base version of a head path, following the PR's rename of it:
    /// #1992 (`3ede7c5`) moves the master configs and `runners.yaml` out of
    /// `.github/configs/`, and changes no key by that.
    pub(crate) fn base_following(&self, path: &str) -> Option<&FileBytes> {
        self.base_files.get(path).or_else(|| {
            self.changed
                .iter()
                .find(|c| c.path == path)
                .and_then(|c| c.previous_path.as_deref())
                .and_then(|p| self.base_files.get(p))
        })
    }

    pub(crate) fn head_text(&self, path: &str) -> Option<&str> {
        self.head(path).and_then(|b| std::str::from_utf8(b).ok())
    }

    pub(crate) fn is_changed(&self, path: &str) -> bool {
        self.changed
            .iter()
            .any(|c| c.path == path || c.previous_path.as_deref() == Some(path))
    }

    pub(crate) fn change(&self, path: &str) -> Option<&ChangedPath> {
        self.changed.iter().find(|c| c.path == path)
    }

    /// Paths the configuration names as policy or model files.
    pub fn policy_paths(&self) -> Vec<String> {
        let p = &self.config.paths;
        let mut out: Vec<String> = p.master_configs.clone();
        out.push(p.runners.clone());
        out.push(p.changelog.clone());
        out.push(p.models_policy.clone());
        out.push(p.benchmark_lib.clone());
        for t in [&self.head_tree, &self.base_tree] {
            for path in t.iter() {
                if path.starts_with(&p.golden_al_dir) || path.starts_with(&p.waivers_dir) {
                    out.push(path.clone());
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}
