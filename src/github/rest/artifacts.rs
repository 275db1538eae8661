//! Actions run artifacts: listed as sweep facts or with the ids their
//! archives are fetched by, and downloaded as zip archives.
use super::repo_path;
use crate::github::{Api, GitHubError};
use serde::Deserialize;
use sweepgate_core::ids::{RepoName, RunId};
use sweepgate_core::sweep::runs::ArtifactFacts;

#[derive(Deserialize)]
struct ListedArtifact {
    name: String,
    #[serde(default)]
    expired: bool,
}

/// An artifact of a run, with the id its archive is fetched by.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Artifact {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub expired: bool,
    /// The archive's size as GitHub reports it.
    #[serde(default)]
    pub size_in_bytes: Option<u64>,
}

impl Api {
    pub(crate) async fn run_artifacts(
        &self,
        repo: &RepoName,
        run: RunId,
    ) -> Result<Vec<ArtifactFacts>, GitHubError> {
        let path = format!("{}/actions/runs/{run}/artifacts", repo_path(repo)?);
        let a: Vec<ListedArtifact> = self.get_all(&path, Some("artifacts")).await?;
        Ok(a.into_iter()
            .map(|a| ArtifactFacts {
                name: a.name,
                expired: a.expired,
            })
            .collect())
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
    /// pre-signed blob URL, which takes no credentials), or `Ok(Err(size))`
    /// when it is larger than `max_bytes`: the download stops there.
    pub(crate) async fn artifact_zip(
        &self,
        repo: &RepoName,
        id: u64,
        max_bytes: u64,
    ) -> Result<Result<bytes::Bytes, u64>, GitHubError> {
        let path = format!("{}/actions/artifacts/{id}/zip", repo_path(repo)?);
        let resp = self.send(http::Method::GET, &path, None).await?;
        let decode = |message: String| GitHubError::Decode {
            path: path.clone(),
            message,
        };
        if (300..400).contains(&resp.status)
            && let Some(loc) = resp.headers.get("location").and_then(|l| l.to_str().ok())
        {
            let mut r = reqwest::get(loc).await.map_err(|e| decode(e.to_string()))?;
            if !r.status().is_success() {
                return Err(decode(format!("archive download answered {}", r.status())));
            }
            if let Some(len) = r.content_length().filter(|n| *n > max_bytes) {
                return Ok(Err(len));
            }
            let mut out = bytes::BytesMut::new();
            while let Some(chunk) = r.chunk().await.map_err(|e| decode(e.to_string()))? {
                if (out.len() + chunk.len()) as u64 > max_bytes {
                    return Ok(Err((out.len() + chunk.len()) as u64));
                }
                out.extend_from_slice(&chunk);
            }
            return Ok(Ok(out.freeze()));
        }
        if resp.body.len() as u64 > max_bytes {
            return Ok(Err(resp.body.len() as u64));
        }
        Ok(Ok(resp.body))
    }
}
