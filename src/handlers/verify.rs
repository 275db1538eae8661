//! The sign-off verifier on the server: a body containing the trigger
//! phrase (issue comment, review, review comment) on an open, non-draft PR
//! pins the head SHA, builds the snapshot from GitHub, runs checks 0–17
//! and publishes the verdict comment (edited in place per SHA, older
//! heads' verdicts marked superseded), the `codeowner-signoff-verify`
//! status and the `sweepgate / verdict` check run (`docs/contracts.md` §6).
use async_trait::async_trait;
use sha2::{Digest, Sha256};

use super::{Scope, Services, publish};
use crate::comments::{Refusal, SignoffRefused, render};
use crate::events::{Event, Handler, HandlerError, JobContext};
use crate::github::CheckRunReport;
use crate::snapshot::remote;
use crate::store::{HeadRecord, Store, VerifierRunsOf, now_ms};
use crate::verdict::{self, Verdict};
use sweepgate_core::checks::snapshot::{Signoff, SignoffKind};
use sweepgate_core::ids::{PrNumber, RepoName, RunId};
use sweepgate_core::signoff::{Coverage, RecordedHead};

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
    /// The comment or review, for the reply's marker.
    id: u64,
    open: bool,
    draft: bool,
    bot: bool,
    /// An edit, and who made it (the delivery's `sender`).
    edited_by: Option<String>,
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
    (id, edited_by): (u64, Option<String>),
) -> Option<Trigger> {
    let text = |b: &Option<String>| b.clone().unwrap_or_default();
    Some(Trigger {
        id,
        edited_by,
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

/// Who edited, for an `edited` action (the sender GitHub names; an
/// edit without one counts as someone else's).
fn editor(action: &str, sender: &Option<crate::events::payload::User>) -> Option<String> {
    (action == "edited").then(|| sender.as_ref().map(|u| u.login.clone()).unwrap_or_default())
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
                id: ev.comment.id.0,
                edited_by: editor(&ev.action, &ev.sender),
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
            (ev.review.id.0, editor(&ev.action, &ev.sender)),
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
            (ev.comment.id.0, editor(&ev.action, &ev.sender)),
        ),
        _ => None,
    }
}

#[async_trait]
impl Handler for SignoffVerifier {
    fn id(&self) -> crate::events::HandlerId {
        crate::events::HandlerId::SignoffVerifier
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        if let Event::PullRequest(ev) = event {
            return self.on_head(ctx, ev).await;
        }
        let Some(t) = trigger(event) else {
            return Ok(());
        };
        if t.bot || !sweepgate_core::signoff::is_signoff(&t.signoff.body) || !t.open || t.draft {
            return Ok(());
        }
        // An edit counts only when its author made it (policy-bot's
        // `ignore_edited_comments`): anyone else's runs nothing.
        if let Some(editor) = &t.edited_by
            && !editor.eq_ignore_ascii_case(&t.signoff.author)
        {
            tracing::warn!(
                pr = %t.pr, editor = %editor, author = %t.signoff.author,
                "sign-off edited by someone else than its author: ignored"
            );
            crate::telemetry::foreign_edit(&ctx.kind);
            return Ok(());
        }
        // The body as its author wrote it: `/verify` may verify it later.
        super::authored::Authored::record_signoff(
            &ctx.store,
            &super::repo_of(ctx)?,
            t.pr,
            &t.signoff.url,
            &t.signoff.body,
        )
        .await?;
        let scope = self.services.scope(ctx).await?;
        // The state now, not as the payload claimed it.
        let pull = scope.api.pull(&scope.repo, t.pr).await?;
        if pull.state != "open" || pull.draft {
            tracing::info!(pr = %t.pr, "sign-off on a closed or draft PR: no verdict");
            return Ok(());
        }
        let user = t.signoff.author.clone();
        if !may_sign(&scope, t.pr, &user).await? {
            crate::telemetry::refused_signoff("ineligible");
            let marker = not_a_signer_marker(&user);
            let body = render(&SignoffRefused {
                marker: &marker,
                user: &user,
                state: Refusal::NotASigner,
                covers: "",
                head: "",
                seconds: 0,
                limit: 0,
            });
            publish::post_once(&scope.api, &scope.repo, t.pr, &marker, &body, &[]).await?;
            return Ok(());
        }
        let reply = |state, covers: &str, seconds, limit| {
            let marker = signoff_marker(t.id);
            render(&SignoffRefused {
                marker: &marker,
                user: &user,
                state,
                covers,
                head: &pull.head.sha,
                seconds,
                limit,
            })
        };
        let covers =
            match covered(&ctx.store, &scope.repo, t.pr, &t.signoff, t.commit, &pull).await? {
                Coverage::Covers(sha) => sha,
                Coverage::NoRecord => {
                    crate::telemetry::refused_signoff("stale");
                    let body = reply(Refusal::NoRecord, "", 0, 0);
                    publish::upsert(&scope.api, &scope.repo, t.pr, &signoff_marker(t.id), &body)
                        .await?;
                    return Ok(());
                }
                Coverage::RecentPush { sha, ms } => {
                    crate::telemetry::refused_signoff("stale");
                    let body = reply(Refusal::RecentPush, &sha, ms / 1000, 0);
                    publish::upsert(&scope.api, &scope.repo, t.pr, &signoff_marker(t.id), &body)
                        .await?;
                    return Ok(());
                }
            };
        if let Err(limit) = take_run(&ctx.store, &scope, t.pr, &user).await? {
            crate::telemetry::refused_signoff("capped");
            let body = reply(Refusal::Capped, &covers, 0, limit);
            publish::upsert(&scope.api, &scope.repo, t.pr, &signoff_marker(t.id), &body).await?;
            return Ok(());
        }
        verify_and_publish(&self.services, &ctx.store, &scope, t.pr, &covers, t.signoff).await?;
        Ok(())
    }
}

impl SignoffVerifier {
    /// A PR's `opened`, `reopened` or `synchronize`: records its head; a
    /// push past the live verdict's commit makes that verdict stale on
    /// the new head (`docs/contracts.md` §3).
    async fn on_head(
        &self,
        ctx: &JobContext,
        ev: &crate::events::PullRequestEvent,
    ) -> Result<(), HandlerError> {
        let Some(head) = ev.pull_request.head.as_ref().filter(|h| !h.sha.is_empty()) else {
            return Ok(());
        };
        let repo = super::repo_of(ctx)?;
        let pr = ev.pull_request.number;
        let received_at = match &ctx.delivery_id {
            Some(id) => ctx.store.delivery(id).await?.map(|d| d.received_at),
            None => None,
        }
        .unwrap_or_else(now_ms);
        let pushed_at = ev
            .pull_request
            .updated_at
            .as_deref()
            .or(ev.pull_request.created_at.as_deref())
            .and_then(github_ms)
            .unwrap_or(received_at);
        ctx.store
            .record_head(&HeadRecord {
                repository: repo.0.clone(),
                pr_number: pr.0 as i64,
                head_sha: head.sha.clone(),
                pushed_at,
                received_at,
                source: ctx
                    .delivery_id
                    .as_ref()
                    .map_or_else(|| format!("observed:{}", head.sha), |d| d.0.clone()),
            })
            .await?;
        if ev.action != "synchronize" {
            return Ok(());
        }
        let scope = self.services.scope(ctx).await?;
        if let Some((covered, comment)) =
            publish::find_live_verdict(&scope.api, &scope.repo, pr).await?
            && covered != head.sha
        {
            stale_status(&scope, &covered, &head.sha, comment.html_url.as_deref()).await?;
        }
        Ok(())
    }
}

/// Milliseconds of a GitHub timestamp (RFC 3339).
pub(crate) fn github_ms(t: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|d| d.timestamp_millis())
}

/// The commit a sign-off covers (`docs/contracts.md` §3): a review's
/// `commit_id`; for a comment, the last head recorded before it. With no
/// record at all, the head read now is recorded, so a sign-off written
/// after it can cover it.
pub(crate) async fn covered(
    store: &Store,
    repo: &RepoName,
    pr: PrNumber,
    signoff: &Signoff,
    commit: Option<String>,
    pull: &crate::github::PullFacts,
) -> Result<Coverage, HandlerError> {
    if let Some(sha) = commit.filter(|c| !c.is_empty()) {
        return Ok(Coverage::Covers(sha));
    }
    let heads: Vec<RecordedHead> = store
        .pr_heads(&repo.0, pr.0 as i64)
        .await?
        .into_iter()
        .map(|h| RecordedHead {
            sha: h.head_sha,
            at_ms: h.pushed_at,
        })
        .collect();
    // A comment without a readable time covers nothing.
    let at = github_ms(&signoff.created_at).unwrap_or(i64::MIN);
    let coverage = sweepgate_core::signoff::covered_head(&heads, at);
    if coverage == Coverage::NoRecord && heads.is_empty() {
        let now = now_ms();
        store
            .record_head(&HeadRecord {
                repository: repo.0.clone(),
                pr_number: pr.0 as i64,
                head_sha: pull.head.sha.clone(),
                pushed_at: pull
                    .updated_at
                    .as_deref()
                    .and_then(github_ms)
                    .unwrap_or(now),
                received_at: now,
                source: format!("observed:{}", pull.head.sha),
            })
            .await?;
    }
    Ok(coverage)
}

/// Whether `user` may sign this PR at all: a CODEOWNER of a changed path,
/// or a member of a team that owns one or of the core team. A team the
/// API will not show is stood in for by a repository role of write or
/// above (as Check 0 does for the core team).
async fn may_sign(scope: &Scope, pr: PrNumber, user: &str) -> Result<bool, HandlerError> {
    use sweepgate_core::checks::snapshot::Membership;
    let path = &scope.cfg.paths.codeowners;
    let text = scope
        .api
        .file_at(&scope.repo, path, &scope.default_branch)
        .await?;
    let co = text.and_then(|t| sweepgate_core::recipe::codeowners::parse(path, &t).ok());
    let mut unknown = co.is_none();
    if let Some(co) = co {
        let files = scope.api.pr_files(&scope.repo, pr).await?;
        let mut changed: Vec<&str> = Vec::new();
        for f in &files {
            changed.push(&f.filename);
            changed.extend(f.previous_filename.as_deref());
        }
        let (named, teams) = sweepgate_core::checks::c00_codeowner::signer_candidates(
            &co, &scope.cfg, &changed, user,
        );
        if named {
            return Ok(true);
        }
        for (org, team) in teams {
            match scope.api.team_membership(&org, &team, user).await? {
                Membership::Member => return Ok(true),
                Membership::NotMember => {}
                Membership::Unknown { .. } => unknown = true,
            }
        }
    }
    if !unknown {
        return Ok(false);
    }
    let role = scope
        .api
        .collaborator_permission(&scope.repo, user)
        .await?
        .map_or(sweepgate_core::commands::RepoRole::None, |p| {
            sweepgate_core::commands::RepoRole::from_api(&p.permission, p.role_name.as_deref())
        });
    Ok(role >= sweepgate_core::commands::RepoRole::Write)
}

const HOUR_MS: i64 = 3_600_000;

/// Counts a verifier run against `actor`'s hourly allowance on the PR;
/// `Err(limit)` when it is used up. Each actor has their own: nobody can
/// use up a signer's.
pub(crate) async fn take_run(
    store: &Store,
    scope: &Scope,
    pr: PrNumber,
    actor: &str,
) -> Result<Result<(), u32>, HandlerError> {
    let limit = scope.cfg.signoff.runs_per_hour;
    let actor = actor.to_ascii_lowercase();
    let of = VerifierRunsOf {
        repo: &scope.repo,
        pr,
        actor: &actor,
    };
    let now = now_ms();
    let since = now - HOUR_MS;
    if store.verifier_runs_since(&of, since).await? >= u64::from(limit) {
        return Ok(Err(limit));
    }
    store.record_verifier_run(&of, now, since).await?;
    Ok(Ok(()))
}

/// The failure status on `head` when the verdict covers an older commit.
async fn stale_status(
    scope: &Scope,
    covered: &str,
    head: &str,
    target_url: Option<&str>,
) -> Result<(), HandlerError> {
    let short = |s: &str| s.get(..7).unwrap_or(s).to_owned();
    scope
        .api
        .create_status(
            &scope.repo,
            head,
            "failure",
            &scope.cfg.signoff.status_context,
            &verdict::stale_description(&short(covered), &short(head)),
            target_url,
        )
        .await?;
    Ok(())
}

/// The marker of the reply to a sign-off that got no verdict.
fn signoff_marker(id: u64) -> String {
    format!("<!-- sweepgate:signoff comment={id} -->")
}

/// The marker of the one reply per user and PR to a checklist from
/// someone who may not sign.
fn not_a_signer_marker(user: &str) -> String {
    format!(
        "<!-- sweepgate:not-a-signer user={} -->",
        user.to_ascii_lowercase()
    )
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
    Ok(store.pin(repo, pr).await?.map(|p| p.run))
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
    let authored = super::authored::Authored::load(store, &scope.repo, pr).await?;
    let detail = sweepgate_core::signoff::detail_section(&signoff.body);
    let links = sweepgate_core::checks::c03_upstream::links(&detail, &scope.cfg)
        .0
        .len();
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
            authored: &authored,
        },
    )
    .await?;
    let mut v = verdict::verify(&snapshot, &scope.cfg);
    let cap = scope.cfg.signoff.upstream_links;
    if links > cap {
        v.limits
            .push(render(&crate::comments::LinksCapped { links, read: cap }));
    }
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
    publish(services, scope, store, pr, &v).await
}

/// Where the dashboard shows a PR (linked from a cut text).
fn dashboard_link(services: &Services, repo: &RepoName, pr: PrNumber) -> Option<String> {
    services
        .public_url
        .as_ref()
        .map(|base| format!("{base}/repos/{repo}/pulls/{pr}"))
}

/// The verdict comment, the status and the check run.
pub(crate) async fn publish(
    services: &Services,
    scope: &Scope,
    store: &Store,
    pr: PrNumber,
    v: &Verdict,
) -> Result<Published, HandlerError> {
    use crate::comments::{COMMENT_LIMIT, SUMMARY_LIMIT, fit};
    let (api, repo) = (&scope.api, &scope.repo);
    let link = dashboard_link(services, repo, pr);
    let body = fit(&verdict::render_comment(v), COMMENT_LIMIT, link.as_deref());
    let comments = api.issue_comments(repo, pr).await?;
    // Only comments sweepgate wrote are edited (`docs/contracts.md` §4).
    let me = api.own_login().await?;
    let mine = |c: &crate::github::IssueComment| publish::by(c, &me);
    // Verdicts of other heads no longer apply: mark them superseded.
    for c in comments.iter().filter(|c| mine(c)) {
        if let Some(old) = verdict::marker_sha(c.body())
            && old != v.head_sha
        {
            let text = fit(
                &verdict::superseded(c.body(), &v.head_sha),
                COMMENT_LIMIT,
                link.as_deref(),
            );
            api.update_comment(repo, c.id, &text).await?;
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
    let target = (!url.is_empty()).then_some(url.as_str());
    let st = verdict::status_in(v, target, &scope.cfg.signoff.status_context);
    api.create_status(
        repo,
        &st.sha,
        &st.state,
        &st.context,
        &st.description,
        st.target_url.as_deref(),
    )
    .await?;
    // The head moved past the covered commit: the verdict is stale there.
    if let Some(head) = &v.head_moved_to {
        stale_status(scope, &v.head_sha, head, target).await?;
    }
    let mut cr = verdict::check_run(v);
    cr.summary = fit(&cr.summary, SUMMARY_LIMIT, link.as_deref());
    let digest = hex::encode(Sha256::digest(
        serde_json::to_vec(&cr).unwrap_or_default().as_slice(),
    ));
    // The check run already published on this commit: a retried job does
    // not create a second identical one.
    let published = store.published_check_run(repo, &v.head_sha).await?;
    if published.as_deref() != Some(digest.as_str()) {
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
        store
            .record_published_check_run(repo, &v.head_sha, &digest, now_ms())
            .await?;
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
        let p = publish(services, &scope, store, pr, &v).await?;
        return Ok((v, Some(p)));
    }
    Ok((v, None))
}
