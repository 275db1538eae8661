//! Typed helpers for the REST endpoints sweepgate calls. Paths are built
//! here and nowhere else.
use super::{Api, GitHubError};
use base64::Engine;
use serde::Deserialize;
use serde_json::json;
use sweepgate_core::ids::{CommentId, PrNumber, RepoName};

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
    #[serde(default)]
    pub author_association: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
}

impl IssueComment {
    pub fn body(&self) -> &str {
        self.body.as_deref().unwrap_or("")
    }

    pub(crate) fn author(&self) -> &str {
        self.user.as_ref().map_or("", |u| u.login.as_str())
    }
}

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

/// The collaborator permission API's answer.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Permission {
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

    pub(crate) async fn create_comment(
        &self,
        repo: &RepoName,
        pr: PrNumber,
        body: &str,
    ) -> Result<IssueComment, GitHubError> {
        let path = format!("{}/issues/{pr}/comments", repo_path(repo)?);
        self.post(&path, &json!({ "body": body })).await
    }

    pub(crate) async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<IssueComment, GitHubError> {
        let path = format!("{}/issues/comments/{id}", repo_path(repo)?);
        self.patch(&path, &json!({ "body": body })).await
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

    pub(crate) async fn collaborator_permission(
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
    fn comment_urls_parse() {
        use super::verify::CommentAnchor as A;
        assert_eq!(
            A::parse_url("https://github.com/o/r/pull/4033#issuecomment-12"),
            Some((4033, A::Issue(12)))
        );
        assert_eq!(
            A::parse_url("https://github.com/o/r/pull/7/files#discussion_r99"),
            Some((7, A::ReviewComment(99)))
        );
        assert_eq!(
            A::parse_url("https://github.com/o/r/pull/7#pullrequestreview-5"),
            Some((7, A::Review(5)))
        );
        assert_eq!(A::parse_url("https://github.com/o/r/pull/7"), None);
        assert_eq!(
            A::parse_url("https://github.com/o/r/pull/x#issuecomment-1"),
            None
        );
    }

    #[test]
    fn paths_are_encoded() {
        assert_eq!(enc_path("a b/c#d.yaml"), "a%20b/c%23d.yaml");
        assert_eq!(repo_path(&RepoName::new("o", "r")).unwrap(), "/repos/o/r");
        assert!(repo_path(&RepoName("bad".into())).is_err());
    }
}

/// The Actions and pull-request facts the sweep handlers read.
pub(crate) mod actions {
    use super::{Api, GitHubError, repo_path, seg_enc};
    use chrono::{DateTime, Utc};
    use serde::Deserialize;
    use sweepgate_core::ids::{PrNumber, RepoName, RunId};
    use sweepgate_core::sweep::results::JobFacts;
    use sweepgate_core::sweep::runs::{ArtifactFacts, LabelEvent, RunFacts};

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

        /// The runs a PR's sweep may be picked from: completed runs of
        /// `workflow` on `branch`, and the runs of the PR's completed
        /// dispatched sweeps (which ran on the default branch), each with
        /// the commit it tested; newest first.
        pub(crate) async fn completed_sweep_runs(
            &self,
            repo: &RepoName,
            workflow: &str,
            branch: &str,
            swept: &[crate::store::SweepRow],
        ) -> Result<Vec<RunFacts>, GitHubError> {
            let mut runs = self.completed_runs(repo, workflow, branch).await?;
            for s in swept.iter().filter(|s| s.state == "completed") {
                let Some(id) = s.run_id else { continue };
                if !runs.iter().any(|r| r.id.0 as i64 == id)
                    && let Some(r) = self.workflow_run(repo, RunId(id as u64)).await?
                {
                    runs.push(r);
                }
            }
            for r in runs.iter_mut() {
                sweepgate_core::sweep::runs::tested_head(
                    r,
                    swept.iter().map(|s| (s.run_id, s.head_sha.as_str())),
                );
            }
            runs.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
            Ok(runs)
        }

        pub(crate) async fn run_artifacts(
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

        pub(crate) async fn pull(
            &self,
            repo: &RepoName,
            pr: PrNumber,
        ) -> Result<PullFacts, GitHubError> {
            let path = format!("{}/pulls/{pr}", repo_path(repo)?);
            self.get(&path).await
        }

        pub(crate) async fn open_pulls(
            &self,
            repo: &RepoName,
        ) -> Result<Vec<PullFacts>, GitHubError> {
            let path = format!("{}/pulls?state=open", repo_path(repo)?);
            self.get_all(&path, None).await
        }

        /// Every commit sha of the PR.
        pub(crate) async fn pr_commit_shas(
            &self,
            repo: &RepoName,
            pr: PrNumber,
        ) -> Result<Vec<String>, GitHubError> {
            let path = format!("{}/pulls/{pr}/commits", repo_path(repo)?);
            let shas: Vec<Sha> = self.get_all(&path, None).await?;
            Ok(shas.into_iter().map(|s| s.sha).collect())
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

        /// The full message of a commit.
        pub(crate) async fn commit_message(
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

/// Starting, finding and cancelling sweep runs (`dispatch` mode).
pub(crate) mod sweeps {
    use super::{Api, GitHubError, repo_path, seg_enc};
    use serde::Deserialize;
    use serde_json::{Value, json};
    use sweepgate_core::ids::{RepoName, RunId};

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
}

/// Check runs with annotations.
pub(crate) mod checks {
    use super::{Api, GitHubError, repo_path};
    use serde::Deserialize;
    use serde_json::{Value, json};
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

    impl Api {
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
    }
}

/// What the verifier reads beyond the sweep facts: commits with messages,
/// check runs per commit, reviews and review comments, team memberships,
/// artifacts as archives and upstream pull requests.
pub(crate) mod verify {
    use super::{Api, GitHubError, Login, repo_path, seg_enc};
    use serde::Deserialize;
    use sweepgate_core::checks::snapshot::{
        ChangedFile, CheckRun, Comment, Commit, Membership, UpstreamPr,
    };
    use sweepgate_core::ids::{PrNumber, RepoName, RunId};

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

    /// A review or review comment as the API lists it.
    #[derive(Deserialize)]
    struct ReviewLike {
        id: u64,
        #[serde(default)]
        user: Option<Login>,
        #[serde(default)]
        body: Option<String>,
        #[serde(default)]
        author_association: Option<String>,
        #[serde(default)]
        html_url: Option<String>,
        #[serde(default)]
        submitted_at: Option<String>,
        #[serde(default)]
        created_at: Option<String>,
        #[serde(default)]
        commit_id: Option<String>,
    }

    impl From<ReviewLike> for (Comment, Option<String>) {
        fn from(r: ReviewLike) -> Self {
            (
                Comment {
                    id: r.id,
                    author: r.user.map(|u| u.login).unwrap_or_default(),
                    association: r.author_association.unwrap_or_default(),
                    body: r.body.unwrap_or_default(),
                    url: r.html_url.unwrap_or_default(),
                    created_at: r.submitted_at.or(r.created_at).unwrap_or_default(),
                    permission: None,
                },
                r.commit_id,
            )
        }
    }

    /// Where a comment URL points.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum CommentAnchor {
        Issue(u64),
        Review(u64),
        ReviewComment(u64),
    }

    impl CommentAnchor {
        /// `…/pull/<n>#issuecomment-<id>` and its review siblings: the PR
        /// number and the anchor.
        pub(crate) fn parse_url(url: &str) -> Option<(u64, CommentAnchor)> {
            let (path, frag) = url.split_once('#')?;
            let n = path
                .trim_end_matches('/')
                .rsplit_once("/pull/")?
                .1
                .split('/')
                .next()?
                .parse()
                .ok()?;
            let num = |s: &str| s.parse::<u64>().ok();
            let anchor = if let Some(id) = frag.strip_prefix("issuecomment-") {
                CommentAnchor::Issue(num(id)?)
            } else if let Some(id) = frag.strip_prefix("pullrequestreview-") {
                CommentAnchor::Review(num(id)?)
            } else if let Some(id) = frag.strip_prefix("discussion_r") {
                CommentAnchor::ReviewComment(num(id)?)
            } else {
                return None;
            };
            Some((n, anchor))
        }
    }

    /// An artifact of a run, with the id its archive is fetched by.
    #[derive(Debug, Clone, Deserialize)]
    pub(crate) struct Artifact {
        pub id: u64,
        pub name: String,
        #[serde(default)]
        pub expired: bool,
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

    #[derive(Deserialize)]
    struct MembershipState {
        #[serde(default)]
        state: String,
    }

    impl Api {
        /// The PR's commits with their messages, oldest first.
        pub(crate) async fn pr_commits(
            &self,
            repo: &RepoName,
            pr: PrNumber,
        ) -> Result<Vec<Commit>, GitHubError> {
            let path = format!("{}/pulls/{pr}/commits", repo_path(repo)?);
            let c: Vec<PrCommit> = self.get_all(&path, None).await?;
            Ok(c.into_iter()
                .map(|c| Commit {
                    sha: c.sha,
                    message: c.commit.message,
                })
                .collect())
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

        /// Reviews, each with the commit it was submitted on.
        pub(crate) async fn reviews(
            &self,
            repo: &RepoName,
            pr: PrNumber,
        ) -> Result<Vec<(Comment, Option<String>)>, GitHubError> {
            let path = format!("{}/pulls/{pr}/reviews", repo_path(repo)?);
            let r: Vec<ReviewLike> = self.get_all(&path, None).await?;
            Ok(r.into_iter().map(Into::into).collect())
        }

        /// Review comments (on lines of the diff), each with its commit.
        pub(crate) async fn review_comments(
            &self,
            repo: &RepoName,
            pr: PrNumber,
        ) -> Result<Vec<(Comment, Option<String>)>, GitHubError> {
            let path = format!("{}/pulls/{pr}/comments", repo_path(repo)?);
            let r: Vec<ReviewLike> = self.get_all(&path, None).await?;
            Ok(r.into_iter().map(Into::into).collect())
        }

        /// The repository's default branch.
        pub(crate) async fn default_branch(&self, repo: &RepoName) -> Result<String, GitHubError> {
            #[derive(Deserialize)]
            struct R {
                #[serde(default)]
                default_branch: String,
            }
            let r: R = self.get(&repo_path(repo)?).await?;
            Ok(if r.default_branch.is_empty() {
                "main".into()
            } else {
                r.default_branch
            })
        }

        /// One sign-off candidate by its URL's anchor: an issue comment
        /// (`#issuecomment-<id>`), a review (`#pullrequestreview-<id>`) or a
        /// review comment (`#discussion_r<id>`), with the commit it names.
        pub(crate) async fn comment_by_anchor(
            &self,
            repo: &RepoName,
            pr: PrNumber,
            anchor: &CommentAnchor,
        ) -> Result<Option<(Comment, Option<String>)>, GitHubError> {
            let base = repo_path(repo)?;
            let path = match anchor {
                CommentAnchor::Issue(id) => format!("{base}/issues/comments/{id}"),
                CommentAnchor::Review(id) => format!("{base}/pulls/{pr}/reviews/{id}"),
                CommentAnchor::ReviewComment(id) => format!("{base}/pulls/comments/{id}"),
            };
            Ok(self.get_opt::<ReviewLike>(&path).await?.map(Into::into))
        }

        /// A user's membership of `org/team`: active is a member, pending
        /// is not yet one; 403 and 404 mean the API would not tell.
        pub(crate) async fn team_membership(
            &self,
            org: &str,
            team: &str,
            user: &str,
        ) -> Result<Membership, GitHubError> {
            let path = format!(
                "/orgs/{}/teams/{}/memberships/{}",
                seg_enc(org),
                seg_enc(team),
                seg_enc(user)
            );
            match self.get::<MembershipState>(&path).await {
                Ok(m) if m.state == "active" => Ok(Membership::Member),
                Ok(_) => Ok(Membership::NotMember),
                Err(e) if matches!(e.status(), Some(403 | 404)) => Ok(Membership::Unknown {
                    status: e.status().map(|s| s.to_string()).unwrap_or_default(),
                }),
                Err(e) => Err(e),
            }
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

        /// The run's artifacts with their ids.
        pub(crate) async fn run_artifact_ids(
            &self,
            repo: &RepoName,
            run: RunId,
        ) -> Result<Vec<Artifact>, GitHubError> {
            let path = format!("{}/actions/runs/{run}/artifacts", repo_path(repo)?);
            self.get_all(&path, Some("artifacts")).await
        }

        /// An artifact's zip archive (GitHub answers with a redirect to a
        /// pre-signed blob URL, which takes no credentials).
        pub(crate) async fn artifact_zip(
            &self,
            repo: &RepoName,
            id: u64,
        ) -> Result<bytes::Bytes, GitHubError> {
            let path = format!("{}/actions/artifacts/{id}/zip", repo_path(repo)?);
            let resp = self.send(http::Method::GET, &path, None).await?;
            if (300..400).contains(&resp.status)
                && let Some(loc) = resp.headers.get("location").and_then(|l| l.to_str().ok())
            {
                let r = reqwest::get(loc).await.map_err(|e| GitHubError::Decode {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                if !r.status().is_success() {
                    return Err(GitHubError::Decode {
                        path,
                        message: format!("archive download answered {}", r.status()),
                    });
                }
                return r.bytes().await.map_err(|e| GitHubError::Decode {
                    path,
                    message: e.to_string(),
                });
            }
            Ok(resp.body)
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
}
