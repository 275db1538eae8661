//! GitHub Actions: workflows, runs, jobs and artifacts.
use super::{node_id, url_escape};
use crate::state::{World, ts};
use serde_json::{Value, json};

impl World {
    pub(crate) fn workflow_json(&self, key: &str, id: u64) -> Value {
        let Some(repo) = self.repos.get(key) else {
            return Value::Null;
        };
        let Some(w) = repo.workflows.get(&id) else {
            return Value::Null;
        };
        let full = repo.full_name();
        json!({
            "id": w.id,
            "node_id": node_id("Workflow", w.id),
            "name": w.name,
            "path": w.path,
            "state": w.state,
            "created_at": ts(w.created_at),
            "updated_at": ts(w.created_at),
            "url": format!("{}/repos/{full}/actions/workflows/{}", self.api(), w.id),
            "html_url": format!("{}/{full}/blob/{}/{}", self.html(), repo.default_branch, w.path),
            "badge_url": format!("{}/{full}/workflows/{}/badge.svg", self.html(), url_escape(&w.name)),
        })
    }

    pub(crate) fn run_json(&self, id: u64) -> Value {
        let Some(r) = self.runs.get(&id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&r.repo)
            .map(|x| x.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}/actions/runs/{}", self.api(), r.id);
        let path = self
            .repos
            .get(&r.repo)
            .and_then(|x| x.workflows.get(&r.workflow_id))
            .map(|w| w.path.clone())
            .unwrap_or_default();
        let head_commit = self.objects.commit(&r.head_sha).map(|c| {
            json!({
                "id": c.sha,
                "tree_id": c.tree,
                "message": c.message,
                "timestamp": ts(c.committer.date),
                "author": { "name": c.author.name, "email": c.author.email },
                "committer": { "name": c.committer.name, "email": c.committer.email },
            })
        });
        json!({
            "id": r.id,
            "name": r.name,
            "node_id": node_id("WorkflowRun", r.id),
            "check_suite_id": r.check_suite_id,
            "check_suite_node_id": node_id("CheckSuite", r.check_suite_id),
            "head_branch": r.head_branch,
            "head_sha": r.head_sha,
            "path": format!("{path}@{}", r.head_branch),
            "run_number": r.run_number,
            "event": r.event,
            "display_title": r.display_title,
            "status": r.status,
            "conclusion": r.conclusion,
            "workflow_id": r.workflow_id,
            "url": api,
            "html_url": format!("{}/{full}/actions/runs/{}", self.html(), r.id),
            "pull_requests": r.pull_requests.iter().map(|n| self.pr_mini(&r.repo, *n)).collect::<Vec<_>>(),
            "created_at": ts(r.created_at),
            "updated_at": ts(r.updated_at),
            "actor": self.user_json(&r.actor),
            "run_attempt": r.run_attempt,
            "referenced_workflows": [],
            "run_started_at": ts(r.run_started_at),
            "triggering_actor": self.user_json(&r.triggering_actor),
            "jobs_url": format!("{api}/jobs"),
            "logs_url": format!("{api}/logs"),
            "check_suite_url": format!("{}/repos/{full}/check-suites/{}", self.api(), r.check_suite_id),
            "artifacts_url": format!("{api}/artifacts"),
            "cancel_url": format!("{api}/cancel"),
            "rerun_url": format!("{api}/rerun"),
            "previous_attempt_url": if r.run_attempt > 1 { json!(format!("{api}/attempts/{}", r.run_attempt - 1)) } else { Value::Null },
            "workflow_url": format!("{}/repos/{full}/actions/workflows/{}", self.api(), r.workflow_id),
            "head_commit": head_commit,
            "repository": self.repo_json(&r.repo),
            "head_repository": self.repo_json(&r.head_repo),
        })
    }

    pub(crate) fn job_json(&self, id: u64) -> Value {
        let Some(j) = self.jobs.get(&id) else {
            return Value::Null;
        };
        let Some(r) = self.runs.get(&j.run_id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&r.repo)
            .map(|x| x.full_name())
            .unwrap_or_default();
        let steps = vec![json!({
            "name": "Set up job",
            "status": if j.status == "queued" { "queued" } else { "completed" },
            "conclusion": if j.status == "queued" { Value::Null } else { json!("success") },
            "number": 1,
            "started_at": ts(j.started_at),
            "completed_at": ts(j.started_at),
        })];
        json!({
            "id": j.id,
            "run_id": j.run_id,
            "run_url": format!("{}/repos/{full}/actions/runs/{}", self.api(), j.run_id),
            "run_attempt": j.run_attempt,
            "node_id": node_id("CheckRun", j.id),
            "head_sha": r.head_sha,
            "url": format!("{}/repos/{full}/actions/jobs/{}", self.api(), j.id),
            "html_url": format!("{}/{full}/actions/runs/{}/job/{}", self.html(), j.run_id, j.id),
            "status": j.status,
            "conclusion": j.conclusion,
            "created_at": ts(j.created_at),
            "started_at": ts(j.started_at),
            "completed_at": j.completed_at.map(ts),
            "name": j.name,
            "steps": steps,
            "check_run_url": format!("{}/repos/{full}/check-runs/{}", self.api(), j.check_run_id),
            "labels": j.labels,
            "runner_id": j.runner_name.as_ref().map(|_| 1),
            "runner_name": j.runner_name,
            "runner_group_id": j.runner_name.as_ref().map(|_| 1),
            "runner_group_name": j.runner_name.as_ref().map(|_| "Default"),
            "workflow_name": r.name,
            "head_branch": r.head_branch,
        })
    }

    pub(crate) fn artifact_json(&self, id: u64) -> Value {
        let Some(a) = self.artifacts.get(&id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&a.repo)
            .map(|x| x.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}/actions/artifacts/{}", self.api(), a.id);
        let run = self.runs.get(&a.run_id);
        let repo_id = self.repos.get(&a.repo).map(|r| r.id).unwrap_or(0);
        json!({
            "id": a.id,
            "node_id": node_id("Artifact", a.id),
            "name": a.name,
            "size_in_bytes": a.zip.len(),
            "url": api,
            "archive_download_url": format!("{api}/zip"),
            "expired": a.expired,
            "created_at": ts(a.created_at),
            "expires_at": ts(a.expires_at),
            "updated_at": ts(a.created_at),
            "digest": a.digest,
            "workflow_run": {
                "id": a.run_id,
                "repository_id": repo_id,
                "head_repository_id": run.and_then(|r| self.repos.get(&r.head_repo)).map(|r| r.id).unwrap_or(repo_id),
                "head_branch": run.map(|r| r.head_branch.clone()),
                "head_sha": run.map(|r| r.head_sha.clone()),
            },
        })
    }
}
