//! GitHub Actions: workflows, runs and re-runs, jobs, artifacts, and
//! workflow and repository dispatches.
use super::obj;
use crate::state::{
    ACTIONS_APP_ID, Artifact, Job, RepositoryDispatch, SResult, SandboxError, Workflow,
    WorkflowDispatch, WorkflowRun, World,
};
use chrono::Duration;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::sync::Arc;

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

impl World {
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
}
