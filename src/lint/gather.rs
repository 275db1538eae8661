//! Builds the recipe lint's [`LintInput`] from a [`RepoSource`], so the
//! CLI (a local clone), the replay and the server (the GitHub API) read a
//! PR alike.

use std::collections::BTreeSet;
use std::sync::Arc;

use sweepgate_core::checks::lint::baseline::{base_scope, base_view_of};
use sweepgate_core::checks::lint::context::Context;
use sweepgate_core::checks::lint::data::DataError;
use sweepgate_core::checks::lint::input::{ChangedPath, LintInput, Scope, Unread};
use sweepgate_core::config::RepoConfig;
use sweepgate_core::config::layout::Input;

use crate::repo::{self, DEFAULT_MAX_BLOB, FileStatus, RepoError, RepoSource};

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

/// What to read besides the range itself.
#[derive(Debug, Clone)]
pub(crate) struct Gather {
    pub pr: Option<u64>,
    pub config: RepoConfig,
    pub scope: Scope,
    /// Inputs that did not exist yet at the head (`config::layout`).
    pub inputs_not_yet: BTreeSet<Input>,
    /// Files over this many bytes are refused (a finding), not read.
    pub max_file_bytes: u64,
}

impl Gather {
    pub(crate) fn new(pr: Option<u64>, config: RepoConfig) -> Self {
        Self {
            pr,
            config,
            scope: Scope::Diff,
            inputs_not_yet: BTreeSet::new(),
            max_file_bytes: DEFAULT_MAX_BLOB,
        }
    }
}

/// Read the PR from a repository: `base...head` as GitHub compares it
/// (the base side is the merge base, whatever branch tip `base` names).
pub(crate) async fn from_source(
    src: &dyn RepoSource,
    base: &str,
    head: &str,
    opts: Gather,
) -> Result<LintInput, InputError> {
    let head_sha = src.resolve(head).await?;
    let cmp = src.compare(base, &head_sha).await?;
    let base_sha = cmp.merge_base.clone();
    // The `[lint]` overrides were checked when the configuration loaded.
    let data = opts.config.lint_data()?;
    let mut input = LintInput::new(opts.config, data);
    input.pr = opts.pr;
    input.scope = opts.scope;
    input.inputs_not_yet = opts.inputs_not_yet;
    input.head_sha = head_sha.clone();
    input.base_sha = base_sha.clone();
    input.head_tree = Arc::new(repo::tree_paths(src, &head_sha).await?);
    input.base_tree = Arc::new(repo::tree_paths(src, &base_sha).await?);
    let legacy = &input.config.paths.legacy_sweeps;
    input.base_legacy_images = Arc::new(repo::legacy_images(src, &base_sha, legacy).await?);
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
    for f in &cmp.files {
        if let Some(patch) = &f.patch {
            input.add_patch(&f.path, patch);
        }
    }
    let cap = opts.max_file_bytes;
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
    if input.scope == Scope::All {
        // An audit reads every script and recipe of the head tree.
        let p = &input.config.paths;
        let all: Vec<String> = input
            .head_tree
            .iter()
            .filter(|h| {
                (h.starts_with(&p.benchmarks) && h.ends_with(".sh"))
                    || (h.starts_with(&p.multi_node_scripts)
                        && (h.ends_with(".yaml") || h.ends_with(".yml")))
            })
            .cloned()
            .collect();
        wanted.extend(all.into_iter().map(|p| (true, p)));
    }
    read_all(&mut input, src, wanted, cap).await?;
    // Second pass: the scripts and recipes the changed keys resolve to.
    // The same context gives the base side's keys (`base_scope`: the
    // files read now do not change them).
    let (more, keys) = {
        let ctx = Context::build(&input);
        let keys = (input.scope == Scope::Diff).then(|| base_scope(&ctx));
        (on_side(true, ctx.wanted_paths()), keys)
    };
    read_all(&mut input, src, more, cap).await?;
    // Third pass: the same at the base, for judging what is new.
    if let Some(keys) = keys {
        let at_base = on_side(
            false,
            Context::build(&base_view_of(&input, keys)).wanted_paths(),
        );
        read_all(&mut input, src, at_base, cap).await?;
    }
    Ok(input)
}

/// Paths to read at the head (`true`) or the base.
fn on_side(at_head: bool, paths: Vec<String>) -> Vec<(bool, String)> {
    paths.into_iter().map(|p| (at_head, p)).collect()
}

async fn read_all(
    input: &mut LintInput,
    src: &dyn RepoSource,
    wanted: Vec<(bool, String)>,
    cap: u64,
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
        let refuse = |input: &mut LintInput, size: u64| {
            let side = if at_head { "head" } else { "base" };
            let unread = Unread {
                path: path.clone(),
                reason: format!(
                    "it is {size} bytes at the {side}, over the read cap of {cap} bytes (--max-file-bytes)"
                ),
            };
            if !input.unread.contains(&unread) {
                input.unread.push(unread);
            }
        };
        match repo::read_optional_blob(src, &rev, &path).await {
            Ok(Some(bytes)) if bytes.len() as u64 > cap => refuse(input, bytes.len() as u64),
            Ok(Some(bytes)) => {
                let files = if at_head {
                    &mut input.head_files
                } else {
                    &mut input.base_files
                };
                Arc::make_mut(files).insert(path, bytes);
            }
            Ok(None) => {}
            Err(RepoError::TooLarge { size, .. }) => refuse(input, size),
            // A symlink or submodule at that path: nothing to lint.
            Err(RepoError::NotAFile { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
