//! Recipe lint on every push (`docs/contracts.md` §4): a check run
//! `sweepgate / recipe-lint`, and one summary comment per PR, edited in
//! place for each new head. The PR is judged on what it changes (issue 17
//! item 5): its base is the merge base with the branch tip GitHub sends as
//! `base.sha`, only new errors fail the check run, new findings and
//! pre-existing ones on changed lines are annotated, and the comment lists
//! pre-existing findings of the touched files collapsed.
use super::{Scope, Services, guide::touches_recipes, publish};
use crate::events::{Event, Handler, HandlerError, JobContext};
use crate::github::CheckRunReport;
use crate::github::GitHubSource;
use crate::lint::summary;
use async_trait::async_trait;
use serde_json::json;
use sweepgate_core::checks::lint::{Severity, has_new_errors, lint_judged};

pub(crate) const LINT_CHECK: &str = "sweepgate / recipe-lint";
/// Prefix of every summary's marker (the full marker names the head SHA).
const SUMMARY_PREFIX: &str = "<!-- sweepgate:recipe-lint";

pub(crate) struct RecipeLint {
    services: Services,
}

impl RecipeLint {
    pub(crate) fn new(services: Services) -> Self {
        Self { services }
    }
}

#[async_trait]
impl Handler for RecipeLint {
    fn id(&self) -> crate::events::HandlerId {
        crate::events::HandlerId::RecipeLint
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        let Event::PullRequest(ev) = event else {
            return Ok(());
        };
        let pr = &ev.pull_request;
        let (Some(head), Some(base)) = (pr.head.as_ref(), pr.base.as_ref()) else {
            return Ok(());
        };
        let Scope {
            repo,
            api,
            cfg,
            default_branch: _,
        } = self.services.scope(ctx).await?;
        let files = api.pr_files(&repo, pr.number).await?;
        if !files.iter().any(|f| touches_recipes(&cfg, &f.filename)) {
            return Ok(());
        }
        let src = GitHubSource::new(api.clone(), repo.clone())?;
        let opts = crate::lint::gather::Gather::new(Some(pr.number.0), cfg);
        let mut input = crate::lint::gather::from_source(&src, &base.sha, &head.sha, opts)
            .await
            .map_err(|e| HandlerError::Transient {
                message: e.to_string(),
                retry_after: e.retry_after(),
            })?;
        // A PR's changelog links point at the repository it lives in.
        input.data.repository = repo.0.clone();
        let judged = lint_judged(&input);
        let count = |s: Severity| {
            judged
                .iter()
                .filter(|j| j.is_new() && j.finding.severity == s)
                .count()
        };
        let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
        let existing = judged.iter().filter(|j| !j.is_new()).count();
        let touched = |path: &str| input.changed.iter().any(|c| c.path == path);
        let body = summary::render(&head.sha, &judged, touched)
            .map_err(|e| HandlerError::Permanent(e.to_string()))?;
        let annotations: Vec<_> = judged
            .iter()
            .filter(|j| j.annotate())
            .map(|j| {
                let f = &j.finding;
                json!({
                    "path": f.file,
                    "start_line": f.line,
                    "end_line": f.line,
                    "annotation_level": match f.severity {
                        Severity::Error => "failure",
                        Severity::Warning => "warning",
                        Severity::Info => "notice",
                    },
                    "title": if j.is_new() { f.rule.to_owned() } else { format!("{} (pre-existing)", f.rule) },
                    "message": match &f.fix {
                        Some(fix) => format!("{} Fix: {fix}", f.message),
                        None => f.message.clone(),
                    },
                })
            })
            .collect();
        let conclusion = if has_new_errors(&judged) {
            "failure"
        } else {
            "success"
        };
        let mut title = format!("{errors} errors, {warnings} warnings");
        if existing > 0 {
            title.push_str(&format!(" ({existing} pre-existing)"));
        }
        // GitHub refuses a summary over its limit; the comment is cut by
        // `publish::upsert`.
        let summary = crate::comments::fit(&body, crate::comments::SUMMARY_LIMIT, None);
        let report = CheckRunReport {
            name: LINT_CHECK,
            head_sha: &head.sha,
            conclusion,
            title: &title,
            summary: &summary,
            annotations: &annotations,
        };
        api.check_run_with_annotations(&repo, &report).await?;
        publish::upsert(&api, &repo, pr.number, SUMMARY_PREFIX, &body).await?;
        super::record_activity(
            &ctx.store,
            &repo,
            pr.number,
            Some(&head.sha),
            "lint",
            &title,
            &json!({ "findings": judged }),
        )
        .await?;
        Ok(())
    }
}
