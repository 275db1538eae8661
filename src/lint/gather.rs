//! Builds the recipe lint's [`LintInput`] from a [`RepoSource`], so the
//! CLI (a local clone) and the server (the GitHub API) read a PR alike.

use sweepgate_core::checks::lint::context::Context;
use sweepgate_core::checks::lint::data::{DataError, LINT_OVERRIDE_PATH, LintData};
use sweepgate_core::checks::lint::input::{ChangedPath, LintInput};
use sweepgate_core::config::RepoConfig;

use crate::repo::{self, FileStatus, RepoError, RepoSource};

/// Files larger than this are not read (no benchmark file comes close).
const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;

/// Why the input could not be built.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InputError {
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error("lint data: {0}")]
    Data(#[from] DataError),
}

impl InputError {
    /// A rate limit's `Retry-After`, carried to the queue.
    pub(crate) fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            InputError::Repo(e) => e.retry_after(),
            InputError::Data(_) => None,
        }
    }
}

/// Read the PR from a repository: `base...head` as GitHub compares it.
pub(crate) async fn from_source(
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
    read_all(&mut input, src, wanted).await?;
    // Second pass: the scripts and recipes the changed keys resolve to.
    let more: Vec<(bool, String)> = Context::build(&input)
        .wanted_paths()
        .into_iter()
        .map(|p| (true, p))
        .collect();
    read_all(&mut input, src, more).await?;
    Ok(input)
}

async fn read_all(
    input: &mut LintInput,
    src: &dyn RepoSource,
    wanted: Vec<(bool, String)>,
) -> Result<(), RepoError> {
    let bar = crate::progress::Bar::new("reading changed files", wanted.len());
    for (at_head, path) in wanted {
        bar.inc();
        let (rev, tree) = if at_head {
            (input.head_sha.clone(), &input.head_tree)
        } else {
            (input.base_sha.clone(), &input.base_tree)
        };
        let files = if at_head {
            &input.head_files
        } else {
            &input.base_files
        };
        if !tree.contains(&path) || files.contains_key(&path) {
            continue;
        }
        match repo::read_optional(src, &rev, &path).await {
            Ok(Some(bytes)) if bytes.len() <= MAX_FILE_BYTES => {
                let files = if at_head {
                    &mut input.head_files
                } else {
                    &mut input.base_files
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
