//! Repository endpoints: file contents, the default branch, a commit's
//! message and `repository_dispatch` events.
use super::{enc, enc_path, repo_path, seg_enc};
use crate::github::{Api, GitHubError};
use base64::Engine;
use serde::Deserialize;
use sweepgate_core::ids::RepoName;

impl Api {
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
