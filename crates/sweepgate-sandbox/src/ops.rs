//! State changes shared by the HTTP handlers and the scenario API. Each one
//! validates like GitHub, mutates the world and emits the webhook GitHub
//! would send for it.
use super::git::{FileChange, NewCommit, Signature, diff_snapshots};
use super::state::*;
use chrono::Duration;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;
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

/// What `open_pr` needs; `head` is a branch of the repository or
/// `fork-owner:branch` for a PR from a fork.
#[derive(Debug, Clone)]
pub struct PullRequestSpec {
    pub owner: String,
    pub repo: String,
    pub head: String,
    pub base: Option<String>,
    pub title: String,
    pub body: Option<String>,
    pub author: String,
    pub author_association: String,
    pub draft: bool,
    /// A number to take instead of the next free one (a scenario that
    /// cites a real upstream PR by number).
    pub number: Option<u64>,
}

impl PullRequestSpec {
    pub fn new(owner: &str, repo: &str, head: &str, author: &str) -> Self {
        Self {
            owner: owner.into(),
            repo: repo.into(),
            head: head.into(),
            base: None,
            title: format!("Update {head}"),
            body: None,
            author: author.into(),
            author_association: "CONTRIBUTOR".into(),
            draft: false,
            number: None,
        }
    }
    pub fn number(mut self, n: u64) -> Self {
        self.number = Some(n);
        self
    }
    pub fn title(mut self, t: &str) -> Self {
        self.title = t.into();
        self
    }
    pub fn body(mut self, b: &str) -> Self {
        self.body = Some(b.into());
        self
    }
    pub fn base(mut self, b: &str) -> Self {
        self.base = Some(b.into());
        self
    }
    pub fn association(mut self, a: &str) -> Self {
        self.author_association = a.into();
        self
    }
    pub fn draft(mut self, d: bool) -> Self {
        self.draft = d;
        self
    }
}

/// What `add_workflow_run` needs; unset fields take GitHub's defaults.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub owner: String,
    pub repo: String,
    /// Workflow file name (`run-sweep.yml`); created if unknown.
    pub workflow: String,
    pub head_sha: String,
    pub head_branch: Option<String>,
    pub event: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub display_title: Option<String>,
    pub actor: Option<String>,
    pub id: Option<u64>,
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
    pub run_attempt: u64,
    pub inputs: Option<Value>,
}

impl RunSpec {
    pub fn new(owner: &str, repo: &str, workflow: &str, head_sha: &str) -> Self {
        Self {
            owner: owner.into(),
            repo: repo.into(),
            workflow: workflow.into(),
            head_sha: head_sha.into(),
            head_branch: None,
            event: "pull_request".into(),
            status: "queued".into(),
            conclusion: None,
            display_title: None,
            actor: None,
            id: None,
            created_at: None,
            run_attempt: 1,
            inputs: None,
        }
    }
    pub fn event(mut self, e: &str) -> Self {
        self.event = e.into();
        self
    }
    pub fn completed(mut self, conclusion: &str) -> Self {
        self.status = "completed".into();
        self.conclusion = Some(conclusion.into());
        self
    }
    pub(crate) fn status(mut self, s: &str) -> Self {
        self.status = s.into();
        self
    }
    pub fn id(mut self, id: u64) -> Self {
        self.id = Some(id);
        self
    }
    pub(crate) fn title(mut self, t: &str) -> Self {
        self.display_title = Some(t.into());
        self
    }
    pub(crate) fn actor(mut self, a: &str) -> Self {
        self.actor = Some(a.into());
        self
    }
    pub fn branch(mut self, b: &str) -> Self {
        self.head_branch = Some(b.into());
        self
    }
    pub fn created_at(mut self, t: chrono::DateTime<chrono::Utc>) -> Self {
        self.created_at = Some(t);
        self
    }
    pub fn attempt(mut self, n: u64) -> Self {
        self.run_attempt = n.max(1);
        self
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PrStats {
    pub commits: usize,
    pub additions: usize,
    pub deletions: usize,
    pub changed_files: usize,
}

const CHECK_CONCLUSIONS: [&str; 8] = [
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "stale",
    "timed_out",
];

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
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

    pub(crate) fn open_pr(&mut self, spec: PullRequestSpec) -> SResult<u64> {
        let key = World::repo_key(&spec.owner, &spec.repo);
        let repo = self.repo(&key)?;
        let base = spec
            .base
            .clone()
            .unwrap_or_else(|| repo.default_branch.clone());
        if !repo.branches.contains_key(&base) {
            return Err(SandboxError::validation("PullRequest", "base", "invalid"));
        }
        let (head_repo, head_ref) = match spec.head.split_once(':') {
            Some((owner, branch)) => {
                let fork = self
                    .repos
                    .iter()
                    .find(|(_, r)| {
                        r.owner.eq_ignore_ascii_case(owner)
                            && r.name.eq_ignore_ascii_case(&spec.repo)
                    })
                    .map(|(k, _)| k.clone())
                    .ok_or_else(|| SandboxError::validation("PullRequest", "head", "invalid"))?;
                (fork, branch.to_string())
            }
            None => (key.clone(), spec.head.clone()),
        };
        let head_sha = self
            .repo(&head_repo)?
            .branches
            .get(&head_ref)
            .cloned()
            .ok_or_else(|| SandboxError::validation("PullRequest", "head", "invalid"))?;
        let now = self.now();
        self.account(&spec.author);
        let issue_id = self.ids.next("issue");
        let pull_id = self.ids.next("pull");
        let repo = self.repo_mut(&key)?;
        let number = match spec.number {
            Some(n) if n == 0 || repo.issues.contains_key(&n) => {
                return Err(SandboxError::validation(
                    "PullRequest",
                    "number",
                    "already_exists",
                ));
            }
            Some(n) => n,
            None => repo.next_number,
        };
        repo.next_number = repo.next_number.max(number + 1);
        let commits = Vec::new();
        repo.issues.insert(
            number,
            Issue {
                number,
                id: issue_id,
                title: spec.title.clone(),
                body: spec.body.clone(),
                user: spec.author.clone(),
                author_association: spec.author_association.clone(),
                state: "open".into(),
                locked: false,
                labels: Vec::new(),
                created_at: now,
                updated_at: now,
                closed_at: None,
                pull: Some(PullState {
                    id: pull_id,
                    head_repo,
                    head_ref,
                    head_sha,
                    base_ref: base,
                    draft: spec.draft,
                    merged: false,
                    merged_at: None,
                    merged_by: None,
                    merge_commit_sha: None,
                    maintainer_can_modify: true,
                }),
                timeline: commits,
            },
        );
        let shas = self.pr_commits(&key, number).unwrap_or_default();
        if let Ok(issue) = self.issue_mut(&key, number) {
            issue.timeline = shas.into_iter().map(TimelineItem::Commit).collect();
        }
        self.emit_pr(&key, number, "opened", &spec.author, Map::new());
        Ok(number)
    }

    fn emit_pr(
        &mut self,
        key: &str,
        number: u64,
        action: &str,
        sender: &str,
        mut extra: Map<String, Value>,
    ) {
        extra.insert("action".into(), json!(action));
        extra.insert("number".into(), json!(number));
        extra.insert("pull_request".into(), self.pr_json(key, number));
        self.emit("pull_request", key, sender, extra);
    }

    fn push_event(&mut self, key: &str, number: u64, event: &str, actor: &str, extra: Value) {
        let id = self.ids.next("event");
        let at = self.now();
        if let Ok(issue) = self.issue_mut(key, number) {
            issue.updated_at = at;
            issue.timeline.push(TimelineItem::Event {
                id,
                event: event.into(),
                actor: actor.into(),
                at,
                extra,
            });
        }
    }

    /// Base snapshot (at the merge base) and head sha of a PR.
    fn pr_range(&self, key: &str, number: u64) -> SResult<(String, String)> {
        let (_, pull) = self.pull(key, number)?;
        let base_tip = self
            .repo(key)?
            .branches
            .get(&pull.base_ref)
            .cloned()
            .ok_or_else(SandboxError::not_found)?;
        let base = self
            .objects
            .merge_base(&base_tip, &pull.head_sha)
            .unwrap_or(base_tip);
        Ok((base, pull.head_sha.clone()))
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

    pub(crate) fn pr_files(&self, key: &str, number: u64) -> SResult<Vec<FileChange>> {
        let (base, head) = self.pr_range(key, number)?;
        Ok(self.diff_commits(&base, &head))
    }

    pub(crate) fn pr_commits(&self, key: &str, number: u64) -> SResult<Vec<String>> {
        let (base, head) = self.pr_range(key, number)?;
        Ok(self.objects.commits_between(&base, &head))
    }

    pub(crate) fn pr_stats(&self, key: &str, number: u64) -> PrStats {
        let files = self.pr_files(key, number).unwrap_or_default();
        PrStats {
            commits: self.pr_commits(key, number).map(|c| c.len()).unwrap_or(0),
            additions: files.iter().map(|f| f.additions).sum(),
            deletions: files.iter().map(|f| f.deletions).sum(),
            changed_files: files.len(),
        }
    }

    pub(crate) fn set_draft(
        &mut self,
        key: &str,
        number: u64,
        draft: bool,
        sender: &str,
    ) -> SResult<()> {
        let issue = self.issue_mut(key, number)?;
        let pull = issue.pull.as_mut().ok_or_else(SandboxError::not_found)?;
        if pull.draft == draft {
            return Ok(());
        }
        pull.draft = draft;
        let (action, event) = if draft {
            ("converted_to_draft", "convert_to_draft")
        } else {
            ("ready_for_review", "ready_for_review")
        };
        self.push_event(key, number, event, sender, json!({}));
        self.emit_pr(key, number, action, sender, Map::new());
        Ok(())
    }

    pub(crate) fn set_pr_state(
        &mut self,
        key: &str,
        number: u64,
        open: bool,
        sender: &str,
    ) -> SResult<()> {
        let now = self.now();
        let issue = self.issue_mut(key, number)?;
        let want = if open { "open" } else { "closed" };
        if issue.state == want {
            return Ok(());
        }
        issue.state = want.into();
        issue.closed_at = if open { None } else { Some(now) };
        let action = if open { "reopened" } else { "closed" };
        self.push_event(key, number, action, sender, json!({}));
        if self.pull(key, number).is_ok() {
            self.emit_pr(key, number, action, sender, Map::new());
        }
        Ok(())
    }

    /// Merges the PR (recorded as a merge: `merged`, `merged_at`,
    /// `merged_by`; the branch is not rewritten) and closes it.
    pub(crate) fn merge_pr(&mut self, key: &str, number: u64, sender: &str) -> SResult<()> {
        let now = self.now();
        let issue = self.issue_mut(key, number)?;
        if issue.state != "open" {
            return Err(SandboxError::unprocessable("Pull Request is not mergeable"));
        }
        let pull = issue.pull.as_mut().ok_or_else(SandboxError::not_found)?;
        pull.merged = true;
        pull.merged_at = Some(now);
        pull.merged_by = Some(sender.to_owned());
        pull.merge_commit_sha = Some(pull.head_sha.clone());
        self.set_pr_state(key, number, false, sender)
    }

    /// Edits title and/or body, sending `edited` with the old values.
    pub fn edit_pr(
        &mut self,
        key: &str,
        number: u64,
        title: Option<&str>,
        body: Option<&str>,
        sender: &str,
    ) -> SResult<()> {
        let now = self.now();
        let issue = self.issue_mut(key, number)?;
        let mut changes = Map::new();
        if let Some(t) = title {
            changes.insert("title".into(), json!({ "from": issue.title }));
            issue.title = t.into();
        }
        if let Some(b) = body {
            changes.insert("body".into(), json!({ "from": issue.body }));
            issue.body = Some(b.into());
        }
        issue.updated_at = now;
        self.emit_pr(
            key,
            number,
            "edited",
            sender,
            obj(json!({ "changes": changes })),
        );
        Ok(())
    }

    pub(crate) fn add_comment(
        &mut self,
        key: &str,
        number: u64,
        user: &str,
        association: &str,
        body: &str,
        via_app: bool,
    ) -> SResult<u64> {
        self.issue(key, number)?;
        if body.chars().count() > 65536 {
            return Err(SandboxError::validation("IssueComment", "body", "too_long"));
        }
        self.account(user);
        let id = self.ids.next("comment");
        let now = self.now();
        self.comments.insert(
            id,
            IssueComment {
                id,
                repo: key.to_string(),
                number,
                user: user.to_string(),
                author_association: association.to_string(),
                body: body.to_string(),
                created_at: now,
                updated_at: now,
                via_app,
            },
        );
        if let Ok(issue) = self.issue_mut(key, number) {
            issue.updated_at = now;
            issue.timeline.push(TimelineItem::Comment(id));
        }
        self.emit_comment(id, "created", user, None);
        Ok(id)
    }

    fn emit_comment(&mut self, id: u64, action: &str, sender: &str, changes: Option<Value>) {
        let Some(c) = self.comments.get(&id).cloned() else {
            return;
        };
        let mut payload = obj(json!({ "action": action }));
        if let Some(ch) = changes {
            payload.insert("changes".into(), ch);
        }
        payload.insert("issue".into(), self.issue_json(&c.repo, c.number));
        payload.insert("comment".into(), self.comment_json(id));
        self.emit("issue_comment", &c.repo, sender, payload);
    }

    pub(crate) fn edit_comment(&mut self, id: u64, body: &str, sender: &str) -> SResult<()> {
        let now = self.now();
        let c = self
            .comments
            .get_mut(&id)
            .ok_or_else(SandboxError::not_found)?;
        let from = std::mem::replace(&mut c.body, body.to_string());
        c.updated_at = now;
        self.emit_comment(
            id,
            "edited",
            sender,
            Some(json!({ "body": { "from": from } })),
        );
        Ok(())
    }

    pub(crate) fn delete_comment(&mut self, id: u64, sender: &str) -> SResult<()> {
        if !self.comments.contains_key(&id) {
            return Err(SandboxError::not_found());
        }
        self.emit_comment(id, "deleted", sender, None);
        if let Some(c) = self.comments.remove(&id)
            && let Ok(issue) = self.issue_mut(&c.repo, c.number)
        {
            issue
                .timeline
                .retain(|t| !matches!(t, TimelineItem::Comment(x) if *x == id));
        }
        Ok(())
    }

    fn ensure_label(&mut self, key: &str, name: &str) -> SResult<String> {
        let lk = name.to_ascii_lowercase();
        if let Some(l) = self.repo(key)?.labels.get(&lk) {
            return Ok(l.name.clone());
        }
        let id = self.ids.next("label");
        let color = World::label_color(name);
        self.repo_mut(key)?.labels.insert(
            lk,
            Label {
                id,
                name: name.to_string(),
                color,
                description: None,
            },
        );
        Ok(name.to_string())
    }

    /// Adds labels (creating unknown ones, as GitHub does) and sends one
    /// `labeled` per label that was not already there.
    pub(crate) fn add_labels(
        &mut self,
        key: &str,
        number: u64,
        names: &[String],
        sender: &str,
    ) -> SResult<()> {
        self.issue(key, number)?;
        for raw in names {
            let name = raw.trim();
            if name.is_empty() {
                return Err(SandboxError::validation("Label", "name", "missing_field"));
            }
            let name = self.ensure_label(key, name)?;
            let issue = self.issue_mut(key, number)?;
            if issue.labels.iter().any(|l| l.eq_ignore_ascii_case(&name)) {
                continue;
            }
            issue.labels.push(name.clone());
            let label = self.label_json(key, &name);
            self.push_event(
                key,
                number,
                "labeled",
                sender,
                json!({ "label": { "name": name, "color": label["color"] } }),
            );
            if self.pull(key, number).is_ok() {
                self.emit_pr(
                    key,
                    number,
                    "labeled",
                    sender,
                    obj(json!({ "label": label })),
                );
            }
        }
        Ok(())
    }

    pub(crate) fn remove_label(
        &mut self,
        key: &str,
        number: u64,
        name: &str,
        sender: &str,
    ) -> SResult<()> {
        let issue = self.issue_mut(key, number)?;
        let Some(pos) = issue
            .labels
            .iter()
            .position(|l| l.eq_ignore_ascii_case(name))
        else {
            return Err(SandboxError::new(404, "Label does not exist"));
        };
        let name = issue.labels.remove(pos);
        let label = self.label_json(key, &name);
        self.push_event(
            key,
            number,
            "unlabeled",
            sender,
            json!({ "label": { "name": name, "color": label["color"] } }),
        );
        if self.pull(key, number).is_ok() {
            self.emit_pr(
                key,
                number,
                "unlabeled",
                sender,
                obj(json!({ "label": label })),
            );
        }
        Ok(())
    }

    pub(crate) fn set_labels(
        &mut self,
        key: &str,
        number: u64,
        names: &[String],
        sender: &str,
    ) -> SResult<()> {
        let current = self.issue(key, number)?.labels.clone();
        for l in &current {
            if !names.iter().any(|n| n.eq_ignore_ascii_case(l)) {
                self.remove_label(key, number, l, sender)?;
            }
        }
        self.add_labels(key, number, names, sender)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn submit_review(
        &mut self,
        key: &str,
        number: u64,
        user: &str,
        association: &str,
        event: &str,
        body: &str,
        commit_id: Option<&str>,
        comments: &[Value],
    ) -> SResult<u64> {
        let (_, pull) = self.pull(key, number)?;
        let head = pull.head_sha.clone();
        let state = match event {
            "APPROVE" | "APPROVED" => "APPROVED",
            "REQUEST_CHANGES" | "CHANGES_REQUESTED" => "CHANGES_REQUESTED",
            "COMMENT" | "COMMENTED" => "COMMENTED",
            "" | "PENDING" => "PENDING",
            _ => {
                return Err(SandboxError::validation(
                    "PullRequestReview",
                    "event",
                    "invalid",
                ));
            }
        };
        if matches!(state, "CHANGES_REQUESTED" | "COMMENTED")
            && body.is_empty()
            && comments.is_empty()
        {
            return Err(SandboxError::unprocessable(
                "Unprocessable Entity: \"Review Comment is missing\"",
            ));
        }
        self.account(user);
        let id = self.ids.next("review");
        let now = self.now();
        let commit = commit_id.unwrap_or(&head).to_string();
        self.reviews.insert(
            id,
            Review {
                id,
                repo: key.to_string(),
                number,
                user: user.to_string(),
                author_association: association.to_string(),
                body: body.to_string(),
                state: state.to_string(),
                commit_id: commit.clone(),
                submitted_at: (state != "PENDING").then_some(now),
            },
        );
        for c in comments {
            let cid = self.ids.next("review_comment");
            let path = c
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let hunk = self
                .pr_files(key, number)
                .ok()
                .and_then(|fs| fs.into_iter().find(|f| f.filename == path))
                .and_then(|f| f.patch)
                .map(|p| p.lines().take(4).collect::<Vec<_>>().join("\n"))
                .unwrap_or_default();
            self.review_comments.insert(
                cid,
                ReviewComment {
                    id: cid,
                    review_id: id,
                    repo: key.to_string(),
                    number,
                    user: user.to_string(),
                    author_association: association.to_string(),
                    path,
                    line: c
                        .get("line")
                        .or_else(|| c.get("position"))
                        .and_then(Value::as_u64),
                    side: c
                        .get("side")
                        .and_then(Value::as_str)
                        .unwrap_or("RIGHT")
                        .to_string(),
                    body: c
                        .get("body")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    commit_id: commit.clone(),
                    diff_hunk: hunk,
                    created_at: now,
                    in_reply_to: None,
                },
            );
        }
        if state != "PENDING" {
            if let Ok(issue) = self.issue_mut(key, number) {
                issue.timeline.push(TimelineItem::Review(id));
                issue.updated_at = now;
            }
            let mut payload = obj(json!({ "action": "submitted" }));
            payload.insert("review".into(), self.review_json(id));
            payload.insert("pull_request".into(), self.pr_json(key, number));
            self.emit("pull_request_review", key, user, payload);
        }
        Ok(id)
    }

    fn suite_for(&mut self, key: &str, sha: &str, app_id: u64) -> u64 {
        if let Some(id) = self.suites.get(&(key.to_string(), sha.to_string(), app_id)) {
            return *id;
        }
        let id = self.ids.next("suite");
        self.suites
            .insert((key.to_string(), sha.to_string(), app_id), id);
        id
    }

    /// `POST /check-runs` semantics; `app_id` is the creating app.
    pub(crate) fn create_check_run(
        &mut self,
        key: &str,
        body: &Value,
        app_id: u64,
        sender: &str,
    ) -> SResult<u64> {
        let name = body
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| SandboxError::validation("CheckRun", "name", "missing_field"))?
            .to_string();
        let head_sha = body
            .get("head_sha")
            .and_then(Value::as_str)
            .ok_or_else(|| SandboxError::validation("CheckRun", "head_sha", "missing_field"))?
            .to_string();
        self.repo(key)?;
        if self.objects.commit(&head_sha).is_none() {
            return Err(SandboxError::unprocessable(
                "No commit found for SHA: ".to_string() + &head_sha,
            ));
        }
        let id = self.ids.next("check_run");
        let suite_id = self.suite_for(key, &head_sha, app_id);
        let now = self.now();
        self.check_runs.insert(
            id,
            CheckRun {
                id,
                repo: key.to_string(),
                head_sha,
                name,
                status: "queued".into(),
                conclusion: None,
                started_at: now,
                completed_at: None,
                details_url: None,
                external_id: String::new(),
                title: None,
                summary: None,
                text: None,
                annotations: Vec::new(),
                app_id,
                suite_id,
            },
        );
        if let Err(e) = self.apply_check_fields(id, body) {
            self.check_runs.remove(&id);
            return Err(e);
        }
        let mut payload = obj(json!({ "action": "created" }));
        payload.insert("check_run".into(), self.check_run_json(id));
        self.emit("check_run", key, sender, payload);
        if self
            .check_runs
            .get(&id)
            .is_some_and(|c| c.status == "completed")
        {
            self.emit_check_completed(id, sender);
        }
        Ok(id)
    }

    fn emit_check_completed(&mut self, id: u64, sender: &str) {
        let Some(repo) = self.check_runs.get(&id).map(|c| c.repo.clone()) else {
            return;
        };
        let mut payload = obj(json!({ "action": "completed" }));
        payload.insert("check_run".into(), self.check_run_json(id));
        self.emit("check_run", &repo, sender, payload);
    }

    /// `PATCH /check-runs/{id}` semantics.
    pub(crate) fn update_check_run(
        &mut self,
        key: &str,
        id: u64,
        body: &Value,
        sender: &str,
    ) -> SResult<()> {
        let before = self
            .check_runs
            .get(&id)
            .filter(|c| c.repo == key)
            .cloned()
            .ok_or_else(SandboxError::not_found)?;
        if let Err(e) = self.apply_check_fields(id, body) {
            self.check_runs.insert(id, before);
            return Err(e);
        }
        if before.status != "completed"
            && self
                .check_runs
                .get(&id)
                .is_some_and(|c| c.status == "completed")
        {
            self.emit_check_completed(id, sender);
        }
        Ok(())
    }

    fn apply_check_fields(&mut self, id: u64, body: &Value) -> SResult<()> {
        let now = self.clock.peek();
        let c = self
            .check_runs
            .get_mut(&id)
            .ok_or_else(SandboxError::not_found)?;
        let s = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_string);
        if let Some(n) = s("name") {
            c.name = n;
        }
        if let Some(u) = s("details_url") {
            c.details_url = Some(u);
        }
        if let Some(e) = s("external_id") {
            c.external_id = e;
        }
        if let Some(t) = s("started_at").and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
        {
            c.started_at = t.with_timezone(&chrono::Utc);
        }
        if let Some(st) = s("status") {
            if ![
                "queued",
                "in_progress",
                "completed",
                "waiting",
                "requested",
                "pending",
            ]
            .contains(&st.as_str())
            {
                return Err(SandboxError::validation("CheckRun", "status", "invalid"));
            }
            c.status = st;
        }
        if let Some(con) = s("conclusion") {
            if !CHECK_CONCLUSIONS.contains(&con.as_str()) {
                return Err(SandboxError::validation(
                    "CheckRun",
                    "conclusion",
                    "invalid",
                ));
            }
            // Giving a conclusion completes the run, as on GitHub.
            c.conclusion = Some(con);
            c.status = "completed".into();
        }
        if c.status == "completed" {
            if c.conclusion.is_none() {
                return Err(SandboxError::unprocessable(
                    "Invalid request.\n\n\"conclusion\" wasn't supplied.",
                ));
            }
            let done = s("completed_at")
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
                .map(|t| t.with_timezone(&chrono::Utc))
                .unwrap_or(now);
            c.completed_at.get_or_insert(done);
        }
        if let Some(out) = body.get("output").filter(|o| o.is_object()) {
            let title = out.get("title").and_then(Value::as_str);
            let summary = out.get("summary").and_then(Value::as_str);
            if title.is_none() || summary.is_none() {
                return Err(SandboxError::validation(
                    "CheckRun",
                    "output",
                    "missing_field",
                ));
            }
            if summary.is_some_and(|s| s.chars().count() > 65535) {
                return Err(SandboxError::validation(
                    "CheckRun",
                    "output.summary",
                    "too_long",
                ));
            }
            c.title = title.map(str::to_string);
            c.summary = summary.map(str::to_string);
            if let Some(t) = out.get("text").and_then(Value::as_str) {
                c.text = Some(t.to_string());
            }
            if let Some(anns) = out.get("annotations").and_then(Value::as_array) {
                if anns.len() > 50 {
                    return Err(SandboxError::validation(
                        "CheckRun",
                        "output.annotations",
                        "too_long",
                    ));
                }
                for a in anns {
                    let ok = a.get("path").is_some_and(Value::is_string)
                        && a.get("start_line").is_some_and(Value::is_u64)
                        && a.get("end_line").is_some_and(Value::is_u64)
                        && a.get("message").is_some_and(Value::is_string)
                        && a.get("annotation_level")
                            .and_then(Value::as_str)
                            .is_some_and(|l| ["notice", "warning", "failure"].contains(&l));
                    if !ok {
                        return Err(SandboxError::validation(
                            "CheckRun",
                            "output.annotations",
                            "invalid",
                        ));
                    }
                    // Annotations accumulate over updates, as on GitHub.
                    c.annotations.push(a.clone());
                }
            }
        }
        Ok(())
    }

    pub(crate) fn create_status(
        &mut self,
        key: &str,
        sha: &str,
        body: &Value,
        creator: &str,
    ) -> SResult<u64> {
        self.repo(key)?;
        if self.objects.commit(sha).is_none() {
            return Err(SandboxError::unprocessable(format!(
                "No commit found for SHA: {sha}"
            )));
        }
        let state = body
            .get("state")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !["error", "failure", "pending", "success"].contains(&state) {
            return Err(SandboxError::validation("Status", "state", "custom"));
        }
        let description = body
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string);
        if description
            .as_ref()
            .is_some_and(|d| d.chars().count() > 140)
        {
            return Err(SandboxError::validation("Status", "description", "custom"));
        }
        let id = self.ids.next("status");
        let now = self.now();
        self.statuses.push(CommitStatus {
            id,
            repo: key.to_string(),
            sha: sha.to_string(),
            state: state.to_string(),
            description,
            target_url: body
                .get("target_url")
                .and_then(Value::as_str)
                .map(str::to_string),
            context: body
                .get("context")
                .and_then(Value::as_str)
                .unwrap_or("default")
                .to_string(),
            creator: creator.to_string(),
            created_at: now,
        });
        Ok(id)
    }

    pub(crate) fn add_workflow(&mut self, key: &str, file: &str, name: &str) -> SResult<u64> {
        let path = if file.starts_with(".github/") {
            file.to_string()
        } else {
            format!(".github/workflows/{file}")
        };
        if let Some(w) = self.repo(key)?.workflows.values().find(|w| w.path == path) {
            return Ok(w.id);
        }
        let id = self.ids.next("workflow");
        let now = self.now();
        self.repo_mut(key)?.workflows.insert(
            id,
            Workflow {
                id,
                name: name.to_string(),
                path,
                state: "active".into(),
                dispatchable: true,
                run_name: None,
                created_at: now,
                next_run_number: 1,
            },
        );
        Ok(id)
    }

    /// Finds a workflow by numeric id or file name.
    pub(crate) fn find_workflow(&self, key: &str, id_or_file: &str) -> SResult<u64> {
        let repo = self.repo(key)?;
        if let Ok(id) = id_or_file.parse::<u64>()
            && repo.workflows.contains_key(&id)
        {
            return Ok(id);
        }
        repo.workflows
            .values()
            .find(|w| w.file_name() == id_or_file || w.path == id_or_file)
            .map(|w| w.id)
            .ok_or_else(SandboxError::not_found)
    }

    pub(crate) fn create_run(&mut self, spec: RunSpec) -> SResult<u64> {
        let key = World::repo_key(&spec.owner, &spec.repo);
        let workflow_id = match self.find_workflow(&key, &spec.workflow) {
            Ok(id) => id,
            Err(_) => {
                let name = spec
                    .workflow
                    .trim_end_matches(".yml")
                    .trim_end_matches(".yaml")
                    .to_string();
                self.add_workflow(&key, &spec.workflow, &name)?
            }
        };
        let head_sha = self.resolve_ref(&key, &spec.head_sha)?;
        let head_branch = match &spec.head_branch {
            Some(b) => b.clone(),
            None => self
                .repo(&key)?
                .branches
                .iter()
                .find(|(_, s)| **s == head_sha)
                .map(|(b, _)| b.clone())
                .unwrap_or_default(),
        };
        let id = match spec.id {
            Some(id) if self.runs.contains_key(&id) => {
                return Err(SandboxError::unprocessable(format!(
                    "run {id} already exists"
                )));
            }
            Some(id) => id,
            None => self.ids.next("run"),
        };
        self.ids.bump_past("run", id);
        let created = match spec.created_at {
            Some(t) => t,
            None => self.now(),
        };
        let actor = spec
            .actor
            .clone()
            .unwrap_or_else(|| self.settings.app.bot_login());
        self.account(&actor);
        let prs = if spec.event == "pull_request" {
            self.prs_for_sha(&key, &head_sha)
        } else {
            Vec::new()
        };
        let suite = self.ids.next("suite");
        let repo = self.repo_mut(&key)?;
        let wf = repo
            .workflows
            .get_mut(&workflow_id)
            .ok_or_else(SandboxError::not_found)?;
        let run_number = wf.next_run_number;
        wf.next_run_number += 1;
        let name = wf.name.clone();
        let title = spec.display_title.clone().unwrap_or_else(|| name.clone());
        self.runs.insert(
            id,
            WorkflowRun {
                id,
                repo: key.clone(),
                workflow_id,
                name,
                display_title: title,
                event: spec.event.clone(),
                status: "queued".into(),
                conclusion: None,
                head_sha,
                head_branch,
                head_repo: key.clone(),
                actor: actor.clone(),
                triggering_actor: actor.clone(),
                run_number,
                run_attempt: spec.run_attempt,
                created_at: created,
                updated_at: created,
                run_started_at: created,
                pull_requests: prs,
                check_suite_id: suite,
            },
        );
        self.emit_run(id, "requested");
        if spec.status != "queued" {
            self.set_run_state(id, &spec.status, spec.conclusion.as_deref())?;
        }
        Ok(id)
    }

    fn emit_run(&mut self, id: u64, action: &str) {
        let Some(r) = self.runs.get(&id).cloned() else {
            return;
        };
        let mut payload = obj(json!({ "action": action }));
        payload.insert("workflow_run".into(), self.run_json(id));
        payload.insert(
            "workflow".into(),
            self.workflow_json(&r.repo, r.workflow_id),
        );
        self.emit("workflow_run", &r.repo, &r.triggering_actor, payload);
    }

    /// Moves a run to `status` (`in_progress` or `completed` with a
    /// conclusion), sending the matching `workflow_run` action.
    pub(crate) fn set_run_state(
        &mut self,
        id: u64,
        status: &str,
        conclusion: Option<&str>,
    ) -> SResult<()> {
        let now = self.now();
        let run = self.runs.get_mut(&id).ok_or_else(SandboxError::not_found)?;
        match status {
            "in_progress" => {
                run.status = "in_progress".into();
                run.updated_at = now;
                self.emit_run(id, "in_progress");
            }
            "completed" => {
                let con = conclusion.unwrap_or("success");
                if ![
                    "success",
                    "failure",
                    "cancelled",
                    "skipped",
                    "timed_out",
                    "action_required",
                    "neutral",
                    "stale",
                    "startup_failure",
                ]
                .contains(&con)
                {
                    return Err(SandboxError::validation(
                        "WorkflowRun",
                        "conclusion",
                        "invalid",
                    ));
                }
                run.status = "completed".into();
                run.conclusion = Some(con.into());
                run.updated_at = now;
                self.emit_run(id, "completed");
            }
            "queued" | "waiting" | "pending" | "requested" => {
                run.status = status.into();
                run.conclusion = None;
                run.updated_at = now;
            }
            _ => return Err(SandboxError::validation("WorkflowRun", "status", "invalid")),
        }
        Ok(())
    }

    pub(crate) fn cancel_run(&mut self, key: &str, id: u64) -> SResult<()> {
        let run = self
            .runs
            .get(&id)
            .filter(|r| r.repo == key)
            .ok_or_else(SandboxError::not_found)?;
        if run.status == "completed" {
            return Err(SandboxError::new(
                409,
                "Cannot cancel a workflow run that is completed.",
            ));
        }
        let attempt = run.run_attempt;
        let job_ids: Vec<u64> = self
            .jobs
            .values()
            .filter(|j| j.run_id == id && j.run_attempt == attempt && j.status != "completed")
            .map(|j| j.id)
            .collect();
        for j in job_ids {
            self.set_job_state(j, "completed", Some("cancelled"))?;
        }
        self.set_run_state(id, "completed", Some("cancelled"))
    }

    /// A new attempt: failed or cancelled jobs (or all, when `all`) start
    /// again; the others are carried over as on GitHub.
    pub(crate) fn rerun(&mut self, key: &str, id: u64, all: bool, actor: &str) -> SResult<()> {
        let run = self
            .runs
            .get(&id)
            .filter(|r| r.repo == key)
            .cloned()
            .ok_or_else(SandboxError::not_found)?;
        if run.status != "completed" {
            return Err(SandboxError::new(403, "This workflow is already running"));
        }
        let failed = |c: &Option<String>| {
            matches!(c.as_deref(), Some("failure" | "cancelled" | "timed_out"))
        };
        let old_jobs: Vec<Job> = self
            .jobs
            .values()
            .filter(|j| j.run_id == id && j.run_attempt == run.run_attempt)
            .cloned()
            .collect();
        if !all && !old_jobs.iter().any(|j| failed(&j.conclusion)) && !failed(&run.conclusion) {
            return Err(SandboxError::new(403, "There are no failed jobs to re-run"));
        }
        self.run_attempts.insert((id, run.run_attempt), run.clone());
        let now = self.now();
        self.account(actor);
        if let Some(r) = self.runs.get_mut(&id) {
            r.run_attempt += 1;
            r.status = "queued".into();
            r.conclusion = None;
            r.updated_at = now;
            r.run_started_at = now;
            r.triggering_actor = actor.to_string();
        }
        for j in old_jobs {
            if all || failed(&j.conclusion) {
                self.add_job(id, &j.name, "queued", None, j.labels.clone())?;
            } else {
                let jid = self.ids.next("job");
                let mut copy = j.clone();
                copy.id = jid;
                copy.run_attempt = run.run_attempt + 1;
                self.jobs.insert(jid, copy);
            }
        }
        self.emit_run(id, "requested");
        Ok(())
    }

    /// A job of the current attempt, with the check run Actions creates for it.
    pub(crate) fn add_job(
        &mut self,
        run_id: u64,
        name: &str,
        status: &str,
        conclusion: Option<&str>,
        labels: Vec<String>,
    ) -> SResult<u64> {
        let run = self
            .runs
            .get(&run_id)
            .cloned()
            .ok_or_else(SandboxError::not_found)?;
        let check = self.create_check_run(
            &run.repo,
            &json!({ "name": name, "head_sha": run.head_sha, "status": "queued" }),
            ACTIONS_APP_ID,
            "github-actions[bot]",
        )?;
        let id = self.ids.next("job");
        let now = self.now();
        self.jobs.insert(
            id,
            Job {
                id,
                run_id,
                run_attempt: run.run_attempt,
                name: name.to_string(),
                status: "queued".into(),
                conclusion: None,
                created_at: now,
                started_at: now,
                completed_at: None,
                labels,
                runner_name: None,
                check_run_id: check,
            },
        );
        // As on GitHub, the job's check run links to the job in its run.
        let full = self
            .repos
            .get(&run.repo)
            .map(|r| r.full_name())
            .unwrap_or_default();
        let details = format!("{}/{full}/actions/runs/{run_id}/job/{id}", self.html());
        if let Some(c) = self.check_runs.get_mut(&check) {
            c.details_url = Some(details);
        }
        self.emit_job(id, "queued");
        if status != "queued" {
            self.set_job_state(id, status, conclusion)?;
        }
        Ok(id)
    }

    fn emit_job(&mut self, id: u64, action: &str) {
        let Some(repo) = self
            .jobs
            .get(&id)
            .and_then(|j| self.runs.get(&j.run_id))
            .map(|r| r.repo.clone())
        else {
            return;
        };
        let mut payload = obj(json!({ "action": action }));
        payload.insert("workflow_job".into(), self.job_json(id));
        self.emit("workflow_job", &repo, "github-actions[bot]", payload);
    }

    pub(crate) fn set_job_state(
        &mut self,
        id: u64,
        status: &str,
        conclusion: Option<&str>,
    ) -> SResult<()> {
        let now = self.now();
        let job = self.jobs.get_mut(&id).ok_or_else(SandboxError::not_found)?;
        let check = job.check_run_id;
        let repo = self
            .runs
            .get(&job.run_id)
            .map(|r| r.repo.clone())
            .unwrap_or_default();
        match status {
            "in_progress" => {
                job.status = "in_progress".into();
                job.started_at = now;
                job.runner_name = Some(format!("runner-{}", id % 97));
                self.update_check_run(
                    &repo,
                    check,
                    &json!({ "status": "in_progress" }),
                    "github-actions[bot]",
                )?;
                self.emit_job(id, "in_progress");
            }
            "completed" => {
                let con = conclusion.unwrap_or("success");
                job.status = "completed".into();
                job.conclusion = Some(con.to_string());
                job.completed_at = Some(now);
                self.update_check_run(
                    &repo,
                    check,
                    &json!({ "conclusion": con }),
                    "github-actions[bot]",
                )?;
                self.emit_job(id, "completed");
            }
            _ => return Err(SandboxError::validation("WorkflowJob", "status", "invalid")),
        }
        Ok(())
    }

    /// Zips `files` into an artifact of the run, kept `retention_days`.
    pub(crate) fn add_artifact(
        &mut self,
        run_id: u64,
        name: &str,
        files: &[(String, Vec<u8>)],
        retention_days: i64,
    ) -> SResult<u64> {
        let run = self
            .runs
            .get(&run_id)
            .cloned()
            .ok_or_else(SandboxError::not_found)?;
        let zip = build_zip(files)
            .map_err(|e| SandboxError::unprocessable(format!("cannot build zip: {e}")))?;
        let digest = {
            use sha2::Digest;
            format!("sha256:{}", hex::encode(sha2::Sha256::digest(&zip)))
        };
        let id = self.ids.next("artifact");
        let now = self.now();
        self.artifacts.insert(
            id,
            Artifact {
                id,
                run_id,
                repo: run.repo,
                name: name.to_string(),
                zip: Arc::new(zip),
                digest,
                created_at: now,
                expires_at: now + Duration::days(retention_days),
                expired: false,
            },
        );
        Ok(id)
    }

    /// `POST /actions/workflows/{id}/dispatches`: starts a queued run.
    pub(crate) fn dispatch_workflow(
        &mut self,
        key: &str,
        workflow: &str,
        body: &Value,
        sender: &str,
    ) -> SResult<u64> {
        let wid = self.find_workflow(key, workflow)?;
        let git_ref = body
            .get("ref")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                SandboxError::validation("CreateWorkflowDispatch", "ref", "missing_field")
            })?
            .to_string();
        let inputs = body.get("inputs").cloned().unwrap_or_else(|| json!({}));
        let Some(map) = inputs.as_object() else {
            return Err(SandboxError::unprocessable(
                "For 'properties/inputs', \"...\" is not an object.",
            ));
        };
        if map.len() > 25 {
            return Err(SandboxError::unprocessable(
                "you may only define up to 25 `inputs` for a workflow_dispatch event",
            ));
        }
        let wf = self
            .repo(key)?
            .workflows
            .get(&wid)
            .cloned()
            .ok_or_else(SandboxError::not_found)?;
        if !wf.dispatchable {
            return Err(SandboxError::unprocessable(
                "Workflow does not have 'workflow_dispatch' trigger",
            ));
        }
        let branch = git_ref
            .strip_prefix("refs/heads/")
            .unwrap_or(&git_ref)
            .to_string();
        let sha = self
            .repo(key)?
            .branches
            .get(&branch)
            .cloned()
            .ok_or_else(|| SandboxError::unprocessable(format!("No ref found for: {git_ref}")))?;
        let title = match &wf.run_name {
            Some(t) => render_run_name(t, map),
            None => wf.name.clone(),
        };
        let (owner, name) = {
            let r = self.repo(key)?;
            (r.owner.clone(), r.name.clone())
        };
        let mut spec = RunSpec::new(&owner, &name, wf.file_name(), &sha)
            .event("workflow_dispatch")
            .branch(&branch)
            .title(&title)
            .actor(sender);
        spec.inputs = Some(inputs.clone());
        let run_id = self.create_run(spec)?;
        self.workflow_dispatches.push(WorkflowDispatch {
            repo: key.to_string(),
            workflow_id: wid,
            git_ref: git_ref.clone(),
            inputs: inputs.clone(),
            run_id,
        });
        let mut payload = obj(json!({ "ref": git_ref, "inputs": inputs, "workflow": wf.path }));
        payload.remove("action");
        self.emit("workflow_dispatch", key, sender, payload);
        Ok(run_id)
    }

    /// `POST /dispatches`.
    pub(crate) fn repository_dispatch(
        &mut self,
        key: &str,
        body: &Value,
        sender: &str,
    ) -> SResult<()> {
        let event_type = body
            .get("event_type")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty() && s.len() <= 100)
            .ok_or_else(|| {
                SandboxError::validation("RepositoryDispatch", "event_type", "missing_field")
            })?
            .to_string();
        let client_payload = body
            .get("client_payload")
            .cloned()
            .unwrap_or_else(|| json!({}));
        if !client_payload.is_object() {
            return Err(SandboxError::unprocessable(
                "client_payload must be an object",
            ));
        }
        if client_payload.as_object().is_some_and(|m| m.len() > 10) {
            return Err(SandboxError::unprocessable(
                "No more than 10 properties are allowed; 11 were supplied.",
            ));
        }
        let branch = self.repo(key)?.default_branch.clone();
        self.repository_dispatches.push(RepositoryDispatch {
            repo: key.to_string(),
            event_type: event_type.clone(),
            client_payload: client_payload.clone(),
        });
        let payload = obj(
            json!({ "action": event_type, "branch": branch, "client_payload": client_payload }),
        );
        self.emit("repository_dispatch", key, sender, payload);
        Ok(())
    }
}

/// Substitutes `${{ inputs.x }}` and `${{ github.event.inputs.x }}`.
fn render_run_name(template: &str, inputs: &Map<String, Value>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let expr = rest[start + 3..start + end].trim();
        let name = expr
            .strip_prefix("inputs.")
            .or_else(|| expr.strip_prefix("github.event.inputs."));
        if let Some(v) = name.and_then(|n| inputs.get(n)) {
            match v {
                Value::String(s) => out.push_str(s),
                other => out.push_str(&other.to_string()),
            }
        }
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    out
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

pub(crate) fn build_zip(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, zip::result::ZipError> {
    let mut cursor = std::io::Cursor::new(Vec::new());
    {
        let mut zw = zip::ZipWriter::new(&mut cursor);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::default());
        for (name, content) in files {
            zw.start_file(name.as_str(), opts)?;
            zw.write_all(content)?;
        }
        zw.finish()?;
    }
    Ok(cursor.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_name_substitutes_inputs() {
        let inputs = json!({ "sweep-id": "sw-12", "pr-number": 7 });
        let m = inputs.as_object().cloned().unwrap_or_default();
        assert_eq!(
            render_run_name(
                "Sweep ${{ inputs.sweep-id }} (PR #${{ github.event.inputs.pr-number }})",
                &m
            ),
            "Sweep sw-12 (PR #7)"
        );
        assert_eq!(render_run_name("no ${{ inputs.missing }}end", &m), "no end");
    }

    #[test]
    fn paths_are_validated() {
        assert!(normalize_path("a/../b").is_err());
        assert_eq!(normalize_path("/a/b/").ok().as_deref(), Some("a/b"));
    }
}
