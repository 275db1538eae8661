//! Pull requests: their facts, files, commits and label timeline, and
//! upstream pull requests with their files.
use super::repo_path;
use crate::github::{Api, GitHubError};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use sweepgate_core::checks::snapshot::{ChangedFile, Commit, UpstreamPr};
use sweepgate_core::ids::{PrNumber, RepoName};
use sweepgate_core::sweep::runs::LabelEvent;

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PrFile {
    pub filename: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub patch: Option<String>,
    #[serde(default)]
    pub previous_filename: Option<String>,
}

/// A pull request's facts the sweep handlers need.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PullFacts {
    pub number: PrNumber,
    #[serde(default)]
    pub state: String,
    pub head: Ref,
    pub base: Ref,
    #[serde(default)]
    pub labels: Vec<Label>,
    #[serde(default)]
    pub user: Option<super::Login>,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub draft: bool,
    /// GitHub's time of the PR's last change.
    #[serde(default)]
    pub updated_at: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Ref {
    #[serde(rename = "ref", default)]
    pub name: String,
    #[serde(default)]
    pub sha: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Label {
    pub name: String,
}

#[derive(Deserialize)]
struct TimelineEvent {
    #[serde(default)]
    event: String,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    label: Option<LabelName>,
    #[serde(default)]
    actor: Option<super::Login>,
}

#[derive(Deserialize)]
struct LabelName {
    name: String,
}

#[derive(Deserialize)]
struct Sha {
    sha: String,
}

/// The most commits GitHub lists for a pull request.
const PR_COMMITS_LISTED: usize = 250;

#[derive(Deserialize)]
struct PrCommit {
    sha: String,
    commit: Message,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct UpstreamPull {
    number: u64,
    #[serde(default)]
    state: String,
    #[serde(default)]
    merged: Option<bool>,
    #[serde(default)]
    merged_at: Option<String>,
    #[serde(default)]
    draft: Option<bool>,
    #[serde(default)]
    html_url: String,
}

impl Api {
    pub(crate) async fn pull(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<PullFacts, GitHubError> {
        let path = format!("{}/pulls/{pr}", repo_path(repo)?);
        self.get(&path).await
    }

    pub(crate) async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullFacts>, GitHubError> {
        let path = format!("{}/pulls?state=open", repo_path(repo)?);
        self.get_all(&path, None).await
    }

    /// The files of a pull request (GitHub lists at most 3,000).
    pub(crate) async fn pr_files(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Vec<PrFile>, GitHubError> {
        let path = format!("{}/pulls/{pr}/files", repo_path(repo)?);
        self.get_all(&path, None).await
    }

    /// Every commit sha of the PR.
    pub(crate) async fn pr_commit_shas(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Vec<String>, GitHubError> {
        Ok(self
            .all_pr_commits(repo, pr)
            .await?
            .into_iter()
            .map(|c| c.sha)
            .collect())
    }

    /// The PR's commits, oldest first. GitHub lists at most 250 commits of
    /// a PR; for a longer one the head's history is read back to the
    /// merge base with the base branch (issue 18, item 14).
    async fn all_pr_commits(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Vec<PrCommit>, GitHubError> {
        let path = format!("{}/pulls/{pr}/commits", repo_path(repo)?);
        let listed: Vec<PrCommit> = self.get_all(&path, None).await?;
        if listed.len() < PR_COMMITS_LISTED {
            return Ok(listed);
        }
        #[derive(Deserialize)]
        struct Compare {
            merge_base_commit: Sha,
        }
        let pull = self.pull(repo, pr).await?;
        let compare: Compare = self
            .get(&format!(
                "{}/compare/{}...{}",
                repo_path(repo)?,
                super::enc(&pull.base.sha),
                super::enc(&pull.head.sha)
            ))
            .await?;
        let base = compare.merge_base_commit.sha;
        let history = format!(
            "{}/commits?sha={}",
            repo_path(repo)?,
            super::enc(&pull.head.sha)
        );
        let mut commits: Vec<PrCommit> = self
            .get_until(&history, None, |c: &PrCommit| c.sha == base)
            .await?;
        commits.reverse();
        Ok(commits)
    }

    /// The PR's commits with their messages, oldest first.
    pub(crate) async fn pr_commits(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Vec<Commit>, GitHubError> {
        let c = self.all_pr_commits(repo, pr).await?;
        Ok(c.into_iter()
            .map(|c| Commit {
                sha: c.sha,
                message: c.commit.message,
            })
            .collect())
    }

    /// The PR's label events, for "which labels did it carry then".
    pub(crate) async fn label_events(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError> {
        let path = format!("{}/issues/{pr}/timeline", repo_path(repo)?);
        let events: Vec<TimelineEvent> = self.get_all(&path, None).await?;
        Ok(events
            .into_iter()
            .filter_map(|e| {
                let added = match e.event.as_str() {
                    "labeled" => true,
                    "unlabeled" => false,
                    _ => return None,
                };
                Some(LabelEvent {
                    at: e.created_at?,
                    label: e.label?.name,
                    added,
                    actor: e.actor.map(|a| a.login),
                })
            })
            .collect())
    }

    /// An upstream pull request with its files; `None` when the API
    /// does not show it.
    pub(crate) async fn upstream_pull(
        &self,
        repo: &RepoName,
        number: u64,
    ) -> Result<Option<UpstreamPr>, GitHubError> {
        let path = format!("{}/pulls/{number}", repo_path(repo)?);
        let Some(p) = self.get_opt::<UpstreamPull>(&path).await? else {
            return Ok(None);
        };
        let files = self
            .pr_files(repo, PrNumber(number))
            .await?
            .into_iter()
            .map(|f| ChangedFile {
                path: f.filename,
                previous_path: f.previous_filename,
                status: f.status,
                patch: f.patch,
            })
            .collect();
        Ok(Some(UpstreamPr {
            repo: repo.to_string(),
            number: p.number,
            state: p.state,
            merged: p.merged.unwrap_or(false) || p.merged_at.is_some(),
            merged_at: p.merged_at,
            draft: p.draft.unwrap_or(false),
            url: p.html_url,
            files,
        }))
    }
}
