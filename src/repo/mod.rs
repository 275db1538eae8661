//! Reading a benchmark repository at a revision: one trait, a local git
//! implementation (and a GitHub one in `crate::github`), and the PR number
//! a merged commit's subject names.
//!
//! The trait is object safe and every method returns a boxed `Send` future,
//! so an `Arc<dyn RepoSource>` can be shared by tokio tasks and the snapshot
//! builder never knows whether it reads a local clone or the GitHub API.

mod batch;
mod git;

use std::future::Future;
use std::pin::Pin;

pub use git::{CommitInfo, DEFAULT_MAX_BLOB, GitRepo};

/// A boxed future that can cross tokio tasks.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A file's bytes with their blob id, as [`RepoSource::read_blob`] gives them.
pub(crate) type BlobFuture<'a> = BoxFuture<'a, Result<FileBytes, RepoError>>;

/// What a caller can branch on when a read fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepoError {
    #[error("no such revision: {rev}")]
    NoSuchRevision { rev: String },
    #[error("no such file at {rev}: {path}")]
    NoSuchFile { rev: String, path: String },
    #[error("not a file at {rev}: {path} (a {kind})")]
    NotAFile {
        rev: String,
        path: String,
        kind: String,
    },
    /// A blob over the read cap: never read, never silently skipped.
    #[error("{path} at {rev} is {size} bytes, over the read cap of {cap} bytes")]
    TooLarge {
        rev: String,
        path: String,
        size: u64,
        cap: u64,
    },
    #[error("{base} and {head} have no common ancestor")]
    NoMergeBase { base: String, head: String },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("git {args} failed ({status}): {stderr}")]
    Git {
        args: String,
        /// Exit code, or `signal` / `timeout`.
        status: String,
        stderr: String,
    },
    #[error("could not run git: {0}")]
    Spawn(String),
    /// The GitHub-backed source could not read (after its retries);
    /// `retry_after` when GitHub said when to come back (a rate limit).
    #[error("reading through the GitHub API failed: {message}")]
    Remote {
        message: String,
        retry_after: Option<std::time::Duration>,
    },
    #[error("unexpected git output for {args}: {message}")]
    Output { args: String, message: String },
}

impl RepoError {
    pub(crate) fn remote(message: String) -> Self {
        RepoError::Remote {
            message,
            retry_after: None,
        }
    }

    /// How long the remote asked us to wait before trying again; a retry
    /// must not come sooner.
    pub(crate) fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            RepoError::Remote { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// The kind of a tree entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Executable,
    Symlink,
    /// A submodule (gitlink): no size, no content here.
    Submodule,
}

/// One file of a revision's tree.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct TreeEntry {
    pub path: String,
    pub kind: EntryKind,
    /// Bytes; `None` for submodules.
    pub size: Option<u64>,
    /// Blob (or commit, for submodules) id.
    pub oid: String,
}

pub use sweepgate_core::checks::lint::input::FileBytes;
pub use sweepgate_core::files::FileStatus;

/// One changed file, shaped like an entry of GitHub's compare / PR files API.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChangedFile {
    /// The path at the head revision (for removals: the removed path).
    pub path: String,
    /// The path at the base revision, for renames and copies.
    pub previous_path: Option<String>,
    pub status: FileStatus,
    pub additions: u64,
    pub deletions: u64,
    /// Unified-diff hunks without the `---`/`+++` header (as GitHub sends
    /// them); `None` for binary files and changes without content hunks.
    pub patch: Option<String>,
    pub binary: bool,
}

/// The changes between two revisions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Comparison {
    /// Full commit id of the merge base the diff starts from.
    pub merge_base: String,
    /// Full commit id of the head.
    pub head: String,
    pub files: Vec<ChangedFile>,
}

/// A repository readable at any revision.
pub trait RepoSource: Send + Sync {
    /// The full commit id a revision (sha, branch, tag, `HEAD~1`) names.
    fn resolve<'a>(&'a self, rev: &'a str) -> BoxFuture<'a, Result<String, RepoError>>;

    /// The bytes of a file at a revision.
    fn read_file<'a>(
        &'a self,
        rev: &'a str,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, RepoError>>;

    /// The bytes of a file at a revision with the blob id they were read
    /// by, when the source reads by id (then the lint's parse caches key
    /// by the id instead of hashing the bytes). Without one: the bytes
    /// alone.
    fn read_blob<'a>(&'a self, rev: &'a str, path: &'a str) -> BlobFuture<'a> {
        Box::pin(async move { Ok(FileBytes::from(self.read_file(rev, path).await?)) })
    }

    /// Every file of a revision (recursively), sorted by path.
    fn list_tree<'a>(&'a self, rev: &'a str) -> BoxFuture<'a, Result<Vec<TreeEntry>, RepoError>>;

    /// What `head` changed since its merge base with `base` (GitHub's
    /// `compare/base...head`), renames detected.
    fn compare<'a>(
        &'a self,
        base: &'a str,
        head: &'a str,
    ) -> BoxFuture<'a, Result<Comparison, RepoError>>;
}

/// The PR number a squash-merge subject names: its last `(#NNNN)`
/// (`Fix a thing (#12) [skip-sweep]` → 12).
pub fn pr_from_subject(subject: &str) -> Option<u64> {
    let mut found = None;
    let mut rest = subject;
    while let Some(i) = rest.find("(#") {
        let tail = &rest[i + 2..];
        let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() && tail[digits.len()..].starts_with(')') {
            found = digits.parse().ok().or(found);
        }
        rest = tail;
    }
    found
}

/// Read a file, mapping "no such file" to `None` (other errors stay errors).
pub async fn read_optional(
    src: &dyn RepoSource,
    rev: &str,
    path: &str,
) -> Result<Option<Vec<u8>>, RepoError> {
    match src.read_file(rev, path).await {
        Ok(b) => Ok(Some(b)),
        Err(RepoError::NoSuchFile { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`RepoSource::read_blob`], mapping "no such file" to `None`.
pub async fn read_optional_blob(
    src: &dyn RepoSource,
    rev: &str,
    path: &str,
) -> Result<Option<FileBytes>, RepoError> {
    match src.read_blob(rev, path).await {
        Ok(b) => Ok(Some(b)),
        Err(RepoError::NoSuchFile { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The paths of a revision's tree as a set (what launcher resolution takes).
pub async fn tree_paths(
    src: &dyn RepoSource,
    rev: &str,
) -> Result<std::collections::BTreeSet<String>, RepoError> {
    Ok(src
        .list_tree(rev)
        .await?
        .into_iter()
        .map(|e| e.path)
        .collect())
}

/// The images the legacy sweep definitions at `rev` name
/// (`Paths::legacy_sweeps`; empty outside a replay's early history).
pub async fn legacy_images(
    src: &dyn RepoSource,
    rev: &str,
    dirs: &[String],
) -> Result<std::collections::BTreeSet<String>, RepoError> {
    let mut out = std::collections::BTreeSet::new();
    if dirs.is_empty() {
        return Ok(out);
    }
    for e in src.list_tree(rev).await? {
        let yaml = e.path.ends_with(".yml") || e.path.ends_with(".yaml");
        if yaml
            && dirs.iter().any(|d| e.path.starts_with(d.as_str()))
            && let Some(bytes) = read_optional(src, rev, &e.path).await?
        {
            out.extend(sweepgate_core::recipe::workflows::images(
                &String::from_utf8_lossy(&bytes),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::pr_from_subject;

    #[test]
    fn the_last_pr_number_of_a_subject_counts() {
        assert_eq!(pr_from_subject("chore: move configs (#1992)"), Some(1992));
        assert_eq!(
            pr_from_subject("feat: changelog runs (#267) [skip-sweep]"),
            Some(267)
        );
        assert_eq!(pr_from_subject("Revert \"x (#12)\" (#15)"), Some(15));
        assert_eq!(pr_from_subject("no number (#abc) (#)"), None);
        assert_eq!(pr_from_subject("Moved to new org."), None);
    }
}
