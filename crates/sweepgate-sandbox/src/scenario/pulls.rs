//! Pull requests and their conversation: opening them, the `Pr` handle,
//! comments, labels and reviews, and the comments as tests see them.
use crate::state;
use crate::{Change, PullRequestSpec, Sandbox, SandboxError, key};

/// A comment as tests see it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommentView {
    pub id: u64,
    pub user: String,
    pub author_association: String,
    pub body: String,
    pub by_app: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl Sandbox {
    pub fn open_pr(&self, spec: PullRequestSpec) -> Result<Pr, SandboxError> {
        let (owner, repo) = (spec.owner.clone(), spec.repo.clone());
        let number = self.world().open_pr(spec)?;
        Ok(Pr {
            sandbox: self.clone(),
            owner,
            repo,
            number,
        })
    }

    /// A handle to an existing PR.
    pub fn pr(&self, owner: &str, repo: &str, number: u64) -> Pr {
        Pr {
            sandbox: self.clone(),
            owner: owner.into(),
            repo: repo.into(),
            number,
        }
    }

    pub fn post_comment(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        user: &str,
        association: &str,
        body: &str,
    ) -> Result<u64, SandboxError> {
        self.world()
            .add_comment(&key(owner, repo), number, user, association, body, false)
    }

    /// Sends a delivery of `event` with `payload` as GitHub would (with
    /// `repository`, `sender` and `installation` added): for shapes the
    /// sandbox's own operations never produce, such as the `null`s real
    /// GitHub sends for a run's `pull_requests`, a `repository_dispatch`'s
    /// `client_payload` or a `workflow_job`'s label items.
    pub fn send_event(
        &self,
        owner: &str,
        repo: &str,
        event: &str,
        sender: &str,
        payload: serde_json::Value,
    ) -> Result<(), SandboxError> {
        let serde_json::Value::Object(map) = payload else {
            return Err(SandboxError::unprocessable("a payload is a JSON object"));
        };
        let key = key(owner, repo);
        let mut w = self.world();
        w.repo(&key)?;
        w.emit(event, &key, sender, map);
        Ok(())
    }

    /// Edits a comment as `sender` (sends `issue_comment` `edited`).
    pub fn edit_comment(
        &self,
        comment_id: u64,
        sender: &str,
        body: &str,
    ) -> Result<(), SandboxError> {
        self.world().edit_comment(comment_id, body, sender)
    }

    pub(crate) fn add_label(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        label: &str,
        by: &str,
    ) -> Result<(), SandboxError> {
        self.world()
            .add_labels(&key(owner, repo), number, &[label.to_string()], by)
    }

    pub(crate) fn remove_label(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        label: &str,
        by: &str,
    ) -> Result<(), SandboxError> {
        self.world()
            .remove_label(&key(owner, repo), number, label, by)
    }

    pub fn comments(&self, owner: &str, repo: &str, number: u64) -> Vec<CommentView> {
        let k = key(owner, repo);
        self.world()
            .comments
            .values()
            .filter(|c| c.repo == k && c.number == number)
            .map(|c| CommentView {
                id: c.id,
                user: c.user.clone(),
                author_association: c.author_association.clone(),
                body: c.body.clone(),
                by_app: c.via_app,
                created_at: state::ts(c.created_at),
                updated_at: state::ts(c.updated_at),
            })
            .collect()
    }

    /// The comments the app posted on a PR.
    pub fn bot_comments(&self, owner: &str, repo: &str, number: u64) -> Vec<CommentView> {
        self.comments(owner, repo, number)
            .into_iter()
            .filter(|c| c.by_app)
            .collect()
    }

    pub(crate) fn labels(&self, owner: &str, repo: &str, number: u64) -> Vec<String> {
        self.world()
            .issue(&key(owner, repo), number)
            .map(|i| i.labels.clone())
            .unwrap_or_default()
    }
}

/// A handle to one pull request, for fluent scenarios.
#[derive(Clone)]
pub struct Pr {
    sandbox: Sandbox,
    pub owner: String,
    pub repo: String,
    pub number: u64,
}

impl Pr {
    pub fn number(&self) -> u64 {
        self.number
    }

    fn key(&self) -> String {
        key(&self.owner, &self.repo)
    }

    pub fn head_sha(&self) -> Option<String> {
        let w = self.sandbox.world();
        w.pull(&self.key(), self.number)
            .ok()
            .map(|(_, p)| p.head_sha.clone())
    }

    pub fn head_ref(&self) -> Option<String> {
        let w = self.sandbox.world();
        w.pull(&self.key(), self.number)
            .ok()
            .map(|(_, p)| p.head_ref.clone())
    }

    /// A comment by `user` with `association` (OWNER, MEMBER, COLLABORATOR,
    /// CONTRIBUTOR, NONE …); returns the comment id.
    pub fn post_comment(
        &self,
        user: &str,
        association: &str,
        body: &str,
    ) -> Result<u64, SandboxError> {
        self.sandbox.post_comment(
            &self.owner,
            &self.repo,
            self.number,
            user,
            association,
            body,
        )
    }

    pub fn add_label(&self, label: &str, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .add_label(&self.owner, &self.repo, self.number, label, by)
    }

    pub fn remove_label(&self, label: &str, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .remove_label(&self.owner, &self.repo, self.number, label, by)
    }

    /// Pushes a commit to the PR's head branch (sends `synchronize`).
    pub fn push(&self, changes: &[Change], message: &str) -> Result<String, SandboxError> {
        let mut w = self.sandbox.world();
        let (issue, pull) = w.pull(&self.key(), self.number)?;
        let (head_repo, head_ref, author) = (
            pull.head_repo.clone(),
            pull.head_ref.clone(),
            issue.user.clone(),
        );
        w.commit_on(&head_repo, &head_ref, changes, message, &author)
    }

    pub fn ready_for_review(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .set_draft(&self.key(), self.number, false, by)
    }

    pub fn convert_to_draft(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .set_draft(&self.key(), self.number, true, by)
    }

    pub fn merge(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox.world().merge_pr(&self.key(), self.number, by)
    }

    pub fn close(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .set_pr_state(&self.key(), self.number, false, by)
    }

    pub fn reopen(&self, by: &str) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .set_pr_state(&self.key(), self.number, true, by)
    }

    pub fn edit(
        &self,
        title: Option<&str>,
        body: Option<&str>,
        by: &str,
    ) -> Result<(), SandboxError> {
        self.sandbox
            .world()
            .edit_pr(&self.key(), self.number, title, body, by)
    }

    /// A review (`APPROVE`, `REQUEST_CHANGES`, `COMMENT`); returns its id.
    pub fn submit_review(
        &self,
        user: &str,
        association: &str,
        event: &str,
        body: &str,
    ) -> Result<u64, SandboxError> {
        self.sandbox.world().submit_review(
            &self.key(),
            self.number,
            user,
            association,
            event,
            body,
            None,
            &[],
        )
    }

    pub fn comments(&self) -> Vec<CommentView> {
        self.sandbox.comments(&self.owner, &self.repo, self.number)
    }

    pub fn bot_comments(&self) -> Vec<CommentView> {
        self.sandbox
            .bot_comments(&self.owner, &self.repo, self.number)
    }

    pub fn labels(&self) -> Vec<String> {
        self.sandbox.labels(&self.owner, &self.repo, self.number)
    }
}
