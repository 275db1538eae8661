//! The sign-off verifier on the server: a body containing the trigger
//! phrase (issue comment, review, review comment) on an open, non-draft PR
//! pins the head SHA, builds the snapshot from GitHub, runs checks 0–17
//! and publishes the verdict comment (edited in place per SHA, older
//! heads' verdicts marked superseded), the `codeowner-signoff-verify`
//! status and the `sweepgate / verdict` check run (`docs/contracts.md` §6).
use async_trait::async_trait;
use sha2::{Digest, Sha256};

use super::{Scope, Services};
use crate::events::{Event, Handler, HandlerError, JobContext};
use crate::github::{Api, CheckRunReport};
use crate::store::{Store, now_ms};
use crate::verdict::{self, Verdict, remote};
use sweepgate_core::checks::snapshot::{Signoff, SignoffKind};
use sweepgate_core::ids::{PrNumber, RepoName, RunId};

/// The store's namespace of the pinned run (written by `/use`).
const NS_PIN: &str = "pin";
/// The check run already published per (repository, SHA), so a retried
/// job does not create a second identical one.
const NS_CHECK_RUN: &str = "verdict-check-run";

pub(crate) struct SignoffVerifier {
    services: Services,
}

impl SignoffVerifier {
    pub(crate) fn new(services: Services) -> Self {
        Self { services }
    }
}

/// What a delivery says about a possible sign-off.
struct Trigger {
    pr: PrNumber,
    signoff: Signoff,
    /// The commit a review names; issue comments name none.
    commit: Option<String>,
    open: bool,
    draft: bool,
    bot: bool,
}

fn is_bot(login: &str, kind: &str) -> bool {
    kind == "Bot" || login.ends_with("[bot]")
}

/// A review or review comment: `[body, url, created_at]` of the payload.
fn on_pull(
    pull: &crate::events::payload::PullRequest,
    user: &crate::events::payload::User,
    kind: SignoffKind,
    [body, url, created_at]: [&Option<String>; 3],
    commit: Option<String>,
) -> Option<Trigger> {
    let text = |b: &Option<String>| b.clone().unwrap_or_default();
    Some(Trigger {
        pr: pull.number,
        signoff: Signoff {
            author: user.login.clone(),
            kind,
            body: text(body),
            url: text(url),
            created_at: text(created_at),
        },
        commit,
        open: pull.state == "open",
        draft: pull.draft,
        bot: is_bot(&user.login, &user.kind),
    })
}

fn trigger(event: &Event) -> Option<Trigger> {
    let text = |b: &Option<String>| b.clone().unwrap_or_default();
    match event {
        Event::IssueComment(ev) => {
            ev.issue.pull_request.as_ref()?;
            // An edit that did not touch the body types nothing new.
            if ev.action == "edited" && ev.changes.as_ref().and_then(|c| c.body.as_ref()).is_none()
            {
                return None;
            }
            let user = ev.comment.user.as_ref()?;
            Some(Trigger {
                pr: ev.issue.number,
                signoff: Signoff {
                    author: user.login.clone(),
                    kind: SignoffKind::IssueComment,
                    body: text(&ev.comment.body),
                    url: text(&ev.comment.html_url),
                    created_at: text(&ev.comment.created_at),
                },
                commit: None,
                open: ev.issue.state == "open",
                draft: ev.issue.draft.unwrap_or(false),
                bot: is_bot(&user.login, &user.kind),
            })
        }
        Event::PullRequestReview(ev) => on_pull(
            &ev.pull_request,
            ev.review.user.as_ref()?,
            SignoffKind::Review,
            // A review's payload carries no time; the listing does.
            [&ev.review.body, &ev.review.html_url, &None],
            ev.review.commit_id.clone(),
        ),
        Event::PullRequestReviewComment(ev) => on_pull(
            &ev.pull_request,
            ev.comment.user.as_ref()?,
            SignoffKind::ReviewComment,
            [
                &ev.comment.body,
                &ev.comment.html_url,
                &ev.comment.created_at,
            ],
            ev.comment.commit_id.clone(),
        ),
        _ => None,
    }
}

#[async_trait]
impl Handler for SignoffVerifier {
    fn name(&self) -> &'static str {
        "verifier"
    }

    fn accepts(&self, kind: &str) -> bool {
        matches!(
            kind,
            "issue_comment.created"
                | "issue_comment.edited"
                | "pull_request_review.submitted"
                | "pull_request_review.edited"
                | "pull_request_review_comment.created"
                | "pull_request_review_comment.edited"
        )
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        let Some(t) = trigger(event) else {
            return Ok(());
        };
        if t.bot || !sweepgate_core::signoff::is_signoff(&t.signoff.body) || !t.open || t.draft {
            return Ok(());
        }
        let scope = self.services.scope(ctx).await?;
        // The state now, not as the payload claimed it.
        let pull = scope.api.pull(&scope.repo, t.pr).await?;
        if pull.state != "open" || pull.draft {
            tracing::info!(pr = %t.pr, "sign-off on a closed or draft PR: no verdict");
            return Ok(());
        }
        let head = t.commit.clone().unwrap_or(pull.head.sha);
        verify_and_publish(&self.services, &ctx.store, &scope, t.pr, &head, t.signoff).await?;
        Ok(())
    }
}

/// What a published verdict was.
pub(crate) struct Published {
    pub verdict: Verdict,
    pub url: String,
}

/// The run the store has pinned for the PR.
async fn stored_pin(
    store: &Store,
    repo: &RepoName,
    pr: PrNumber,
) -> Result<Option<RunId>, HandlerError> {
    let Some(v) = store.kv_get(NS_PIN, &format!("{repo}#{pr}")).await? else {
        return Ok(None);
    };
    Ok(serde_json::from_str::<serde_json::Value>(&v)
        .ok()
        .and_then(|v| v["run"].as_u64())
        .map(RunId))
}

/// Builds the snapshot at `head` and runs the checks.
pub(crate) async fn assess(
    services: &Services,
    store: &Store,
    scope: &Scope,
    pr: PrNumber,
    head: &str,
    signoff: Signoff,
) -> Result<Verdict, HandlerError> {
    let pinned_run = stored_pin(store, &scope.repo, pr).await?;
    let swept = store.pr_sweeps(&scope.repo.0, pr.0 as i64).await?;
    let snapshot = remote::build(
        &scope.api,
        remote::Request {
            repo: &scope.repo,
            pr,
            head_sha: head,
            signoff,
            pinned_run,
            cfg: &scope.cfg,
            default_branch: &scope.default_branch,
            today: services.clock.today(),
            swept: &swept,
        },
    )
    .await?;
    let mut v = verdict::verify(&snapshot, &scope.cfg);
    if let Some(base) = &services.public_url
        && !v.pareto.is_empty()
    {
        // Signed: the plot is readable without a dashboard login.
        v.plot_url = Some(
            crate::dashboard::links::signed_plot_url(store, base, &scope.repo, pr, head).await?,
        );
    }
    Ok(v)
}

/// Assesses and publishes.
pub(crate) async fn verify_and_publish(
    services: &Services,
    store: &Store,
    scope: &Scope,
    pr: PrNumber,
    head: &str,
    signoff: Signoff,
) -> Result<Published, HandlerError> {
    let v = assess(services, store, scope, pr, head, signoff).await?;
    publish(&scope.api, store, &scope.repo, pr, &v).await
}

/// The verdict comment, the status and the check run.
pub(crate) async fn publish(
    api: &Api,
    store: &Store,
    repo: &RepoName,
    pr: PrNumber,
    v: &Verdict,
) -> Result<Published, HandlerError> {
    let body = verdict::render_comment(v);
    let comments = api.issue_comments(repo, pr).await?;
    let mine = |c: &crate::github::IssueComment| c.author().ends_with("[bot]");
    // Verdicts of other heads no longer apply: mark them superseded.
    for c in comments.iter().filter(|c| mine(c)) {
        if let Some(old) = verdict::marker_sha(c.body())
            && old != v.head_sha
        {
            api.update_comment(repo, c.id, &verdict::superseded(c.body(), &v.head_sha))
                .await?;
        }
    }
    let existing = comments
        .iter()
        .filter(|c| mine(c))
        .find(|c| verdict::marker_sha(c.body()) == Some(v.head_sha.as_str()));
    let comment = match existing {
        Some(c) if c.body() == body => c.clone(),
        Some(c) => api.update_comment(repo, c.id, &body).await?,
        None => api.create_comment(repo, pr, &body).await?,
    };
    let url = comment.html_url.clone().unwrap_or_default();
    let st = verdict::status(v, (!url.is_empty()).then_some(url.as_str()));
    api.create_status(
        repo,
        &st.sha,
        &st.state,
        &st.context,
        &st.description,
        st.target_url.as_deref(),
    )
    .await?;
    let cr = verdict::check_run(v);
    let digest = hex::encode(Sha256::digest(
        serde_json::to_vec(&cr).unwrap_or_default().as_slice(),
    ));
    let key = format!("{repo}@{}", v.head_sha);
    if store.kv_get(NS_CHECK_RUN, &key).await?.as_deref() != Some(digest.as_str()) {
        let annotations: Vec<serde_json::Value> = cr
            .annotations
            .iter()
            .map(|a| serde_json::to_value(a).unwrap_or_default())
            .collect();
        api.check_run_with_annotations(
            repo,
            &CheckRunReport {
                name: &cr.name,
                head_sha: &cr.head_sha,
                conclusion: &cr.conclusion,
                title: &cr.title,
                summary: &cr.summary,
                annotations: &annotations,
            },
        )
        .await?;
        store.kv_put(NS_CHECK_RUN, &key, &digest, now_ms()).await?;
    }
    let blocking = v.blocking().len();
    let summary = if v.passed() {
        format!("PASS for @{}", v.signer)
    } else {
        format!("REJECTED for @{}: {blocking} blocking", v.signer)
    };
    super::record_activity(
        store,
        repo,
        pr,
        Some(&v.head_sha),
        "verdict",
        &summary,
        &serde_json::json!({ "verdict": v, "comment_url": url }),
    )
    .await?;
    Ok(Published {
        verdict: v.clone(),
        url,
    })
}

/// Why `sweepgate verify` could not assess a sign-off.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VerifyUrlError {
    #[error(
        "`{0}` is not a sign-off URL (…/pull/<n>#issuecomment-<id>, #pullrequestreview-<id> or #discussion_r<id>)"
    )]
    Url(String),
    #[error("{0} does not exist or is not readable")]
    Missing(String),
    #[error("{0} does not contain `{phrase}`", phrase = sweepgate_core::signoff::TRIGGER_PHRASE)]
    NotSignoff(String),
    #[error(transparent)]
    Handler(#[from] HandlerError),
}

/// `sweepgate verify`: the verifier on the PR of a sign-off given by its
/// URL, at the commit a review names or else the current head; publishes
/// the verdict only when asked.
pub(crate) async fn verify_url(
    services: &Services,
    store: &Store,
    repo: &RepoName,
    url: &str,
    publish_it: bool,
) -> Result<(Verdict, Option<Published>), VerifyUrlError> {
    use crate::github::CommentAnchor;
    let (n, anchor) =
        CommentAnchor::parse_url(url).ok_or_else(|| VerifyUrlError::Url(url.to_owned()))?;
    let pr = PrNumber(n);
    let api = services.api_for_repo(repo).await?;
    let default_branch = api.default_branch(repo).await.map_err(HandlerError::from)?;
    let cfg = super::repo_config::load(&api, store, repo, &default_branch)
        .await?
        .config;
    let (comment, commit) = api
        .comment_by_anchor(repo, pr, &anchor)
        .await
        .map_err(HandlerError::from)?
        .ok_or_else(|| VerifyUrlError::Missing(url.to_owned()))?;
    if !sweepgate_core::signoff::is_signoff(&comment.body) {
        return Err(VerifyUrlError::NotSignoff(url.to_owned()));
    }
    let kind = match anchor {
        CommentAnchor::Issue(_) => SignoffKind::IssueComment,
        CommentAnchor::Review(_) => SignoffKind::Review,
        CommentAnchor::ReviewComment(_) => SignoffKind::ReviewComment,
    };
    let head = match commit {
        Some(c) => c,
        None => {
            api.pull(repo, pr)
                .await
                .map_err(HandlerError::from)?
                .head
                .sha
        }
    };
    let signoff = Signoff {
        author: comment.author,
        kind,
        body: comment.body,
        url: if comment.url.is_empty() {
            url.to_owned()
        } else {
            comment.url
        },
        created_at: comment.created_at,
    };
    let scope = Scope {
        repo: repo.clone(),
        api,
        cfg,
        default_branch,
    };
    let v = assess(services, store, &scope, pr, &head, signoff).await?;
    if publish_it {
        let p = publish(&scope.api, store, &scope.repo, pr, &v).await?;
        return Ok((v, Some(p)));
    }
    Ok((v, None))
}
