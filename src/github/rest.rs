//! Typed helpers for the REST endpoints sweepgate calls. Paths are built
//! here and nowhere else.
use super::{Api, GitHubError};
use crate::ids::{CommentId, PrNumber, RepoName};
use base64::Engine;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Clone, Deserialize)]
pub struct Login {
    #[serde(default)]
    pub login: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct IssueComment {
    pub id: CommentId,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub user: Option<Login>,
    #[serde(default)]
    pub html_url: Option<String>,
}

impl IssueComment {
    pub fn body(&self) -> &str {
        self.body.as_deref().unwrap_or("")
    }

    pub fn author(&self) -> &str {
        self.user.as_ref().map_or("", |u| u.login.as_str())
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct PrFile {
    pub filename: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub patch: Option<String>,
    #[serde(default)]
    pub previous_filename: Option<String>,
}

/// The collaborator permission API's answer.
#[derive(Debug, Clone, Deserialize)]
pub struct Permission {
    #[serde(default)]
    pub permission: String,
    #[serde(default)]
    pub role_name: Option<String>,
}

fn repo_path(repo: &RepoName) -> Result<String, GitHubError> {
    let (o, r) = repo
        .parts()
        .ok_or_else(|| GitHubError::Config(format!("`{repo}` is not owner/name")))?;
    Ok(format!("/repos/{}/{}", enc(o), enc(r)))
}

/// Percent-encodes one path segment.
pub(super) fn seg_enc(s: &str) -> String {
    enc(s)
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// Encodes a file path, keeping its slashes.
fn enc_path(p: &str) -> String {
    p.split('/').map(enc).collect::<Vec<_>>().join("/")
}

impl Api {
    pub async fn issue_comments(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Vec<IssueComment>, GitHubError> {
        let path = format!("{}/issues/{pr}/comments", repo_path(repo)?);
        self.get_all(&path, None).await
    }

    pub async fn create_comment(
        &self,
        repo: &RepoName,
        pr: PrNumber,
        body: &str,
    ) -> Result<IssueComment, GitHubError> {
        let path = format!("{}/issues/{pr}/comments", repo_path(repo)?);
        self.post(&path, &json!({ "body": body })).await
    }

    pub async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<IssueComment, GitHubError> {
        let path = format!("{}/issues/comments/{id}", repo_path(repo)?);
        self.patch(&path, &json!({ "body": body })).await
    }

    /// The files of a pull request (GitHub lists at most 3,000).
    pub async fn pr_files(
        &self,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Vec<PrFile>, GitHubError> {
        let path = format!("{}/pulls/{pr}/files", repo_path(repo)?);
        self.get_all(&path, None).await
    }

    pub async fn collaborator_permission(
        &self,
        repo: &RepoName,
        user: &str,
    ) -> Result<Option<Permission>, GitHubError> {
        let path = format!(
            "{}/collaborators/{}/permission",
            repo_path(repo)?,
            enc(user)
        );
        self.get_opt(&path).await
    }

    /// A file's bytes at `reference`, `None` when it does not exist.
    pub async fn file_at(
        &self,
        repo: &RepoName,
        path: &str,
        reference: &str,
    ) -> Result<Option<Vec<u8>>, GitHubError> {
        #[derive(Deserialize)]
        struct Contents {
            #[serde(default)]
            content: String,
            #[serde(default)]
            encoding: String,
        }
        let url = format!(
            "{}/contents/{}?ref={}",
            repo_path(repo)?,
            enc_path(path),
            enc(reference)
        );
        let Some(c) = self.get_opt::<Contents>(&url).await? else {
            return Ok(None);
        };
        if c.encoding != "base64" {
            return Err(GitHubError::Decode {
                path: url,
                message: format!("unexpected encoding `{}`", c.encoding),
            });
        }
        let clean: String = c.content.chars().filter(|ch| !ch.is_whitespace()).collect();
        base64::engine::general_purpose::STANDARD
            .decode(clean)
            .map(Some)
            .map_err(|e| GitHubError::Decode {
                path: url,
                message: e.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_encoded() {
        assert_eq!(enc_path("a b/c#d.yaml"), "a%20b/c%23d.yaml");
        assert_eq!(repo_path(&RepoName::new("o", "r")).unwrap(), "/repos/o/r");
        assert!(repo_path(&RepoName("bad".into())).is_err());
    }
}

/// The Actions and pull-request facts the sweep handlers read.
pub mod actions {
    use super::{Api, GitHubError, repo_path, seg_enc};
    use crate::ids::{PrNumber, RepoName, RunId};
    use crate::sweep::results::JobFacts;
    use crate::sweep::runs::{ArtifactFacts, LabelEvent, RunFacts};
    use chrono::{DateTime, Utc};
    use serde::Deserialize;

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
    struct Artifact {
        name: String,
        #[serde(default)]
        expired: bool,
    }

    #[derive(Deserialize)]
    struct Job {
        #[serde(default)]
        name: String,
        #[serde(default)]
        conclusion: Option<String>,
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

    /// A pull request's facts the sweep handlers need.
    #[derive(Debug, Clone, Deserialize)]
    pub struct PullFacts {
        pub number: PrNumber,
        #[serde(default)]
        pub state: String,
        pub head: Ref,
        pub base: Ref,
        #[serde(default)]
        pub labels: Vec<Label>,
        #[serde(default)]
        pub user: Option<super::Login>,
    }

    #[derive(Debug, Clone, Deserialize)]
    pub struct Ref {
        #[serde(rename = "ref", default)]
        pub name: String,
        #[serde(default)]
        pub sha: String,
    }

    #[derive(Debug, Clone, Deserialize)]
    pub struct Label {
        pub name: String,
    }

    impl Api {
        pub async fn workflow_run(
            &self,
            repo: &RepoName,
            run: RunId,
        ) -> Result<Option<RunFacts>, GitHubError> {
            let path = format!("{}/actions/runs/{run}", repo_path(repo)?);
            Ok(self.get_opt::<Run>(&path).await?.map(RunFacts::from))
        }

        /// Completed runs of `workflow` on `branch`, newest first.
        pub async fn completed_runs(
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

        pub async fn run_artifacts(
            &self,
            repo: &RepoName,
            run: RunId,
        ) -> Result<Vec<ArtifactFacts>, GitHubError> {
            let path = format!("{}/actions/runs/{run}/artifacts", repo_path(repo)?);
            let a: Vec<Artifact> = self.get_all(&path, Some("artifacts")).await?;
            Ok(a.into_iter()
                .map(|a| ArtifactFacts {
                    name: a.name,
                    expired: a.expired,
                })
                .collect())
        }

        /// The jobs of the run's latest attempt.
        pub async fn run_jobs(
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

        pub async fn pull(&self, repo: &RepoName, pr: PrNumber) -> Result<PullFacts, GitHubError> {
            let path = format!("{}/pulls/{pr}", repo_path(repo)?);
            self.get(&path).await
        }

        pub async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullFacts>, GitHubError> {
            let path = format!("{}/pulls?state=open", repo_path(repo)?);
            self.get_all(&path, None).await
        }

        /// Every commit sha of the PR.
        pub async fn pr_commit_shas(
            &self,
            repo: &RepoName,
            pr: PrNumber,
        ) -> Result<Vec<String>, GitHubError> {
            let path = format!("{}/pulls/{pr}/commits", repo_path(repo)?);
            let shas: Vec<Sha> = self.get_all(&path, None).await?;
            Ok(shas.into_iter().map(|s| s.sha).collect())
        }

        /// The PR's label events, for "which labels did it carry then".
        pub async fn label_events(
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

        /// The full message of a commit.
        pub async fn commit_message(
            &self,
            repo: &RepoName,
            sha: &str,
        ) -> Result<String, GitHubError> {
            #[derive(Deserialize)]
            struct C {
                commit: M,
            }
            #[derive(Deserialize)]
            struct M {
                #[serde(default)]
                message: String,
            }
            let path = format!("{}/commits/{}", repo_path(repo)?, seg_enc(sha));
            Ok(self.get::<C>(&path).await?.commit.message)
        }

        /// Creates a completed check run on `head_sha`.
        pub async fn completed_check_run(
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

        pub async fn repository_dispatch(
            &self,
            repo: &RepoName,
            body: &serde_json::Value,
        ) -> Result<(), GitHubError> {
            let path = format!("{}/dispatches", repo_path(repo)?);
            self.send(http::Method::POST, &path, Some(body)).await?;
            Ok(())
        }
    }
}

/// Check runs with annotations.
pub mod checks {
    use super::{Api, GitHubError, repo_path};
    use crate::ids::RepoName;
    use serde::Deserialize;
    use serde_json::{Value, json};

    /// GitHub takes at most 50 annotations per request.
    pub const ANNOTATIONS_PER_REQUEST: usize = 50;

    #[derive(Deserialize)]
    struct Created {
        id: u64,
    }

    /// A finished check run's result.
    pub struct CheckRunReport<'a> {
        pub name: &'a str,
        pub head_sha: &'a str,
        pub conclusion: &'a str,
        pub title: &'a str,
        pub summary: &'a str,
        pub annotations: &'a [Value],
    }

    impl Api {
        /// Creates a completed check run, sending `annotations` in batches of
        /// 50 (the first with the creation, the rest as updates, which
        /// GitHub appends).
        pub async fn check_run_with_annotations(
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
    }
}
