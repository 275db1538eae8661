//! The publisher: comments identified by a hidden marker, so a re-run edits
//! or skips instead of posting a duplicate. Only comments sweepgate wrote
//! itself are ever edited; marked comments of the configured legacy logins
//! suppress a duplicate; markers from anyone else are ignored
//! (`docs/contracts.md` §4).
use crate::comments::{COMMENT_LIMIT, fit};
use crate::events::HandlerError;
use crate::github::{Api, IssueComment};
use sweepgate_core::ids::{CommentId, PrNumber, RepoName};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Published {
    Created(CommentId),
    Edited(CommentId),
    Unchanged(CommentId),
}

/// Whether `c` was written by `login` (GitHub logins ignore case).
pub(crate) fn by(c: &IssueComment, login: &str) -> bool {
    !login.is_empty() && c.author().eq_ignore_ascii_case(login)
}

/// The first comment sweepgate wrote (looking through every page)
/// containing `marker`.
pub(crate) async fn find_marked(
    api: &Api,
    repo: &RepoName,
    pr: PrNumber,
    marker: &str,
) -> Result<Option<IssueComment>, HandlerError> {
    let me = api.own_login().await?;
    let comments = api.issue_comments(repo, pr).await?;
    Ok(comments
        .into_iter()
        .find(|c| by(c, &me) && c.body().contains(marker)))
}

/// Posts `body` unless sweepgate or one of the `legacy` logins already
/// posted a comment with `marker`; never edits.
pub(crate) async fn post_once(
    api: &Api,
    repo: &RepoName,
    pr: PrNumber,
    marker: &str,
    body: &str,
    legacy: &[String],
) -> Result<Published, HandlerError> {
    let me = api.own_login().await?;
    let comments = api.issue_comments(repo, pr).await?;
    let counts = |c: &IssueComment| by(c, &me) || legacy.iter().any(|l| by(c, l));
    if let Some(c) = comments
        .iter()
        .find(|c| counts(c) && c.body().contains(marker))
    {
        return Ok(Published::Unchanged(c.id));
    }
    let c = api
        .create_comment(repo, pr, &fit(body, COMMENT_LIMIT, None))
        .await?;
    Ok(Published::Created(c.id))
}

/// Creates the marked comment, or edits sweepgate's own when its text
/// changed. A body over GitHub's limit is cut (see [`fit`]).
pub(crate) async fn upsert(
    api: &Api,
    repo: &RepoName,
    pr: PrNumber,
    marker: &str,
    body: &str,
) -> Result<Published, HandlerError> {
    let body = fit(body, COMMENT_LIMIT, None);
    match find_marked(api, repo, pr, marker).await? {
        Some(c) if c.body() == body => Ok(Published::Unchanged(c.id)),
        Some(c) => {
            api.update_comment(repo, c.id, &body).await?;
            Ok(Published::Edited(c.id))
        }
        None => {
            let c = api.create_comment(repo, pr, &body).await?;
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
) -> Result<Option<(String, IssueComment)>, HandlerError> {
    let me = api.own_login().await?;
    let comments = api.issue_comments(repo, pr).await?;
    Ok(comments
        .into_iter()
        .rev()
        .filter(|c| by(c, &me))
        .find_map(|c| {
            crate::verdict::marker_sha(c.body())
                .map(str::to_owned)
                .map(|sha| (sha, c))
        }))
}
