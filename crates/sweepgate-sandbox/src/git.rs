//! Content-addressed git objects for the sandbox: blobs, trees and commits
//! are hashed exactly like git (SHA-1 over `"<type> <len>\0<body>"`), so a
//! sha is a pure function of content, parents, author and time. Also the
//! unified diffs that become the `patch` fields of PR files and compares.
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// SHA-1, as git names its objects.
pub(crate) fn sha1(data: &[u8]) -> [u8; 20] {
    use sha1::Digest;
    sha1::Sha1::digest(data).into()
}

pub fn sha1_hex(data: &[u8]) -> String {
    hex::encode(sha1(data))
}

/// The git object id of `body` stored as an object of `kind`.
pub fn hash_object(kind: &str, body: &[u8]) -> String {
    let mut data = format!("{kind} {}\0", body.len()).into_bytes();
    data.extend_from_slice(body);
    sha1_hex(&data)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signature {
    pub name: String,
    pub email: String,
    pub date: DateTime<Utc>,
}

impl Signature {
    fn git_line(&self) -> String {
        format!(
            "{} <{}> {} +0000",
            self.name,
            self.email,
            self.date.timestamp()
        )
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Commit {
    pub sha: String,
    pub tree: String,
    pub parents: Vec<String>,
    pub message: String,
    pub author: Signature,
    pub committer: Signature,
    /// The full snapshot, path → blob sha (cheap to share between commits).
    pub files: Arc<BTreeMap<String, String>>,
    /// Login of the GitHub user who authored it, when known.
    pub author_login: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    Blob,
    Tree,
}

#[derive(Debug, Clone)]
pub(crate) struct TreeEntry {
    pub name: String,
    pub kind: EntryKind,
    pub sha: String,
}

impl TreeEntry {
    pub(crate) fn mode(&self) -> &'static str {
        match self.kind {
            EntryKind::Blob => "100644",
            EntryKind::Tree => "040000",
        }
    }
}

/// One object store for all repositories, like a fork network: a fork's
/// commits are visible from its parent, which cross-repository PRs need.
#[derive(Debug, Default)]
pub(crate) struct ObjectStore {
    blobs: HashMap<String, Arc<Vec<u8>>>,
    trees: HashMap<String, Vec<TreeEntry>>,
    commits: HashMap<String, Commit>,
}

pub(crate) struct NewCommit<'a> {
    pub files: BTreeMap<String, String>,
    pub parents: Vec<String>,
    pub message: &'a str,
    pub author: Signature,
    pub committer: Signature,
    pub author_login: Option<String>,
}

impl ObjectStore {
    pub(crate) fn put_blob(&mut self, content: Vec<u8>) -> String {
        let sha = hash_object("blob", &content);
        self.blobs
            .entry(sha.clone())
            .or_insert_with(|| Arc::new(content));
        sha
    }

    pub(crate) fn blob(&self, sha: &str) -> Option<Arc<Vec<u8>>> {
        self.blobs.get(sha).cloned()
    }

    pub(crate) fn commit(&self, sha: &str) -> Option<&Commit> {
        self.commits.get(sha)
    }

    pub(crate) fn tree(&self, sha: &str) -> Option<&Vec<TreeEntry>> {
        self.trees.get(sha)
    }

    /// Resolves an abbreviated commit sha (at least 7 hex digits).
    pub(crate) fn resolve_prefix(&self, prefix: &str) -> Option<String> {
        if prefix.len() < 7 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let prefix = prefix.to_ascii_lowercase();
        let mut found = self.commits.keys().filter(|k| k.starts_with(&prefix));
        let first = found.next()?;
        // Ambiguous prefixes resolve to nothing, as in git.
        if found.next().is_some() {
            return None;
        }
        Some(first.clone())
    }

    pub(crate) fn write_commit(&mut self, new: NewCommit<'_>) -> String {
        let tree = self.write_tree(&new.files);
        let mut body = format!("tree {tree}\n");
        for p in &new.parents {
            body.push_str(&format!("parent {p}\n"));
        }
        body.push_str(&format!("author {}\n", new.author.git_line()));
        body.push_str(&format!("committer {}\n\n", new.committer.git_line()));
        body.push_str(new.message);
        if !new.message.ends_with('\n') {
            body.push('\n');
        }
        let sha = hash_object("commit", body.as_bytes());
        self.commits.entry(sha.clone()).or_insert_with(|| Commit {
            sha: sha.clone(),
            tree,
            parents: new.parents,
            message: new.message.to_string(),
            author: new.author,
            committer: new.committer,
            files: Arc::new(new.files),
            author_login: new.author_login,
        });
        sha
    }

    /// Writes the tree objects for a flat snapshot and returns the root id.
    pub(crate) fn write_tree(&mut self, files: &BTreeMap<String, String>) -> String {
        let entries: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, s)| (p.as_str(), s.as_str()))
            .collect();
        self.write_subtree(&entries)
    }

    fn write_subtree(&mut self, files: &[(&str, &str)]) -> String {
        let mut blobs: Vec<TreeEntry> = Vec::new();
        let mut dirs: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
        for (path, sha) in files {
            match path.split_once('/') {
                Some((dir, rest)) => dirs.entry(dir).or_default().push((rest, sha)),
                None => blobs.push(TreeEntry {
                    name: path.to_string(),
                    kind: EntryKind::Blob,
                    sha: sha.to_string(),
                }),
            }
        }
        let mut entries = blobs;
        for (dir, children) in dirs {
            let sha = self.write_subtree(&children);
            entries.push(TreeEntry {
                name: dir.to_string(),
                kind: EntryKind::Tree,
                sha,
            });
        }
        // Git orders tree entries as if directory names ended with '/'.
        entries.sort_by_key(sort_key);
        let mut body = Vec::new();
        for e in &entries {
            let mode = match e.kind {
                EntryKind::Blob => "100644",
                EntryKind::Tree => "40000",
            };
            body.extend_from_slice(format!("{mode} {}\0", e.name).as_bytes());
            if let Ok(raw) = hex::decode(&e.sha) {
                body.extend_from_slice(&raw);
            }
        }
        let sha = hash_object("tree", &body);
        self.trees.entry(sha.clone()).or_insert(entries);
        sha
    }

    /// Every path under a tree, depth first, with its entry (recursive form
    /// of `GET /git/trees/{sha}?recursive=1`).
    pub(crate) fn walk_tree(&self, sha: &str, recursive: bool) -> Vec<(String, TreeEntry)> {
        let mut out = Vec::new();
        self.walk_into(sha, "", recursive, &mut out);
        out
    }

    fn walk_into(
        &self,
        sha: &str,
        prefix: &str,
        recursive: bool,
        out: &mut Vec<(String, TreeEntry)>,
    ) {
        let Some(entries) = self.trees.get(sha) else {
            return;
        };
        for e in entries {
            let path = if prefix.is_empty() {
                e.name.clone()
            } else {
                format!("{prefix}/{}", e.name)
            };
            out.push((path.clone(), e.clone()));
            if recursive && e.kind == EntryKind::Tree {
                self.walk_into(&e.sha, &path, recursive, out);
            }
        }
    }

    /// The tree id of a directory path inside a commit's root tree.
    pub(crate) fn subtree(&self, root: &str, dir: &str) -> Option<String> {
        let mut current = root.to_string();
        for part in dir.split('/').filter(|p| !p.is_empty()) {
            let entries = self.trees.get(&current)?;
            let e = entries
                .iter()
                .find(|e| e.name == part && e.kind == EntryKind::Tree)?;
            current = e.sha.clone();
        }
        Some(current)
    }

    /// All ancestors of `sha` including itself.
    pub(crate) fn ancestors(&self, sha: &str) -> HashSet<String> {
        let mut seen = HashSet::new();
        let mut queue = VecDeque::from([sha.to_string()]);
        while let Some(s) = queue.pop_front() {
            if !seen.insert(s.clone()) {
                continue;
            }
            if let Some(c) = self.commits.get(&s) {
                queue.extend(c.parents.iter().cloned());
            }
        }
        seen
    }

    /// The nearest common ancestor (by breadth-first distance from `b`).
    pub(crate) fn merge_base(&self, a: &str, b: &str) -> Option<String> {
        let of_a = self.ancestors(a);
        let mut seen = HashSet::new();
        let mut queue = VecDeque::from([b.to_string()]);
        while let Some(s) = queue.pop_front() {
            if of_a.contains(&s) {
                return Some(s);
            }
            if !seen.insert(s.clone()) {
                continue;
            }
            if let Some(c) = self.commits.get(&s) {
                queue.extend(c.parents.iter().cloned());
            }
        }
        None
    }

    /// Commits reachable from `head` but not from `base`, oldest first.
    pub(crate) fn commits_between(&self, base: &str, head: &str) -> Vec<String> {
        let excluded = self.ancestors(base);
        let mut order = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![head.to_string()];
        while let Some(s) = stack.pop() {
            if excluded.contains(&s) || !seen.insert(s.clone()) {
                continue;
            }
            order.push(s.clone());
            if let Some(c) = self.commits.get(&s) {
                stack.extend(c.parents.iter().rev().cloned());
            }
        }
        // Sort by committer date, then by discovery, as `git log --reverse`.
        let mut indexed: Vec<(usize, String)> = order.into_iter().enumerate().collect();
        indexed.sort_by(|(ia, a), (ib, b)| {
            let da = self.commits.get(a).map(|c| c.committer.date);
            let db = self.commits.get(b).map(|c| c.committer.date);
            da.cmp(&db).then(ib.cmp(ia))
        });
        indexed.into_iter().map(|(_, s)| s).collect()
    }
}

fn sort_key(e: &TreeEntry) -> Vec<u8> {
    let mut k = e.name.as_bytes().to_vec();
    if e.kind == EntryKind::Tree {
        k.push(b'/');
    }
    k
}

/// One changed file between two snapshots.
#[derive(Debug, Clone)]
pub(crate) struct FileChange {
    pub filename: String,
    pub previous_filename: Option<String>,
    pub status: &'static str,
    pub old_sha: Option<String>,
    pub new_sha: Option<String>,
    pub additions: usize,
    pub deletions: usize,
    /// `None` for binary files, as GitHub omits the patch for them.
    pub patch: Option<String>,
}

/// The files changed from `old` to `new`, sorted by name, with exact renames
/// (same blob, new path) reported as `renamed` like GitHub does.
pub(crate) fn diff_snapshots(
    store: &ObjectStore,
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
) -> Vec<FileChange> {
    let mut removed: Vec<(&String, &String)> = Vec::new();
    let mut added: Vec<(&String, &String)> = Vec::new();
    let mut out = Vec::new();
    for (path, old_sha) in old {
        match new.get(path) {
            Some(new_sha) if new_sha == old_sha => {}
            Some(new_sha) => out.push(file_change(store, path, None, Some(old_sha), Some(new_sha))),
            None => removed.push((path, old_sha)),
        }
    }
    for (path, new_sha) in new {
        if !old.contains_key(path) {
            added.push((path, new_sha));
        }
    }
    let mut renamed_from = HashSet::new();
    for (path, new_sha) in added {
        let source = removed
            .iter()
            .find(|(p, s)| *s == new_sha && !renamed_from.contains(*p))
            .map(|(p, _)| (*p).clone());
        match source {
            Some(from) => {
                renamed_from.insert(from.clone());
                out.push(FileChange {
                    filename: path.clone(),
                    previous_filename: Some(from),
                    status: "renamed",
                    old_sha: Some(new_sha.clone()),
                    new_sha: Some(new_sha.clone()),
                    additions: 0,
                    deletions: 0,
                    patch: None,
                });
            }
            None => out.push(file_change(store, path, None, None, Some(new_sha))),
        }
    }
    for (path, old_sha) in removed {
        if !renamed_from.contains(path) {
            out.push(file_change(store, path, None, Some(old_sha), None));
        }
    }
    out.sort_by(|a, b| a.filename.cmp(&b.filename));
    out
}

fn file_change(
    store: &ObjectStore,
    path: &str,
    previous: Option<String>,
    old_sha: Option<&String>,
    new_sha: Option<&String>,
) -> FileChange {
    let old = old_sha.and_then(|s| store.blob(s));
    let new = new_sha.and_then(|s| store.blob(s));
    let status = match (old_sha, new_sha) {
        (None, _) => "added",
        (_, None) => "removed",
        _ => "modified",
    };
    let old_bytes: &[u8] = old.as_deref().map(|v| v.as_slice()).unwrap_or(&[]);
    let new_bytes: &[u8] = new.as_deref().map(|v| v.as_slice()).unwrap_or(&[]);
    let (patch, additions, deletions) = if is_binary(old_bytes) || is_binary(new_bytes) {
        (None, 0, 0)
    } else {
        let d = unified_diff(
            &String::from_utf8_lossy(old_bytes),
            &String::from_utf8_lossy(new_bytes),
            3,
        );
        (Some(d.patch), d.additions, d.deletions)
    };
    FileChange {
        filename: path.to_string(),
        previous_filename: previous,
        status,
        old_sha: old_sha.cloned(),
        new_sha: new_sha.cloned(),
        additions,
        deletions,
        patch,
    }
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8000).any(|b| *b == 0)
}

/// A unified diff with `context` lines around each change, as GitHub
/// sends it (sweepgate's one diff module, `sweepgate_core::diff`).
pub fn unified_diff(old: &str, new: &str, context: usize) -> sweepgate_core::diff::Unified {
    sweepgate_core::diff::unified(old, new, context)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_matches_known_vectors() {
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        let long = vec![b'a'; 1000];
        assert_eq!(sha1_hex(&long), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
    }

    #[test]
    fn blob_ids_match_git() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            hash_object("blob", b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        // The empty tree every git user has seen.
        let mut store = ObjectStore::default();
        assert_eq!(
            store.write_tree(&BTreeMap::new()),
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        );
    }
}
