//! Repositories and git data: new repositories and forks, branches,
//! commits (with the `push` and `synchronize` they send) and diffs.
use super::obj;
use crate::git::{FileChange, NewCommit, Signature, diff_snapshots};
use crate::state::{Repo, SResult, SandboxError, TimelineItem, World};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One file change of a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Write { path: String, content: Vec<u8> },
    Delete { path: String },
}

impl Change {
    pub fn write(path: impl Into<String>, content: impl Into<Vec<u8>>) -> Self {
        Change::Write {
            path: path.into(),
            content: content.into(),
        }
    }
    pub fn delete(path: impl Into<String>) -> Self {
        Change::Delete { path: path.into() }
    }
}

impl World {
    fn signature(&mut self, login: &str) -> Signature {
        let a = self.account(login);
        Signature {
            name: a.login.clone(),
            email: format!("{}+{}@users.noreply.github.com", a.id, a.login),
            date: self.now(),
        }
    }

    /// Adds a repository with one initial commit on `default_branch`.
    pub(crate) fn add_repo(
        &mut self,
        owner: &str,
        name: &str,
        default_branch: &str,
        files: Vec<(String, Vec<u8>)>,
    ) -> SResult<String> {
        let key = World::repo_key(owner, name);
        if self.repos.contains_key(&key) {
            return Err(SandboxError::validation(
                "Repository",
                "name",
                "already_exists",
            ));
        }
        self.account(owner);
        let mut snapshot = BTreeMap::new();
        for (path, content) in files {
            let path = normalize_path(&path)?;
            snapshot.insert(path, self.objects.put_blob(content));
        }
        let sig = self.signature(owner);
        let sha = self.objects.write_commit(NewCommit {
            files: snapshot,
            parents: vec![],
            message: "Initial commit",
            author: sig.clone(),
            committer: sig.clone(),
            author_login: Some(owner.to_string()),
        });
        let id = self.ids.next("repo");
        self.repos.insert(
            key,
            Repo {
                id,
                owner: owner.to_string(),
                name: name.to_string(),
                default_branch: default_branch.to_string(),
                private: false,
                fork_of: None,
                branches: BTreeMap::from([(default_branch.to_string(), sha.clone())]),
                issues: BTreeMap::new(),
                next_number: 1,
                labels: BTreeMap::new(),
                workflows: BTreeMap::new(),
                permissions: BTreeMap::new(),
                created_at: sig.date,
                pushed_at: sig.date,
            },
        );
        Ok(sha)
    }

    /// A fork of `parent` owned by `owner`, sharing its object store.
    pub(crate) fn add_fork(&mut self, parent: &str, owner: &str) -> SResult<String> {
        let p = self.repo(parent)?.clone();
        let key = World::repo_key(owner, &p.name);
        if self.repos.contains_key(&key) {
            return Err(SandboxError::validation(
                "Repository",
                "name",
                "already_exists",
            ));
        }
        self.account(owner);
        let now = self.now();
        let id = self.ids.next("repo");
        self.repos.insert(
            key.clone(),
            Repo {
                id,
                owner: owner.to_string(),
                name: p.name.clone(),
                default_branch: p.default_branch.clone(),
                private: false,
                fork_of: Some(p.full_name()),
                branches: p.branches.clone(),
                issues: BTreeMap::new(),
                next_number: 1,
                labels: BTreeMap::new(),
                workflows: BTreeMap::new(),
                permissions: BTreeMap::new(),
                created_at: now,
                pushed_at: now,
            },
        );
        Ok(key)
    }

    pub(crate) fn create_branch(&mut self, key: &str, branch: &str, from: &str) -> SResult<String> {
        let sha = self.resolve_ref(key, from)?;
        let repo = self.repo_mut(key)?;
        if repo.branches.contains_key(branch) {
            return Err(SandboxError::unprocessable("Reference already exists"));
        }
        repo.branches.insert(branch.to_string(), sha.clone());
        Ok(sha)
    }

    /// Commits `changes` on top of `branch` (created from the default branch
    /// when missing) and sends `synchronize` for PRs whose head it is.
    pub(crate) fn commit_on(
        &mut self,
        key: &str,
        branch: &str,
        changes: &[Change],
        message: &str,
        author: &str,
    ) -> SResult<String> {
        let repo = self.repo(key)?;
        let parent = match repo.branches.get(branch) {
            Some(s) => s.clone(),
            None => repo
                .branches
                .get(&repo.default_branch)
                .cloned()
                .ok_or_else(SandboxError::not_found)?,
        };
        let mut files: BTreeMap<String, String> = self
            .objects
            .commit(&parent)
            .map(|c| (*c.files).clone())
            .unwrap_or_default();
        for ch in changes {
            match ch {
                Change::Write { path, content } => {
                    let path = normalize_path(path)?;
                    let sha = self.objects.put_blob(content.clone());
                    files.insert(path, sha);
                }
                Change::Delete { path } => {
                    let path = normalize_path(path)?;
                    if files.remove(&path).is_none() {
                        return Err(SandboxError::unprocessable(format!(
                            "path {path} does not exist"
                        )));
                    }
                }
            }
        }
        let sig = self.signature(author);
        let sha = self.objects.write_commit(NewCommit {
            files,
            parents: vec![parent.clone()],
            message,
            author: sig.clone(),
            committer: sig.clone(),
            author_login: Some(author.to_string()),
        });
        let repo = self.repo_mut(key)?;
        let before = repo
            .branches
            .insert(branch.to_string(), sha.clone())
            .unwrap_or_else(|| "0".repeat(40));
        repo.pushed_at = sig.date;
        let commit = json!({ "id": sha, "message": message, "author": { "username": author } });
        self.emit(
            "push",
            key,
            author,
            obj(json!({
                "ref": format!("refs/heads/{branch}"),
                "before": before,
                "after": sha,
                "created": before.chars().all(|c| c == '0'),
                "commits": [commit.clone()],
                "head_commit": commit,
            })),
        );
        for (rk, number) in self.prs_with_head(key, branch) {
            let Ok(issue) = self.issue_mut(&rk, number) else {
                continue;
            };
            let before = issue
                .pull
                .as_ref()
                .map(|p| p.head_sha.clone())
                .unwrap_or_default();
            if let Some(p) = issue.pull.as_mut() {
                p.head_sha = sha.clone();
            }
            issue.updated_at = sig.date;
            issue.timeline.push(TimelineItem::Commit(sha.clone()));
            let mut payload = obj(json!({
                "action": "synchronize",
                "number": number,
                "before": before,
                "after": sha,
            }));
            payload.insert("pull_request".into(), self.pr_json(&rk, number));
            self.emit("pull_request", &rk, author, payload);
        }
        Ok(sha)
    }

    pub(crate) fn diff_commits(&self, base: &str, head: &str) -> Vec<FileChange> {
        let empty = Arc::new(BTreeMap::new());
        let old = self
            .objects
            .commit(base)
            .map(|c| c.files.clone())
            .unwrap_or_else(|| empty.clone());
        let new = self
            .objects
            .commit(head)
            .map(|c| c.files.clone())
            .unwrap_or(empty);
        diff_snapshots(&self.objects, &old, &new)
    }
}

fn normalize_path(p: &str) -> SResult<String> {
    let trimmed = p.trim_matches('/');
    if trimmed.is_empty()
        || trimmed
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Err(SandboxError::unprocessable(format!("invalid path: {p:?}")));
    }
    Ok(trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_validated() {
        assert!(normalize_path("a/../b").is_err());
        assert_eq!(normalize_path("/a/b/").ok().as_deref(), Some("a/b"));
    }
}
