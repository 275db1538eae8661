//! Check runs and commit statuses.
use super::node_id;
use crate::state::{ACTIONS_APP_ID, World, ts};
use serde_json::{Value, json};

impl World {
    pub(crate) fn check_run_json(&self, id: u64) -> Value {
        let Some(c) = self.check_runs.get(&id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&c.repo)
            .map(|r| r.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}", self.api());
        let app = if c.app_id == ACTIONS_APP_ID {
            self.actions_app_json()
        } else {
            self.app_json()
        };
        let prs: Vec<Value> = self
            .prs_for_sha(&c.repo, &c.head_sha)
            .into_iter()
            .map(|n| self.pr_mini(&c.repo, n))
            .collect();
        json!({
            "id": c.id,
            "head_sha": c.head_sha,
            "node_id": node_id("CheckRun", c.id),
            "external_id": c.external_id,
            "url": format!("{api}/check-runs/{}", c.id),
            "html_url": format!("{}/{full}/runs/{}", self.html(), c.id),
            "details_url": c.details_url.clone().unwrap_or_else(|| format!("{}/{full}/runs/{}", self.html(), c.id)),
            "status": c.status,
            "conclusion": c.conclusion,
            "started_at": ts(c.started_at),
            "completed_at": c.completed_at.map(ts),
            "output": {
                "title": c.title,
                "summary": c.summary,
                "text": c.text,
                "annotations_count": c.annotations.len(),
                "annotations_url": format!("{api}/check-runs/{}/annotations", c.id),
            },
            "name": c.name,
            "check_suite": { "id": c.suite_id },
            "app": app,
            "pull_requests": prs,
        })
    }

    pub(crate) fn status_json(&self, s: &crate::state::CommitStatus) -> Value {
        let full = self
            .repos
            .get(&s.repo)
            .map(|r| r.full_name())
            .unwrap_or_default();
        json!({
            "url": format!("{}/repos/{full}/statuses/{}", self.api(), s.sha),
            "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", self.account_or_stub(&s.creator).id),
            "id": s.id,
            "node_id": node_id("StatusContext", s.id),
            "state": s.state,
            "description": s.description,
            "target_url": s.target_url,
            "context": s.context,
            "created_at": ts(s.created_at),
            "updated_at": ts(s.created_at),
            "creator": self.user_json(&s.creator),
        })
    }
}
