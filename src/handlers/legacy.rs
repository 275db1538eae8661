//! The verdict of the verifier sweepgate replaces: a comment by one of the
//! configured legacy logins with the `codeowner-signoff-verify` marker is
//! read back (`sweepgate_core::legacy`) and recorded on the PR's timeline,
//! so the dashboard and `verify --compare` show it beside sweepgate's
//! verdict for the same commit (`docs/shadow.md`). Nothing is posted.
use super::{Services, record_activity};
use crate::events::{Event, Handler, HandlerError, HandlerId, JobContext};
use async_trait::async_trait;
use sweepgate_core::legacy;

pub(crate) struct LegacyVerdicts {
    services: Services,
}

impl LegacyVerdicts {
    pub(crate) fn new(services: Services) -> Self {
        Self { services }
    }
}

/// The activity kind of a recorded legacy verdict.
pub(crate) const KIND: &str = "legacy-verdict";

#[async_trait]
impl Handler for LegacyVerdicts {
    fn id(&self) -> HandlerId {
        HandlerId::LegacyVerdicts
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        let Event::IssueComment(ev) = event else {
            return Ok(());
        };
        let body = ev.comment.body.as_deref().unwrap_or("");
        if ev.issue.pull_request.is_none() || !body.contains(legacy::MARKER) {
            return Ok(());
        }
        let Some(parsed) = legacy::parse(body) else {
            return Ok(());
        };
        let scope = self.services.scope(ctx).await?;
        let author = ev.comment.user.as_ref().map_or("", |u| u.login.as_str());
        // Only the configured legacy logins speak for the old verifier.
        let legacy_author = !author.is_empty()
            && scope
                .cfg
                .legacy
                .logins
                .iter()
                .any(|l| l.eq_ignore_ascii_case(author));
        if !legacy_author {
            return Ok(());
        }
        let summary = format!(
            "old verifier: {} ({} rows)",
            if parsed.verdict.is_empty() {
                "no verdict line"
            } else {
                parsed.verdict.as_str()
            },
            parsed.rows.len()
        );
        let detail = serde_json::json!({
            "legacy": parsed,
            "comment_url": ev.comment.html_url,
        });
        record_activity(
            &ctx.store,
            &scope.repo,
            ev.issue.number,
            Some(&parsed.sha),
            KIND,
            &summary,
            &detail,
        )
        .await
    }
}
