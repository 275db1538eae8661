//! [`LintInput`]: what the lint reads of a PR, built once from a
//! [`RepoSource`] so the CLI and the server share it. Rules never do I/O.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::RepoConfig;
use crate::repo::{self, FileStatus, RepoError, RepoSource};

use super::context::Context;
use super::data::{DataError, LINT_OVERRIDE_PATH, LintData};

/// Files larger than this are not read (no benchmark file comes close).
const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;

/// One file the PR changes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChangedPath {
    pub path: String,
    pub previous_path: Option<String>,
    pub status: FileStatus,
}

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
    pub head_tree: BTreeSet<String>,
    pub base_tree: BTreeSet<String>,
    pub base_files: BTreeMap<String, Vec<u8>>,
    pub head_files: BTreeMap<String, Vec<u8>>,
}

/// Why the input could not be built.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error("lint data: {0}")]
    Data(#[from] DataError),
}

impl InputError {
    /// A rate limit's `Retry-After`, carried to the queue.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            InputError::Repo(e) => e.retry_after(),
            InputError::Data(_) => None,
        }
    }
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
            head_tree: BTreeSet::new(),
            base_tree: BTreeSet::new(),
            base_files: BTreeMap::new(),
            head_files: BTreeMap::new(),
        }
    }

    pub fn head(&self, path: &str) -> Option<&[u8]> {
        self.head_files.get(path).map(Vec::as_slice)
    }

    pub fn base(&self, path: &str) -> Option<&[u8]> {
        self.base_files.get(path).map(Vec::as_slice)
    }

    pub fn head_text(&self, path: &str) -> Option<&str> {
        self.head(path).and_then(|b| std::str::from_utf8(b).ok())
    }

    pub fn is_changed(&self, path: &str) -> bool {
        self.changed
            .iter()
            .any(|c| c.path == path || c.previous_path.as_deref() == Some(path))
    }

    pub fn change(&self, path: &str) -> Option<&ChangedPath> {
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
            for path in t {
                if path.starts_with(&p.golden_al_dir) || path.starts_with(&p.waivers_dir) {
                    out.push(path.clone());
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Read the PR from a repository: `base...head` as GitHub compares it.
    pub async fn from_source(
        src: &dyn RepoSource,
        base: &str,
        head: &str,
        pr: Option<u64>,
        config: RepoConfig,
    ) -> Result<LintInput, InputError> {
        let head_sha = src.resolve(head).await?;
        let cmp = src.compare(base, &head_sha).await?;
        let base_sha = cmp.merge_base.clone();
        let data = match repo::read_optional(src, &base_sha, LINT_OVERRIDE_PATH).await? {
            Some(bytes) => {
                LintData::with_override(LINT_OVERRIDE_PATH, &String::from_utf8_lossy(&bytes))?
            }
            None => LintData::defaults()?,
        };
        let mut input = LintInput::new(config, data);
        input.pr = pr;
        input.head_sha = head_sha.clone();
        input.base_sha = base_sha.clone();
        input.head_tree = repo::tree_paths(src, &head_sha).await?;
        input.base_tree = repo::tree_paths(src, &base_sha).await?;
        input.changed = cmp
            .files
            .iter()
            .filter(|f| !f.binary)
            .map(|f| ChangedPath {
                path: f.path.clone(),
                previous_path: f.previous_path.clone(),
                status: f.status,
            })
            .collect();
        let mut wanted: Vec<(bool, String)> = Vec::new();
        for p in input.policy_paths() {
            wanted.push((true, p.clone()));
            wanted.push((false, p));
        }
        for c in &input.changed {
            if c.status != FileStatus::Removed {
                wanted.push((true, c.path.clone()));
            }
            if c.status != FileStatus::Added {
                wanted.push((
                    false,
                    c.previous_path.clone().unwrap_or_else(|| c.path.clone()),
                ));
            }
        }
        input.read_all(src, wanted).await?;
        // Second pass: the scripts and recipes the changed keys resolve to.
        let more: Vec<(bool, String)> = Context::build(&input)
            .wanted_paths()
            .into_iter()
            .map(|p| (true, p))
            .collect();
        input.read_all(src, more).await?;
        Ok(input)
    }

    async fn read_all(
        &mut self,
        src: &dyn RepoSource,
        wanted: Vec<(bool, String)>,
    ) -> Result<(), RepoError> {
        let bar = crate::progress::Bar::new("reading changed files", wanted.len());
        for (at_head, path) in wanted {
            bar.inc();
            let (rev, tree) = if at_head {
                (self.head_sha.clone(), &self.head_tree)
            } else {
                (self.base_sha.clone(), &self.base_tree)
            };
            let files = if at_head {
                &self.head_files
            } else {
                &self.base_files
            };
            if !tree.contains(&path) || files.contains_key(&path) {
                continue;
            }
            match repo::read_optional(src, &rev, &path).await {
                Ok(Some(bytes)) if bytes.len() <= MAX_FILE_BYTES => {
                    let files = if at_head {
                        &mut self.head_files
                    } else {
                        &mut self.base_files
                    };
                    files.insert(path, bytes);
                }
                Ok(_) => {}
                // A symlink or submodule at that path: nothing to lint.
                Err(RepoError::NotAFile { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
