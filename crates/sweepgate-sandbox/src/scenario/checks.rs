//! Check runs and commit statuses: creating them as GitHub Actions would,
//! and reading them back as tests see them.
use crate::state;
use crate::{Sandbox, SandboxError, key};
use serde_json::Value;

/// A check run as tests see it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRunView {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    pub annotations: Vec<Value>,
    pub app_id: u64,
}

/// A commit status as tests see it.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusView {
    pub sha: String,
    pub state: String,
    pub context: String,
    pub description: Option<String>,
    pub target_url: Option<String>,
    pub creator: String,
}

impl Sandbox {
    /// A check run created by GitHub Actions (not by the app).
    pub fn add_check_run(
        &self,
        owner: &str,
        repo: &str,
        sha: &str,
        name: &str,
        conclusion: Option<&str>,
    ) -> Result<u64, SandboxError> {
        let mut body = serde_json::json!({ "name": name, "head_sha": sha });
        if let (Some(c), Some(obj)) = (conclusion, body.as_object_mut()) {
            obj.insert("conclusion".into(), Value::String(c.into()));
        }
        self.world().create_check_run(
            &key(owner, repo),
            &body,
            state::ACTIONS_APP_ID,
            "github-actions[bot]",
        )
    }

    /// Creates a check run from a full REST body (`details_url`, status,
    /// output…) as GitHub Actions would.
    pub fn add_check_run_json(
        &self,
        owner: &str,
        repo: &str,
        body: &Value,
    ) -> Result<u64, SandboxError> {
        self.world().create_check_run(
            &key(owner, repo),
            body,
            state::ACTIONS_APP_ID,
            "github-actions[bot]",
        )
    }

    pub fn check_runs(&self, owner: &str, repo: &str, sha: &str) -> Vec<CheckRunView> {
        let k = key(owner, repo);
        self.world()
            .check_runs
            .values()
            .filter(|c| c.repo == k && c.head_sha == sha)
            .map(|c| CheckRunView {
                id: c.id,
                name: c.name.clone(),
                head_sha: c.head_sha.clone(),
                status: c.status.clone(),
                conclusion: c.conclusion.clone(),
                title: c.title.clone(),
                summary: c.summary.clone(),
                text: c.text.clone(),
                annotations: c.annotations.clone(),
                app_id: c.app_id,
            })
            .collect()
    }

    pub fn statuses(&self, owner: &str, repo: &str, sha: &str) -> Vec<StatusView> {
        let k = key(owner, repo);
        self.world()
            .statuses
            .iter()
            .filter(|s| s.repo == k && s.sha == sha)
            .map(|s| StatusView {
                sha: s.sha.clone(),
                state: s.state.clone(),
                context: s.context.clone(),
                description: s.description.clone(),
                target_url: s.target_url.clone(),
                creator: s.creator.clone(),
            })
            .collect()
    }
}
