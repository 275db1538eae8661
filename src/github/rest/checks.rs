//! Check runs (created, with annotations in batches, and listed per
//! commit) and commit statuses.
use super::{repo_path, seg_enc};
use crate::github::{Api, GitHubError};
use serde::Deserialize;
use serde_json::{Value, json};
use sweepgate_core::checks::snapshot::CheckRun;
use sweepgate_core::ids::RepoName;

/// GitHub takes at most 50 annotations per request.
pub(crate) const ANNOTATIONS_PER_REQUEST: usize = 50;

#[derive(Deserialize)]
struct Created {
    id: u64,
}

/// A finished check run's result.
pub(crate) struct CheckRunReport<'a> {
    pub name: &'a str,
    pub head_sha: &'a str,
    pub conclusion: &'a str,
    pub title: &'a str,
    pub summary: &'a str,
    pub annotations: &'a [Value],
}

#[derive(Deserialize)]
struct Runs {
    #[serde(default)]
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    conclusion: Option<String>,
    #[serde(default)]
    details_url: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
}

impl Api {
    /// Creates a completed check run on `head_sha`.
    pub(crate) async fn completed_check_run(
        &self,
        repo: &RepoName,
        name: &str,
        head_sha: &str,
        conclusion: &str,
        title: &str,
        summary: &str,
    ) -> Result<(), GitHubError> {
        let path = format!("{}/check-runs", repo_path(repo)?);
        let body = serde_json::json!({
            "name": name,
            "head_sha": head_sha,
            "status": "completed",
            "conclusion": conclusion,
            "output": { "title": title, "summary": summary },
        });
        self.send(http::Method::POST, &path, Some(&body)).await?;
        Ok(())
    }

    /// Creates a completed check run, sending `annotations` in batches of
    /// 50 (the first with the creation, the rest as updates, which
    /// GitHub appends).
    pub(crate) async fn check_run_with_annotations(
        &self,
        repo: &RepoName,
        report: &CheckRunReport<'_>,
    ) -> Result<u64, GitHubError> {
        let CheckRunReport {
            name,
            head_sha,
            conclusion,
            title,
            summary,
            annotations,
        } = *report;
        let base = repo_path(repo)?;
        let mut batches = annotations.chunks(ANNOTATIONS_PER_REQUEST);
        let first = batches.next().unwrap_or(&[]);
        let created: Created = self
            .post(
                &format!("{base}/check-runs"),
                &json!({
                    "name": name,
                    "head_sha": head_sha,
                    "status": "completed",
                    "conclusion": conclusion,
                    "output": { "title": title, "summary": summary, "annotations": first },
                }),
            )
            .await?;
        for batch in batches {
            let _: Value = self
                .patch(
                    &format!("{base}/check-runs/{}", created.id),
                    &json!({ "output": { "title": title, "summary": summary, "annotations": batch } }),
                )
                .await?;
        }
        Ok(created.id)
    }

    /// The latest check run per name on a commit (`filter=latest`).
    pub(crate) async fn latest_check_runs(
        &self,
        repo: &RepoName,
        sha: &str,
    ) -> Result<Vec<CheckRun>, GitHubError> {
        let path = format!(
            "{}/commits/{}/check-runs?filter=latest",
            repo_path(repo)?,
            seg_enc(sha)
        );
        let runs: Vec<Runs> = self.get_all(&path, Some("check_runs")).await?;
        Ok(runs
            .into_iter()
            .map(|r| CheckRun {
                name: r.name,
                status: r.status,
                conclusion: r.conclusion,
                details_url: r.details_url.or(r.html_url),
            })
            .collect())
    }

    /// Sets a commit status.
    pub(crate) async fn create_status(
        &self,
        repo: &RepoName,
        sha: &str,
        state: &str,
        context: &str,
        description: &str,
        target_url: Option<&str>,
    ) -> Result<(), GitHubError> {
        let path = format!("{}/statuses/{}", repo_path(repo)?, seg_enc(sha));
        let body = serde_json::json!({
            "state": state,
            "context": context,
            "description": description,
            "target_url": target_url,
        });
        self.send(http::Method::POST, &path, Some(&body)).await?;
        Ok(())
    }
}
