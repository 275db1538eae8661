//! Pull requests: opening, drafts, closing and merging, edits, their
//! files, commits and stats, and reviews.
use super::obj;
use crate::git::FileChange;
use crate::state::{
    Issue, PullState, Review, ReviewComment, SResult, SandboxError, TimelineItem, World,
};
use serde_json::{Map, Value, json};

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

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PrStats {
    pub commits: usize,
    pub additions: usize,
    pub deletions: usize,
    pub changed_files: usize,
}

impl World {
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

    pub(super) fn emit_pr(
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

    pub(super) fn push_event(
        &mut self,
        key: &str,
        number: u64,
        event: &str,
        actor: &str,
        extra: Value,
    ) {
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
}
