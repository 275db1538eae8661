//! The repository source on the GitHub API: the same trait the command line
//! implements on a local clone, so the server and `sweepgate check` read a
//! benchmark repository through one interface.
//!
//! Every file read is capped (`InputLimits::for_path`: scripts, YAML files,
//! any file): the size GitHub reports is checked before the content is
//! fetched, and a file over its cap is refused with its name and the cap.
use super::{Api, GitHubError};
use crate::repo::{
    BoxFuture, ChangedFile, Comparison, EntryKind, FileStatus, RepoError, RepoSource, TreeEntry,
};
use base64::Engine;
use serde::Deserialize;
use sweepgate_core::ids::RepoName;

pub struct GitHubSource {
    api: Api,
    prefix: String,
}

impl GitHubSource {
    pub fn new(api: Api, repo: RepoName) -> Result<Self, GitHubError> {
        let (o, r) = repo
            .parts()
            .ok_or_else(|| GitHubError::Config(format!("`{repo}` is not owner/name")))?;
        let prefix = format!("/repos/{}/{}", seg(o), seg(r));
        Ok(Self { api, prefix })
    }
}

fn seg(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

fn path_seg(p: &str) -> String {
    p.split('/').map(seg).collect::<Vec<_>>().join("/")
}

fn remote(e: GitHubError) -> RepoError {
    RepoError::Remote {
        message: e.to_string(),
        retry_after: e.retry_after(),
    }
}

#[derive(Deserialize)]
struct Commit {
    sha: String,
}

#[derive(Deserialize)]
struct Contents {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    sha: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    encoding: String,
    #[serde(default)]
    size: Option<u64>,
}

#[derive(Deserialize)]
struct Blob {
    #[serde(default)]
    content: String,
    #[serde(default)]
    encoding: String,
    #[serde(default)]
    size: Option<u64>,
}

#[derive(Deserialize)]
struct Tree {
    #[serde(default)]
    tree: Vec<TreeItem>,
    #[serde(default)]
    truncated: bool,
}

#[derive(Deserialize)]
struct TreeItem {
    path: String,
    #[serde(default)]
    mode: String,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    sha: String,
    #[serde(default)]
    size: Option<u64>,
}

#[derive(Deserialize)]
struct Compare {
    merge_base_commit: Commit,
    #[serde(default)]
    commits: Vec<Commit>,
    #[serde(default)]
    files: Vec<CompareFile>,
}

#[derive(Deserialize)]
struct CompareFile {
    filename: String,
    #[serde(default)]
    previous_filename: Option<String>,
    #[serde(default)]
    status: String,
    #[serde(default)]
    additions: u64,
    #[serde(default)]
    deletions: u64,
    #[serde(default)]
    patch: Option<String>,
}

/// Refuses a file over its cap, naming it, its size and the setting.
fn within_cap(
    limits: &crate::config::server::InputLimits,
    rev: &str,
    path: &str,
    size: u64,
) -> Result<(), RepoError> {
    let (cap, setting) = limits.for_path(path);
    if size > cap {
        return Err(RepoError::remote(format!(
            "{path} at {rev} is {size} bytes, over the {cap}-byte cap ({setting}); it was not read"
        )));
    }
    Ok(())
}

fn decode(content: &str, what: &str) -> Result<Vec<u8>, RepoError> {
    let clean: String = content.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(clean)
        .map_err(|e| RepoError::remote(format!("{what}: bad base64: {e}")))
}

impl RepoSource for GitHubSource {
    fn resolve<'a>(&'a self, rev: &'a str) -> BoxFuture<'a, Result<String, RepoError>> {
        Box::pin(async move {
            let path = format!("{}/commits/{}", self.prefix, seg(rev));
            match self.api.get::<Commit>(&path).await {
                Ok(c) => Ok(c.sha),
                Err(e) if matches!(e.status(), Some(404 | 422)) => Err(RepoError::NoSuchRevision {
                    rev: rev.to_owned(),
                }),
                Err(e) => Err(remote(e)),
            }
        })
    }

    fn read_file<'a>(
        &'a self,
        rev: &'a str,
        path: &'a str,
    ) -> BoxFuture<'a, Result<Vec<u8>, RepoError>> {
        Box::pin(async move {
            let url = format!(
                "{}/contents/{}?ref={}",
                self.prefix,
                path_seg(path),
                seg(rev)
            );
            let Some(answer) = self
                .api
                .get_opt::<serde_json::Value>(&url)
                .await
                .map_err(remote)?
            else {
                return Err(RepoError::NoSuchFile {
                    rev: rev.to_owned(),
                    path: path.to_owned(),
                });
            };
            if answer.is_array() {
                return Err(RepoError::NotAFile {
                    rev: rev.to_owned(),
                    path: path.to_owned(),
                    kind: "directory".into(),
                });
            }
            let c: Contents = serde_json::from_value(answer)
                .map_err(|e| RepoError::remote(format!("{url}: {e}")))?;
            if c.kind != "file" && !c.kind.is_empty() {
                return Err(RepoError::NotAFile {
                    rev: rev.to_owned(),
                    path: path.to_owned(),
                    kind: c.kind,
                });
            }
            let limits = self.api.limits();
            // The size GitHub reports, before the content is fetched or
            // decoded; the decoded length is checked too.
            let size = c.size.unwrap_or(c.content.len() as u64 / 4 * 3);
            within_cap(&limits, rev, path, size)?;
            let bytes = if c.encoding == "base64" {
                decode(&c.content, &url)?
            } else {
                // Files over 1 MB come without content: read the blob instead.
                let blob_url = format!("{}/git/blobs/{}", self.prefix, seg(&c.sha));
                let b: Blob = self.api.get(&blob_url).await.map_err(remote)?;
                if let Some(size) = b.size {
                    within_cap(&limits, rev, path, size)?;
                }
                if b.encoding != "base64" {
                    return Err(RepoError::remote(format!(
                        "{blob_url}: unexpected encoding `{}`",
                        b.encoding
                    )));
                }
                decode(&b.content, &blob_url)?
            };
            within_cap(&limits, rev, path, bytes.len() as u64)?;
            Ok(bytes)
        })
    }

    fn list_tree<'a>(&'a self, rev: &'a str) -> BoxFuture<'a, Result<Vec<TreeEntry>, RepoError>> {
        Box::pin(async move {
            let sha = self.resolve(rev).await?;
            let url = format!("{}/git/trees/{sha}?recursive=1", self.prefix);
            let t: Tree = self.api.get(&url).await.map_err(remote)?;
            if t.truncated {
                // A partial list would make "the script exists" checks lie.
                return Err(RepoError::remote(format!(
                    "the tree of {rev} is too large for one API answer"
                )));
            }
            let mut out: Vec<TreeEntry> = t
                .tree
                .into_iter()
                .filter_map(|i| {
                    let kind = match (i.kind.as_str(), i.mode.as_str()) {
                        ("blob", "100755") => EntryKind::Executable,
                        ("blob", "120000") => EntryKind::Symlink,
                        ("blob", _) => EntryKind::File,
                        ("commit", _) => EntryKind::Submodule,
                        _ => return None,
                    };
                    let size = if kind == EntryKind::Submodule {
                        None
                    } else {
                        i.size
                    };
                    Some(TreeEntry {
                        path: i.path,
                        kind,
                        size,
                        oid: i.sha,
                    })
                })
                .collect();
            out.sort_by(|a, b| a.path.cmp(&b.path));
            Ok(out)
        })
    }

    /// GitHub's compare lists at most 300 files; a PR's own file list
    /// (`pulls/{n}/files`) goes to 3,000 and is what handlers use for PRs.
    fn compare<'a>(
        &'a self,
        base: &'a str,
        head: &'a str,
    ) -> BoxFuture<'a, Result<Comparison, RepoError>> {
        Box::pin(async move {
            let url = format!("{}/compare/{}...{}", self.prefix, seg(base), seg(head));
            let c: Compare = match self.api.get(&url).await {
                Ok(c) => c,
                Err(e) if e.status() == Some(404) => {
                    return Err(RepoError::NoSuchRevision {
                        rev: format!("{base}...{head}"),
                    });
                }
                Err(e) => return Err(remote(e)),
            };
            let head_sha = match c.commits.last() {
                Some(last) => last.sha.clone(),
                None => self.resolve(head).await?,
            };
            let files = c
                .files
                .into_iter()
                .map(|f| {
                    let status = FileStatus::from_github(&f.status).unwrap_or(FileStatus::Modified);
                    ChangedFile {
                        binary: f.patch.is_none() && f.additions + f.deletions == 0,
                        path: f.filename,
                        previous_path: f.previous_filename,
                        status,
                        additions: f.additions,
                        deletions: f.deletions,
                        patch: f.patch,
                    }
                })
                .collect();
            Ok(Comparison {
                merge_base: c.merge_base_commit.sha,
                head: head_sha,
                files,
            })
        })
    }
}
