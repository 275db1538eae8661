//! Check runs (create, update, output and annotations) and commit
//! statuses.
use super::obj;
use crate::state::{CheckRun, CommitStatus, SResult, SandboxError, World};
use serde_json::{Value, json};

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

impl World {
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
}
