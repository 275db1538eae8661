//! [`RepoSource`] on a local git repository.
//!
//! Objects (commits, blobs) are read through one long-lived
//! `git cat-file --batch` process per handle ([`super::batch`]); a
//! revision's tree is listed once (`git ls-tree`) and kept, so a path is
//! looked up in memory: a missing path, a directory, a submodule and an
//! unknown revision are told apart by data, never by git's messages. Diffs
//! still run `git diff` (three listings of one diff queue). Every call runs
//! `git` with a fixed locale, no pager, no external diff drivers and raw
//! (unquoted) paths; revisions are checked before use so a revision such
//! as `--output=x` can never become an option. Every blob read is capped
//! ([`GitRepo::with_max_blob`]).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use sweepgate_core::ids::Sha;
use tokio::process::Command;

use super::batch::{Answer, Batch};
use super::{
    BlobFuture, BoxFuture, ChangedFile, Comparison, EntryKind, FileBytes, FileStatus, RepoError,
    RepoSource, TreeEntry,
};

/// The default cap on one blob read (`--max-file-bytes`); no benchmark
/// file comes close.
pub const DEFAULT_MAX_BLOB: u64 = 8 * 1024 * 1024;

/// How many revisions' tree listings a handle keeps.
const TREES_KEPT: usize = 8;

/// Recently listed trees, by commit id (oldest first).
type Trees = VecDeque<(String, Arc<Vec<TreeEntry>>)>;

/// How many comparisons a handle keeps: the lint and the checks of one
/// PR ask for the same one.
const DIFFS_KEPT: usize = 4;

/// Recent comparisons, by (base, head) commit ids (oldest first).
type Diffs = VecDeque<((String, String), Arc<Comparison>)>;

/// How many commit objects, asked for by full id, a handle keeps.
const COMMITS_KEPT: usize = 256;

/// Bytes of blobs a handle keeps by blob id: the history's consecutive
/// commits share almost every blob (the 320 KB master config above all).
const BLOB_BYTES_KEPT: usize = 48 << 20;

/// Blobs by id in two generations (a hit moves to the new one; when the
/// new one is over half the budget it becomes the old one): an
/// approximate LRU bounded by bytes.
#[derive(Default)]
struct Blobs {
    new: std::collections::HashMap<String, Arc<[u8]>>,
    new_bytes: usize,
    old: std::collections::HashMap<String, Arc<[u8]>>,
}

impl Blobs {
    fn get(&mut self, oid: &str) -> Option<Arc<[u8]>> {
        if let Some(b) = self.new.get(oid) {
            return Some(b.clone());
        }
        let b = self.old.remove(oid)?;
        self.put(oid, b.clone());
        Some(b)
    }

    fn put(&mut self, oid: &str, body: Arc<[u8]>) {
        if body.len() > BLOB_BYTES_KEPT / 4 {
            return;
        }
        if self.new_bytes + body.len() > BLOB_BYTES_KEPT / 2 {
            self.old = std::mem::take(&mut self.new);
            self.new_bytes = 0;
        }
        self.new_bytes += body.len();
        self.new.insert(oid.to_owned(), body);
    }
}

/// One commit as the replay and the local checks see it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CommitInfo {
    pub sha: String,
    pub parents: Vec<String>,
    /// Committer time, seconds since the epoch.
    pub time: i64,
    /// The first line of the message.
    pub subject: String,
}

/// A local repository (work tree or bare).
#[derive(Clone)]
pub struct GitRepo {
    dir: PathBuf,
    git: PathBuf,
    timeout: Duration,
    max_blob: u64,
    batch: Arc<tokio::sync::Mutex<Option<Batch>>>,
    trees: Arc<std::sync::Mutex<Trees>>,
    diffs: Arc<std::sync::Mutex<Diffs>>,
    commits: Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<Vec<u8>>>>>,
    blobs: Arc<std::sync::Mutex<Blobs>>,
}

impl std::fmt::Debug for GitRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitRepo")
            .field("dir", &self.dir)
            .field("git", &self.git)
            .field("max_blob", &self.max_blob)
            .finish_non_exhaustive()
    }
}

impl GitRepo {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            git: PathBuf::from("git"),
            timeout: Duration::from_secs(120),
            max_blob: DEFAULT_MAX_BLOB,
            batch: Arc::new(tokio::sync::Mutex::new(None)),
            trees: Arc::new(std::sync::Mutex::new(VecDeque::new())),
            diffs: Arc::new(std::sync::Mutex::new(VecDeque::new())),
            commits: Arc::default(),
            blobs: Arc::default(),
        }
    }

    /// Another handle on the same repository with its own object reader,
    /// sharing this one's tree listings and comparisons (the replay's
    /// workers: commit N's head is commit N+1's base).
    pub fn sharing_caches(&self) -> Self {
        Self {
            batch: Arc::new(tokio::sync::Mutex::new(None)),
            ..self.clone()
        }
    }

    /// Use another `git` binary.
    pub fn with_git(mut self, git: impl Into<PathBuf>) -> Self {
        self.git = git.into();
        self
    }

    /// Refuse to read a blob larger than `bytes` ([`RepoError::TooLarge`]).
    pub fn with_max_blob(mut self, bytes: u64) -> Self {
        self.max_blob = bytes;
        self
    }

    /// git in the repository with the fixed options every call gets (the
    /// one place a process is started).
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.git);
        cmd.arg("-C")
            .arg(&self.dir)
            .args([
                "--no-pager",
                "-c",
                "core.quotepath=false",
                "-c",
                "diff.external=",
            ])
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0");
        cmd
    }

    /// Run git; `Ok((status_code, stdout, stderr))` whatever the exit code.
    async fn run(&self, args: &[&str]) -> Result<(Option<i32>, Vec<u8>, String), RepoError> {
        let mut cmd = self.command();
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = cmd
            .spawn()
            .map_err(|e| RepoError::Spawn(format!("{}: {e}", self.git.display())))?;
        let out = tokio::time::timeout(self.timeout, child.wait_with_output())
            .await
            .map_err(|_| RepoError::Git {
                args: args.join(" "),
                status: "timeout".into(),
                stderr: format!("no answer within {:?}", self.timeout),
            })?
            .map_err(|e| RepoError::Spawn(e.to_string()))?;
        Ok((
            out.status.code(),
            out.stdout,
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ))
    }

    /// Run git and require success.
    async fn ok(&self, args: &[&str]) -> Result<Vec<u8>, RepoError> {
        let (code, stdout, stderr) = self.run(args).await?;
        if code == Some(0) {
            Ok(stdout)
        } else {
            Err(git_failed(args, code, stderr))
        }
    }

    /// The staged change as a commit object (`sweepgate lint --staged`):
    /// the index's tree with `HEAD` as its parent. No ref, index or work
    /// tree changes; nothing points at the object, so git collects it.
    pub async fn staged_commit(&self) -> Result<String, RepoError> {
        let tree = String::from_utf8_lossy(&self.ok(&["write-tree"]).await?)
            .trim()
            .to_owned();
        let commit = self
            .ok(&[
                "-c",
                "user.name=sweepgate",
                "-c",
                "user.email=sweepgate@localhost",
                "commit-tree",
                &tree,
                "-p",
                "HEAD",
                "-m",
                "staged change",
            ])
            .await?;
        Ok(String::from_utf8_lossy(&commit).trim().to_owned())
    }

    /// One object through the batch process (started on first use, and
    /// again after it died).
    async fn object(&self, name: &str, cap: u64) -> Result<Answer, RepoError> {
        let mut guard = self.batch.lock().await;
        if guard.is_none() {
            *guard = Some(Batch::spawn(self.command()).map_err(|e| match e {
                RepoError::Spawn(m) => RepoError::Spawn(format!("{}: {m}", self.git.display())),
                other => other,
            })?);
        }
        let Some(batch) = guard.as_mut() else {
            return Err(RepoError::Spawn("git cat-file".into()));
        };
        let answer = batch.get(name, cap, self.timeout).await;
        if answer.is_err() {
            // Out of step or dead: the next call starts a fresh process.
            *guard = None;
        }
        answer
    }

    /// The commit object a revision names: its id and raw body.
    async fn commit_object(&self, rev: &str) -> Result<(String, Arc<Vec<u8>>), RepoError> {
        check_rev(rev)?;
        // A full commit id names one object forever: kept, no round trip.
        let full_id = Sha::parse(rev).is_some_and(|s| s.to_string() == rev);
        if full_id {
            let kept = self.commits.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(body) = kept.get(rev) {
                return Ok((rev.to_owned(), body.clone()));
            }
        }
        let name = format!("{rev}^{{commit}}");
        match self.object(&name, 64 << 20).await? {
            Answer::Found { oid, kind, body } if kind == "commit" => match Sha::parse(&oid) {
                Some(sha) => {
                    let (sha, body) = (sha.to_string(), Arc::new(body));
                    if full_id && sha == rev {
                        let mut kept = self.commits.lock().unwrap_or_else(|e| e.into_inner());
                        if kept.len() >= COMMITS_KEPT {
                            kept.clear();
                        }
                        kept.insert(sha.clone(), body.clone());
                    }
                    Ok((sha, body))
                }
                None => Err(RepoError::Output {
                    args: "cat-file --batch".into(),
                    message: format!("not a commit id: {oid:?}"),
                }),
            },
            Answer::Found { .. } | Answer::Missing | Answer::Ambiguous => {
                Err(RepoError::NoSuchRevision { rev: rev.into() })
            }
            Answer::TooLarge { size } => Err(RepoError::Output {
                args: "cat-file --batch".into(),
                message: format!("commit {rev} is {size} bytes"),
            }),
        }
    }

    async fn resolve_commit(&self, rev: &str) -> Result<String, RepoError> {
        Ok(self.commit_object(rev).await?.0)
    }

    /// A commit's parents, committer time and subject.
    pub async fn commit_info(&self, rev: &str) -> Result<CommitInfo, RepoError> {
        let (sha, body) = self.commit_object(rev).await?;
        Ok(parse_commit(sha, &body))
    }

    /// The first-parent chain ending at `head`, oldest first, stopping
    /// after `base` when given (exclusive), as `git rev-list --first-parent
    /// --reverse base..head` lists it.
    pub async fn first_parent_chain(
        &self,
        base: Option<&str>,
        head: &str,
    ) -> Result<Vec<CommitInfo>, RepoError> {
        check_rev(head)?;
        let head_sha = self.resolve_commit(head).await?;
        let stop = match base {
            Some(b) => Some(self.resolve_commit(b).await?),
            None => None,
        };
        let mut out = Vec::new();
        let mut at = Some(head_sha);
        while let Some(sha) = at {
            if stop.as_deref() == Some(sha.as_str()) {
                break;
            }
            let info = self.commit_info(&sha).await?;
            at = info.parents.first().cloned();
            out.push(info);
        }
        out.reverse();
        Ok(out)
    }

    /// Commits reachable from `head` but not from `base`, oldest first.
    pub async fn commits_between(&self, base: &str, head: &str) -> Result<Vec<String>, RepoError> {
        check_rev(base)?;
        check_rev(head)?;
        // A commit on top of `base` alone (every squash merge): no process.
        let head_info = self.commit_info(head).await?;
        if let [parent] = head_info.parents.as_slice()
            && *parent == self.resolve_commit(base).await?
        {
            return Ok(vec![head_info.sha]);
        }
        let range = format!("{base}..{head}");
        let out = self
            .ok(&["rev-list", "--reverse", "--end-of-options", &range])
            .await?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect())
    }

    /// A file's blob id and bytes, the bytes shared with the blob cache.
    async fn read_shared(&self, rev: &str, path: &str) -> Result<(String, Arc<[u8]>), RepoError> {
        let path = clean_path(path)?;
        let sha = self.resolve_commit(rev).await?;
        let tree = self.tree_of(&sha).await?;
        let entry = match tree.binary_search_by(|e| e.path.as_str().cmp(path)) {
            Ok(i) => &tree[i],
            Err(i) => {
                // The listing is sorted, so a directory's files follow its name.
                let dir = format!("{path}/");
                let is_dir = tree[i..]
                    .iter()
                    .take_while(|e| e.path.as_str() < dir.as_str() || e.path.starts_with(&dir))
                    .any(|e| e.path.starts_with(&dir));
                return Err(if is_dir {
                    RepoError::NotAFile {
                        rev: rev.into(),
                        path: path.into(),
                        kind: "tree".into(),
                    }
                } else {
                    RepoError::NoSuchFile {
                        rev: rev.into(),
                        path: path.into(),
                    }
                });
            }
        };
        if entry.kind == EntryKind::Submodule {
            return Err(RepoError::NotAFile {
                rev: rev.into(),
                path: path.into(),
                kind: "submodule".into(),
            });
        }
        let too_large = |size: u64| RepoError::TooLarge {
            rev: rev.into(),
            path: path.into(),
            size,
            cap: self.max_blob,
        };
        if let Some(size) = entry.size
            && size > self.max_blob
        {
            return Err(too_large(size));
        }
        let kept = {
            let mut blobs = self.blobs.lock().unwrap_or_else(|e| e.into_inner());
            blobs.get(&entry.oid)
        };
        if let Some(body) = kept {
            return Ok((entry.oid.clone(), body));
        }
        match self.object(&entry.oid, self.max_blob).await? {
            Answer::Found { body, .. } => {
                let body: Arc<[u8]> = Arc::from(body);
                let mut blobs = self.blobs.lock().unwrap_or_else(|e| e.into_inner());
                blobs.put(&entry.oid, body.clone());
                drop(blobs);
                Ok((entry.oid.clone(), body))
            }
            Answer::TooLarge { size } => Err(too_large(size)),
            Answer::Missing | Answer::Ambiguous => Err(RepoError::Output {
                args: "cat-file --batch".into(),
                message: format!("blob {} of {path} at {rev} is missing", entry.oid),
            }),
        }
    }

    async fn read(&self, rev: &str, path: &str) -> Result<Vec<u8>, RepoError> {
        Ok(self.read_shared(rev, path).await?.1.to_vec())
    }

    /// The listing of a commit's tree, from the handle's cache when it was
    /// listed lately.
    async fn tree_of(&self, sha: &str) -> Result<Arc<Vec<TreeEntry>>, RepoError> {
        let cached = {
            let kept = self.trees.lock().unwrap_or_else(|e| e.into_inner());
            kept.iter().find(|(s, _)| s == sha).map(|(_, t)| t.clone())
        };
        if let Some(t) = cached {
            return Ok(t);
        }
        let args = ["ls-tree", "-r", "-l", "-z", "--full-tree", sha];
        let out = self.ok(&args).await?;
        let mut entries = Vec::new();
        for rec in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            entries.push(parse_ls_tree(rec).ok_or_else(|| RepoError::Output {
                args: args.join(" "),
                message: format!("bad entry {:?}", String::from_utf8_lossy(rec)),
            })?);
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let tree = Arc::new(entries);
        let mut kept = self.trees.lock().unwrap_or_else(|e| e.into_inner());
        kept.push_back((sha.to_owned(), tree.clone()));
        while kept.len() > TREES_KEPT {
            kept.pop_front();
        }
        Ok(tree)
    }

    async fn tree(&self, rev: &str) -> Result<Vec<TreeEntry>, RepoError> {
        let sha = self.resolve_commit(rev).await?;
        Ok(self.tree_of(&sha).await?.as_ref().clone())
    }

    /// The merge base of two commits; a parent of `head` is its own
    /// merge base with `head` (a replay's PR), found without a process.
    async fn merge_base(&self, base_sha: &str, head_sha: &str) -> Result<String, RepoError> {
        if base_sha == head_sha
            || self
                .commit_info(head_sha)
                .await?
                .parents
                .iter()
                .any(|p| p == base_sha)
        {
            return Ok(base_sha.to_owned());
        }
        let (code, mb, stderr) = self.run(&["merge-base", base_sha, head_sha]).await?;
        match code {
            Some(0) => Ok(String::from_utf8_lossy(&mb).trim().to_string()),
            Some(1) if stderr.is_empty() => Err(RepoError::NoMergeBase {
                base: base_sha.into(),
                head: head_sha.into(),
            }),
            _ => Err(git_failed(
                &["merge-base", base_sha, head_sha],
                code,
                stderr,
            )),
        }
    }

    async fn diff(&self, base: &str, head: &str) -> Result<Comparison, RepoError> {
        let base_sha = self.resolve_commit(base).await?;
        let head_sha = self.resolve_commit(head).await?;
        let key = (base_sha, head_sha);
        let cached = {
            let kept = self.diffs.lock().unwrap_or_else(|e| e.into_inner());
            kept.iter().find(|(k, _)| *k == key).map(|(_, c)| c.clone())
        };
        if let Some(c) = cached {
            return Ok(c.as_ref().clone());
        }
        let merge_base = match self.merge_base(&key.0, &key.1).await {
            Err(RepoError::NoMergeBase { .. }) => {
                return Err(RepoError::NoMergeBase {
                    base: base.into(),
                    head: head.into(),
                });
            }
            other => other?,
        };
        // One diff queue, three listings in one process: `--raw` and
        // `--numstat` records (NUL-terminated), a NUL, then the patch.
        let args = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "-M",
            "--full-index",
            "--raw",
            "--numstat",
            "--patch",
            "-U3",
            "-z",
            merge_base.as_str(),
            key.1.as_str(),
        ];
        let out = self.ok(&args).await?;
        let bad = |message: String| RepoError::Output {
            args: args.join(" "),
            message,
        };
        let (names, nums, patch) =
            split_combined(&out).ok_or_else(|| bad("unparsable --raw/--numstat output".into()))?;
        let mut files =
            parse_name_status(&names).ok_or_else(|| bad("unparsable --raw output".into()))?;
        let counts = parse_numstat(nums);
        let blocks = split_patch(&String::from_utf8_lossy(patch));
        if counts.len() != files.len() || blocks.len() != files.len() {
            return Err(bad(format!(
                "{} files, {} numstat rows, {} patch blocks",
                files.len(),
                counts.len(),
                blocks.len()
            )));
        }
        for ((f, (add, del, binary)), block) in files.iter_mut().zip(counts).zip(blocks) {
            f.additions = add;
            f.deletions = del;
            f.binary = binary || block.binary;
            f.patch = if f.binary { None } else { block.hunks };
        }
        let cmp = Comparison {
            merge_base,
            head: key.1.clone(),
            files,
        };
        let mut kept = self.diffs.lock().unwrap_or_else(|e| e.into_inner());
        kept.push_back((key, Arc::new(cmp.clone())));
        while kept.len() > DIFFS_KEPT {
            kept.pop_front();
        }
        Ok(cmp)
    }
}

/// Splits `git diff --raw --numstat --patch -z` output into the
/// `--name-status -z` form of its raw records, its numstat records and
/// the patch text.
fn split_combined(out: &[u8]) -> Option<(Vec<u8>, &[u8], &[u8])> {
    // The next NUL-terminated field from `at`, and the position after it.
    let field = |at: usize| -> Option<(&[u8], usize)> {
        let len = out.get(at..)?.iter().position(|b| *b == 0)?;
        Some((&out[at..at + len], at + len + 1))
    };
    let mut names = Vec::new();
    let mut at = 0;
    let mut n = 0;
    // `:100644 100644 <oid> <oid> M\0path\0`, renames and copies with two paths.
    while out.get(at) == Some(&b':') {
        let (head, next) = field(at)?;
        let status = head.rsplit(|b| *b == b' ').next()?;
        let paths = if matches!(status.first(), Some(b'R' | b'C')) {
            2
        } else {
            1
        };
        names.extend_from_slice(status);
        names.push(0);
        at = next;
        for _ in 0..paths {
            let (p, next) = field(at)?;
            names.extend_from_slice(p);
            names.push(0);
            at = next;
        }
        n += 1;
    }
    let nums_start = at;
    for _ in 0..n {
        // `add\tdel\tpath\0`, or `add\tdel\t\0old\0new\0` for a rename.
        let (row, next) = field(at)?;
        at = next;
        if row.ends_with(b"\t") {
            at = field(field(at)?.1)?.1;
        }
    }
    let nums = &out[nums_start..at];
    // A NUL parts the records from the patch.
    if out.get(at) == Some(&0) {
        at += 1;
    }
    Some((names, nums, &out[at..]))
}

impl RepoSource for GitRepo {
    fn resolve<'a>(&'a self, rev: &'a str) -> BoxFuture<'a, Result<String, RepoError>> {
        Box::pin(self.resolve_commit(rev))
    }

    fn read_file<'a>(
        &'a self,
        rev: &'a str,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, RepoError>> {
        Box::pin(self.read(rev, path))
    }

    /// By the id of the tree's entry, read from our own object store: the
    /// id names the bytes, and the bytes are the blob cache's, not a copy.
    fn read_blob<'a>(&'a self, rev: &'a str, path: &'a str) -> BlobFuture<'a> {
        Box::pin(async move {
            let (oid, body) = self.read_shared(rev, path).await?;
            Ok(FileBytes::from_blob(body, &oid))
        })
    }

    fn list_tree<'a>(&'a self, rev: &'a str) -> BoxFuture<'a, Result<Vec<TreeEntry>, RepoError>> {
        Box::pin(self.tree(rev))
    }

    fn compare<'a>(
        &'a self,
        base: &'a str,
        head: &'a str,
    ) -> BoxFuture<'a, Result<Comparison, RepoError>> {
        Box::pin(self.diff(base, head))
    }
}

/// Parents, committer time and subject of a raw commit object.
fn parse_commit(sha: String, body: &[u8]) -> CommitInfo {
    let text = String::from_utf8_lossy(body);
    let (headers, message) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut parents = Vec::new();
    let mut time = 0;
    for h in headers.lines() {
        if let Some(p) = h.strip_prefix("parent ") {
            parents.push(p.trim().to_owned());
        } else if let Some(c) = h.strip_prefix("committer ") {
            // `Name <email> 1717000000 +0200`
            let mut it = c.rsplitn(3, ' ');
            let _tz = it.next();
            time = it.next().and_then(|t| t.parse().ok()).unwrap_or(0);
        }
    }
    CommitInfo {
        sha,
        parents,
        time,
        subject: message.lines().next().unwrap_or("").trim().to_owned(),
    }
}

fn git_failed(args: &[&str], code: Option<i32>, stderr: String) -> RepoError {
    RepoError::Git {
        args: args.join(" "),
        status: code.map_or_else(|| "signal".to_string(), |c| c.to_string()),
        stderr,
    }
}

/// A revision must name something, never an option.
fn check_rev(rev: &str) -> Result<(), RepoError> {
    if rev.is_empty() || rev.starts_with('-') || rev.contains(['\0', '\n']) || rev.contains(':') {
        return Err(RepoError::InvalidArgument(format!("revision {rev:?}")));
    }
    Ok(())
}

/// Repository-relative path without `./` or a leading `/`.
fn clean_path(path: &str) -> Result<&str, RepoError> {
    let p = path.trim_start_matches("./").trim_start_matches('/');
    if p.is_empty() || p.contains('\0') || p.split('/').any(|s| s == "..") {
        return Err(RepoError::InvalidArgument(format!("path {path:?}")));
    }
    Ok(p)
}

/// `<mode> SP <type> SP <oid> SP+ <size> TAB <path>`
fn parse_ls_tree(rec: &[u8]) -> Option<TreeEntry> {
    let tab = rec.iter().position(|b| *b == b'\t')?;
    let meta = std::str::from_utf8(&rec[..tab]).ok()?;
    let path = String::from_utf8_lossy(&rec[tab + 1..]).into_owned();
    let mut it = meta.split_whitespace();
    let mode = it.next()?;
    let _ty = it.next()?;
    let oid = it.next()?.to_string();
    let size = it.next()?;
    let kind = match mode {
        "100755" => EntryKind::Executable,
        "120000" => EntryKind::Symlink,
        "160000" => EntryKind::Submodule,
        _ => EntryKind::File,
    };
    Some(TreeEntry {
        path,
        kind,
        size: size.parse().ok(),
        oid,
    })
}

/// `--name-status -z`: `STATUS\0path\0` or `R100\0old\0new\0`.
fn parse_name_status(out: &[u8]) -> Option<Vec<ChangedFile>> {
    let mut fields = out
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned());
    let mut files = Vec::new();
    while let Some(status) = fields.next() {
        let letter = status.chars().next()?;
        let (status, previous_path, path) = match letter {
            'R' | 'C' => {
                let old = fields.next()?;
                let new = fields.next()?;
                let s = if letter == 'R' {
                    FileStatus::Renamed
                } else {
                    FileStatus::Copied
                };
                (s, Some(old), new)
            }
            'A' => (FileStatus::Added, None, fields.next()?),
            'D' => (FileStatus::Removed, None, fields.next()?),
            'M' => (FileStatus::Modified, None, fields.next()?),
            'T' => (FileStatus::Changed, None, fields.next()?),
            _ => return None,
        };
        files.push(ChangedFile {
            path,
            previous_path,
            status,
            additions: 0,
            deletions: 0,
            patch: None,
            binary: false,
        });
    }
    Some(files)
}

/// `--numstat -z`: `add\tdel\tpath\0`, or `add\tdel\t\0old\0new\0` for renames;
/// binary files give `-\t-`.
fn parse_numstat(out: &[u8]) -> Vec<(u64, u64, bool)> {
    let mut rows = Vec::new();
    let mut fields = out.split(|b| *b == 0);
    while let Some(f) = fields.next() {
        if f.is_empty() {
            continue;
        }
        let s = String::from_utf8_lossy(f);
        let mut parts = s.splitn(3, '\t');
        let add = parts.next().unwrap_or("");
        let del = parts.next().unwrap_or("");
        let path = parts.next().unwrap_or("");
        if path.is_empty() {
            // Rename: the two paths follow as their own fields.
            fields.next();
            fields.next();
        }
        let binary = add == "-" || del == "-";
        rows.push((add.parse().unwrap_or(0), del.parse().unwrap_or(0), binary));
    }
    rows
}

struct PatchBlock {
    hunks: Option<String>,
    binary: bool,
}

/// Split `git diff --patch` output into one block per file, keeping only the
/// hunks (from the first `@@`), as GitHub's `patch` field does.
fn split_patch(text: &str) -> Vec<PatchBlock> {
    let mut blocks: Vec<PatchBlock> = Vec::new();
    let mut current: Option<(Vec<&str>, bool)> = None;
    let flush = |cur: Option<(Vec<&str>, bool)>, blocks: &mut Vec<PatchBlock>| {
        if let Some((lines, binary)) = cur {
            let hunk_start = lines.iter().position(|l| l.starts_with("@@"));
            let hunks = hunk_start.map(|i| {
                let mut s = lines[i..].join("\n");
                s.push('\n');
                s
            });
            blocks.push(PatchBlock { hunks, binary });
        }
    };
    let mut in_hunks = false;
    for line in text.split('\n') {
        if line.starts_with("diff --git ") {
            flush(current.take(), &mut blocks);
            current = Some((Vec::new(), false));
            in_hunks = false;
            continue;
        }
        let Some((lines, binary)) = current.as_mut() else {
            continue;
        };
        if !in_hunks {
            if line.starts_with("@@") {
                in_hunks = true;
            } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
                *binary = true;
            }
        }
        lines.push(line);
    }
    flush(current.take(), &mut blocks);
    // The output ends with a newline: drop the empty last line of the last hunk.
    if let Some(last) = blocks.last_mut()
        && let Some(h) = last.hunks.as_mut()
        && h.ends_with("\n\n")
    {
        h.pop();
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_with_renames() {
        let out = b"M\0a.txt\0R087\0old/b.sh\0new/b.sh\0A\0c\0D\0d\0";
        let files = parse_name_status(out).unwrap();
        assert_eq!(files.len(), 4);
        assert_eq!(files[1].status, FileStatus::Renamed);
        assert_eq!(files[1].previous_path.as_deref(), Some("old/b.sh"));
        assert_eq!(files[1].path, "new/b.sh");
        assert_eq!(files[3].status, FileStatus::Removed);
    }

    #[test]
    fn numstat_with_renames_and_binary() {
        let out = b"1\t2\ta.txt\0" as &[u8];
        let mut v = out.to_vec();
        v.extend_from_slice(b"3\t0\t\0old\0new\0-\t-\tbin.png\0");
        let rows = parse_numstat(&v);
        assert_eq!(rows, vec![(1, 2, false), (3, 0, false), (0, 0, true)]);
    }

    #[test]
    fn one_diff_process_gives_names_counts_and_patch() {
        let mut out =
            b":100644 100644 aa bb M\0a.txt\0:100644 100644 cc cc R087\0old.sh\0new.sh\0".to_vec();
        out.extend_from_slice(b"1\t2\ta.txt\0" as &[u8]);
        out.extend_from_slice(
            b"3\t0\t\0old.sh\0new.sh\0\0diff --git a/a.txt b/a.txt\n@@ -1 +1 @@\n",
        );
        let (names, nums, patch) = split_combined(&out).unwrap();
        assert_eq!(names, b"M\0a.txt\0R087\0old.sh\0new.sh\0");
        assert_eq!(parse_numstat(nums), vec![(1, 2, false), (3, 0, false)]);
        assert!(patch.starts_with(b"diff --git a/a.txt"));
        assert_eq!(
            split_combined(b"").unwrap(),
            (Vec::new(), &b""[..], &b""[..])
        );
        // A record cut short is refused, not misread.
        assert!(split_combined(b":100644 100644 aa bb M\0a.txt").is_none());
    }

    #[test]
    fn commit_objects_give_parents_time_and_subject() {
        let body = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent aa\nparent bb\nauthor A <a@x> 1700000000 +0000\ncommitter C <c@x> 1717000000 -0500\n\nAdd a thing (#12) [skip-sweep]\n\nbody\n";
        let c = parse_commit("s".into(), body);
        assert_eq!(c.parents, vec!["aa", "bb"]);
        assert_eq!(c.time, 1_717_000_000);
        assert_eq!(c.subject, "Add a thing (#12) [skip-sweep]");
    }

    #[test]
    fn revisions_never_become_options() {
        assert!(check_rev("--output=/tmp/x").is_err());
        assert!(check_rev("").is_err());
        assert!(check_rev("main:secret").is_err());
        assert!(check_rev("HEAD~1").is_ok());
        assert!(clean_path("../etc/passwd").is_err());
        assert_eq!(clean_path("./a/b").unwrap(), "a/b");
    }
}
