//! Comments on a pull request: issue comments (listed, posted, edited),
//! reviews and review comments, and one comment by its URL's anchor.
use super::{Login, repo_path};
use crate::github::{Api, GitHubError};
use serde::Deserialize;
use serde_json::json;
use sweepgate_core::checks::snapshot::Comment;
use sweepgate_core::ids::{CommentId, PrNumber, RepoName};

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
    #[serde(default)]
    pub updated_at: Option<String>,
}

impl IssueComment {
    pub fn body(&self) -> &str {
        self.body.as_deref().unwrap_or("")
    }

    /// Changed since it was written (by its author or anyone else).
    pub(crate) fn edited(&self) -> bool {
        match (&self.created_at, &self.updated_at) {
            (Some(c), Some(u)) => c != u,
            _ => false,
        }
    }

    pub(crate) fn author(&self) -> &str {
        self.user.as_ref().map_or("", |u| u.login.as_str())
    }
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
}

#[cfg(test)]
mod tests {
    #[test]
    fn comment_urls_parse() {
        use super::CommentAnchor as A;
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
}
