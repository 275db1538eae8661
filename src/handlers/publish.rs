//! The publisher: comments identified by a hidden marker, so a re-run edits
//! or skips instead of posting a duplicate.
use crate::events::HandlerError;
use crate::github::{Api, IssueComment};
use sweepgate_core::ids::{CommentId, PrNumber, RepoName};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Published {
    Created(CommentId),
    Edited(CommentId),
    Unchanged(CommentId),
}

/// The first comment (looking through every page) containing `marker`.
pub(crate) async fn find_marked(
    api: &Api,
    repo: &RepoName,
    pr: PrNumber,
    marker: &str,
) -> Result<Option<IssueComment>, HandlerError> {
    let comments = api.issue_comments(repo, pr).await?;
    Ok(comments.into_iter().find(|c| c.body().contains(marker)))
}

/// Posts `body` unless a comment with `marker` exists; never edits.
pub(crate) async fn post_once(
    api: &Api,
    repo: &RepoName,
    pr: PrNumber,
    marker: &str,
    body: &str,
) -> Result<Published, HandlerError> {
    if let Some(c) = find_marked(api, repo, pr, marker).await? {
        return Ok(Published::Unchanged(c.id));
    }
    let c = api.create_comment(repo, pr, body).await?;
    Ok(Published::Created(c.id))
}

/// Creates the marked comment, or edits it when its text changed.
pub(crate) async fn upsert(
    api: &Api,
    repo: &RepoName,
    pr: PrNumber,
    marker: &str,
    body: &str,
) -> Result<Published, HandlerError> {
    match find_marked(api, repo, pr, marker).await? {
        Some(c) if c.body() == body => Ok(Published::Unchanged(c.id)),
        Some(c) => {
            api.update_comment(repo, c.id, body).await?;
            Ok(Published::Edited(c.id))
        }
        None => {
            let c = api.create_comment(repo, pr, body).await?;
            Ok(Published::Created(c.id))
        }
    }
}

/// The head SHA of the newest verdict comment sweepgate posted that is
/// not superseded.
pub(crate) async fn find_live_verdict(
    api: &Api,
    repo: &RepoName,
    pr: PrNumber,
) -> Result<Option<String>, HandlerError> {
    let comments = api.issue_comments(repo, pr).await?;
    Ok(comments
        .iter()
        .rev()
        .filter(|c| c.author().ends_with("[bot]"))
        .find_map(|c| crate::verdict::marker_sha(c.body()).map(str::to_owned)))
}
