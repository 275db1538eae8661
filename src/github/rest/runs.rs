//! Actions workflow runs: their facts and jobs, and starting, finding and
//! cancelling sweep runs (`dispatch` mode).
use super::{repo_path, seg_enc};
use crate::github::{Api, GitHubError};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};
use sweepgate_core::ids::{RepoName, RunId};
use sweepgate_core::sweep::results::JobFacts;
use sweepgate_core::sweep::runs::RunFacts;

#[derive(Deserialize)]
struct Run {
    id: RunId,
    #[serde(default)]
    event: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    conclusion: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    head_sha: String,
    #[serde(default)]
    head_branch: Option<String>,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    run_started_at: Option<DateTime<Utc>>,
    #[serde(default)]
    run_attempt: Option<u64>,
    #[serde(default)]
    html_url: String,
    #[serde(default)]
    pull_requests: Vec<Num>,
}

#[derive(Deserialize)]
struct Num {
    number: u64,
}

impl From<Run> for RunFacts {
    fn from(r: Run) -> Self {
        RunFacts {
            id: r.id,
            event: r.event,
            status: r.status.unwrap_or_default(),
            conclusion: r.conclusion,
            path: r.path,
            head_sha: r.head_sha,
            head_branch: r.head_branch,
            created_at: r.created_at.or(r.run_started_at).unwrap_or_default(),
            run_attempt: r.run_attempt.unwrap_or(1),
            html_url: r.html_url,
            pull_requests: r.pull_requests.into_iter().map(|p| p.number).collect(),
        }
    }
}

#[derive(Deserialize)]
struct Job {
    #[serde(default)]
    name: String,
    #[serde(default)]
    conclusion: Option<String>,
}

#[derive(Deserialize)]
struct RunDetails {
    workflow_run_id: RunId,
}

#[derive(Deserialize)]
struct TitledRun {
    id: RunId,
    #[serde(default)]
    display_title: String,
}

impl Api {
    pub(crate) async fn workflow_run(
        &self,
        repo: &RepoName,
        run: RunId,
    ) -> Result<Option<RunFacts>, GitHubError> {
        let path = format!("{}/actions/runs/{run}", repo_path(repo)?);
        Ok(self.get_opt::<Run>(&path).await?.map(RunFacts::from))
    }

    /// Completed runs of `workflow` on `branch`, newest first.
    pub(crate) async fn completed_runs(
        &self,
        repo: &RepoName,
        workflow: &str,
        branch: &str,
    ) -> Result<Vec<RunFacts>, GitHubError> {
        let path = format!(
            "{}/actions/workflows/{}/runs?branch={}&status=completed",
            repo_path(repo)?,
            seg_enc(workflow),
            seg_enc(branch)
        );
        // No such workflow (yet): no runs, not an error.
        let runs: Vec<Run> = match self.get_all(&path, Some("workflow_runs")).await {
            Err(e) if e.is_not_found() => Vec::new(),
            other => other?,
        };
        let mut runs: Vec<RunFacts> = runs.into_iter().map(RunFacts::from).collect();
        runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(runs)
    }

    /// The jobs of the run's latest attempt.
    pub(crate) async fn run_jobs(
        &self,
        repo: &RepoName,
        run: RunId,
    ) -> Result<Vec<JobFacts>, GitHubError> {
        let path = format!("{}/actions/runs/{run}/jobs?filter=latest", repo_path(repo)?);
        let jobs: Vec<Job> = self.get_all(&path, Some("jobs")).await?;
        Ok(jobs
            .into_iter()
            .map(|j| JobFacts {
                name: j.name,
                conclusion: j.conclusion,
            })
            .collect())
    }

    /// `workflow_dispatch` on `git_ref`; the run id when GitHub returns
    /// the run's details.
    pub(crate) async fn workflow_dispatch(
        &self,
        repo: &RepoName,
        workflow: &str,
        git_ref: &str,
        inputs: &Value,
    ) -> Result<Option<RunId>, GitHubError> {
        let path = format!(
            "{}/actions/workflows/{}/dispatches",
            repo_path(repo)?,
            seg_enc(workflow)
        );
        let body = json!({ "ref": git_ref, "inputs": inputs, "return_run_details": true });
        let resp = self.send(http::Method::POST, &path, Some(&body)).await?;
        if resp.body.is_empty() {
            return Ok(None);
        }
        Ok(resp
            .json::<RunDetails>(&path)
            .ok()
            .map(|d| d.workflow_run_id))
    }

    /// The dispatched run whose title names `needle` (the sweep id).
    pub(crate) async fn dispatched_run_titled(
        &self,
        repo: &RepoName,
        workflow: &str,
        needle: &str,
    ) -> Result<Option<RunId>, GitHubError> {
        let path = format!(
            "{}/actions/workflows/{}/runs?event=workflow_dispatch",
            repo_path(repo)?,
            seg_enc(workflow)
        );
        let runs: Vec<TitledRun> = match self.get_all(&path, Some("workflow_runs")).await {
            Err(e) if e.is_not_found() => Vec::new(),
            other => other?,
        };
        Ok(runs
            .into_iter()
            .find(|r| r.display_title.contains(needle))
            .map(|r| r.id))
    }

    /// Cancels a run; one that already finished (409) is left alone.
    pub(crate) async fn cancel_run(
        &self,
        repo: &RepoName,
        run: RunId,
    ) -> Result<bool, GitHubError> {
        let path = format!("{}/actions/runs/{run}/cancel", repo_path(repo)?);
        match self.send(http::Method::POST, &path, Some(&json!({}))).await {
            Ok(_) => Ok(true),
            Err(GitHubError::Status { status: 409, .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// A run as GitHub serves it (the timer rebuilds a lost
    /// `workflow_run` delivery from it).
    pub(crate) async fn run_json(
        &self,
        repo: &RepoName,
        run: RunId,
    ) -> Result<Option<Value>, GitHubError> {
        let path = format!("{}/actions/runs/{run}", repo_path(repo)?);
        self.get_opt(&path).await
    }
}
