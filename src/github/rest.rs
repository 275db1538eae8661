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
