//! The verdict (`docs/contracts.md` §6): the comment (through
//! `templates/verdict.md`), its marker, the superseded form of an old
//! head's comment, the `codeowner-signoff-verify` commit status, and the
//! data of the `sweepgate / verdict` check run. The snapshot it judges is
//! gathered by `crate::snapshot`.

use askama::Template;
use serde::Serialize;

use sweepgate_core::checks::snapshot::Snapshot;
use sweepgate_core::checks::{CheckResult, Evidence, Outcome, verifier};
use sweepgate_core::config::RepoConfig;

pub(crate) const STATUS_SUCCESS: &str = "CODEOWNER sign-off independently verified";
pub(crate) const STATUS_FAILURE: &str = "Sign-off verification rejected - see verdict comment";
pub(crate) const CHECK_RUN_NAME: &str = "sweepgate / verdict";

/// The hidden marker of the verdict comment for a head SHA.
pub(crate) fn marker(sha: &str) -> String {
    format!("<!-- codeowner-signoff-verify sha={sha} -->")
}

/// The SHA a verdict comment's marker names (`None` for other comments and
/// for superseded verdicts).
pub(crate) fn marker_sha(body: &str) -> Option<&str> {
    let first = body.lines().next()?.trim();
    let rest = first.strip_prefix("<!-- codeowner-signoff-verify sha=")?;
    let sha = rest.strip_suffix(" -->")?;
    (!sha.contains(' ')).then_some(sha)
}

/// One verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub head_sha: String,
    pub signer: String,
    pub rows: Vec<CheckResult>,
    /// The PR head when the verdict was computed, if it moved past the pin.
    pub head_moved_to: Option<String>,
    /// The run whose artifacts were assessed.
    pub run: Option<u64>,
    /// The curves Check 14 assessed, for the dashboard's plot.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pareto: Vec<sweepgate_core::checks::c14_pareto::Series>,
    /// Where the dashboard shows the plot (linked from the comment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plot_url: Option<String>,
    /// Limits the assessment ran into (e.g. upstream links left unread).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<String>,
}

impl Verdict {
    /// PASS only when no row blocks.
    pub fn passed(&self) -> bool {
        !self.rows.iter().any(CheckResult::is_blocking)
    }
    pub(crate) fn blocking(&self) -> Vec<&CheckResult> {
        self.rows.iter().filter(|r| r.is_blocking()).collect()
    }
}

/// Runs every check and forms the verdict.
pub fn verify(s: &Snapshot, cfg: &RepoConfig) -> Verdict {
    Verdict {
        head_sha: s.pr.head_sha.clone(),
        signer: s.signer().unwrap_or("unknown").to_owned(),
        rows: verifier::run_all(s, cfg),
        head_moved_to: s
            .pr
            .current_head_sha
            .clone()
            .filter(|h| !h.is_empty() && *h != s.pr.head_sha),
        run: s.pinned_run.as_ref().map(|r| r.id),
        pareto: sweepgate_core::checks::c14_pareto::series(s, cfg),
        plot_url: None,
        limits: Vec::new(),
    }
}

/// One row as the comment shows it.
pub fn row_line(r: &CheckResult) -> String {
    let emoji = match r.outcome {
        Outcome::Pass => "✅",
        Outcome::NotApplicable => "➖",
        Outcome::Fail | Outcome::Review => {
            if r.advisory {
                "✅"
            } else {
                "❌"
            }
        }
    };
    let outcome = match &r.acknowledged {
        Some(a) => format!(
            "PASS (acknowledged by @{}: {})",
            a.user,
            crate::comments::quote(&sweepgate_core::checks::one_line(&a.reason))
        ),
        None => r.outcome.as_str().to_owned(),
    };
    format!(
        "{emoji} Check {} ({}): {outcome} — {}",
        r.number, r.name, r.reason
    )
}

/// The one-line blocking summary after `@<signer>`.
pub(crate) fn blocking_summary(v: &Verdict) -> String {
    let b = v.blocking();
    let names: Vec<String> = b
        .iter()
        .map(|r| format!("Check {} ({}) {}", r.number, r.name, r.outcome.as_str()))
        .collect();
    format!(
        "your sign-off was not verified: {} blocking check{} — {}.",
        b.len(),
        if b.len() == 1 { "" } else { "s" },
        names.join(", ")
    )
}

#[derive(Template)]
#[template(path = "verdict.md", escape = "none")]
struct VerdictTemplate<'a> {
    marker: String,
    passed: bool,
    signer: &'a str,
    summary: String,
    blocking: Vec<String>,
    others: Vec<String>,
    notes: Vec<String>,
    plot_url: &'a str,
    head_sha: &'a str,
}

/// The comment body.
pub fn render_comment(v: &Verdict) -> String {
    let passed = v.passed();
    let blocking: Vec<String> = v.blocking().into_iter().map(row_line).collect();
    let others: Vec<String> = v
        .rows
        .iter()
        .filter(|r| !r.is_blocking())
        .map(row_line)
        .collect();
    let notes: Vec<String> = v
        .head_moved_to
        .iter()
        .map(|h| {
            format!(
                "The PR head moved to {h} after the sign-off; this verdict assesses the signed commit, and a fresh sign-off is needed for the new commit."
            )
        })
        .chain(v.limits.iter().cloned())
        .collect();

    let t = VerdictTemplate {
        marker: marker(&v.head_sha),
        passed,
        signer: &v.signer,
        summary: if passed {
            String::new()
        } else {
            blocking_summary(v)
        },
        blocking,
        others,
        notes,
        plot_url: v.plot_url.as_deref().unwrap_or(""),
        head_sha: &v.head_sha,
    };
    match t.render() {
        Ok(s) => s,
        Err(e) => format!(
            "{}\nsweepgate could not render this verdict: {e}\n",
            marker(&v.head_sha)
        ),
    }
}

/// The body an old head's verdict comment is edited to: its marker no
/// longer names a live SHA, and a first line points at the new head.
pub(crate) fn superseded(old_body: &str, new_sha: &str) -> String {
    let old_sha = marker_sha(old_body).unwrap_or("unknown");
    let rest = old_body.split_once('\n').map_or("", |(_, r)| r);
    format!(
        "<!-- codeowner-signoff-verify sha={old_sha} superseded-by={new_sha} -->\n> Superseded: this verdict assessed {old_sha}; the PR head is now {new_sha}, which needs its own sign-off and verdict.\n\n{rest}"
    )
}

/// A commit status to set on the head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusUpdate {
    pub sha: String,
    pub context: String,
    /// `success` or `failure`.
    pub state: String,
    pub description: String,
    pub target_url: Option<String>,
}

/// The status description on a head the verdict does not cover
/// (`docs/contracts.md` §3); short SHAs keep it within GitHub's 140.
pub(crate) fn stale_description(covered: &str, head: &str) -> String {
    format!("sign-off covers {covered}, head is {head}; sign again")
}

/// `success` only on PASS, under the default context.
pub fn status(v: &Verdict, comment_url: Option<&str>) -> StatusUpdate {
    status_in(
        v,
        comment_url,
        &sweepgate_core::config::SignoffSettings::default().status_context,
    )
}

/// `success` only on PASS, under the configured `context`.
pub(crate) fn status_in(v: &Verdict, comment_url: Option<&str>, context: &str) -> StatusUpdate {
    let (state, description) = if v.passed() {
        ("success", STATUS_SUCCESS)
    } else {
        ("failure", STATUS_FAILURE)
    };
    StatusUpdate {
        sha: v.head_sha.clone(),
        context: context.into(),
        state: state.into(),
        description: description.into(),
        target_url: comment_url.map(str::to_owned),
    }
}

/// An annotation of the check run (GitHub's check-run annotation fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Annotation {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    /// `failure` for FAIL, `warning` for REVIEW.
    pub annotation_level: String,
    pub title: String,
    pub message: String,
}

/// The `sweepgate / verdict` check run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRunOutput {
    pub name: String,
    pub head_sha: String,
    /// `success` or `failure`.
    pub conclusion: String,
    pub title: String,
    pub summary: String,
    pub annotations: Vec<Annotation>,
}

/// Check-run data: one annotation per blocking row with a file location.
pub fn check_run(v: &Verdict) -> CheckRunOutput {
    let mut annotations = Vec::new();
    for r in v.blocking() {
        for e in &r.evidence {
            if let Evidence::File { path, line } = e {
                let line = (*line).max(1);
                annotations.push(Annotation {
                    path: path.clone(),
                    start_line: line,
                    end_line: line,
                    annotation_level: if r.outcome == Outcome::Fail {
                        "failure"
                    } else {
                        "warning"
                    }
                    .into(),
                    title: format!("Check {} ({}): {}", r.number, r.name, r.outcome.as_str()),
                    message: r.reason.clone(),
                });
                break;
            }
        }
    }
    let passed = v.passed();
    let body = render_comment(v);
    CheckRunOutput {
        name: CHECK_RUN_NAME.into(),
        head_sha: v.head_sha.clone(),
        conclusion: if passed { "success" } else { "failure" }.into(),
        title: if passed {
            "Verdict: PASS".into()
        } else {
            match v.blocking().len() {
                1 => "REJECTED: 1 blocking check".to_owned(),
                n => format!("REJECTED: {n} blocking checks"),
            }
        },
        summary: body
            .split_once('\n')
            .map_or(String::new(), |(_, r)| r.to_owned()),
        annotations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(rows: Vec<CheckResult>) -> Verdict {
        Verdict {
            head_sha: "abc".into(),
            signer: "nv".into(),
            rows,
            head_moved_to: None,
            run: None,
            pareto: Vec::new(),
            plot_url: None,
            limits: Vec::new(),
        }
    }

    #[test]
    fn pass_comment_format() {
        let v = verdict(vec![
            CheckResult::pass(0, "ok."),
            CheckResult::na(12, "none."),
        ]);
        assert_eq!(
            render_comment(&v),
            "<!-- codeowner-signoff-verify sha=abc -->\n## ✅✅✅ **Verdict: PASS** ✅✅✅\n\n**Passed and not applicable checks**\n\n✅ Check 0 (CODEOWNER): PASS — ok.\n\n➖ Check 12 (Append-only): N/A — none.\n\nAssessed commit: abc."
        );
        let st = status(&v, Some("https://x/c/1"));
        assert_eq!(
            (st.state.as_str(), st.description.as_str()),
            ("success", STATUS_SUCCESS)
        );
    }

    #[test]
    fn rejected_comment_puts_blocking_rows_first() {
        let mut acked = CheckResult::review(3, "arg absent.");
        acked.outcome = Outcome::Pass;
        acked.acknowledged = Some(sweepgate_core::checks::Acknowledgement {
            user: "lead".into(),
            reason: "equivalent".into(),
            url: String::new(),
        });
        let v = verdict(vec![
            CheckResult::pass(0, "ok."),
            acked,
            CheckResult::review(14, "4 points.").file("configs/nvidia-master.yaml", 7),
            CheckResult::fail(5, "stale."),
        ]);
        let body = render_comment(&v);
        assert_eq!(
            body,
            "<!-- codeowner-signoff-verify sha=abc -->\n## ❌❌❌ **REJECTED** ❌❌❌\n@nv your sign-off was not verified: 2 blocking checks — Check 14 (Pareto coverage) REVIEW, Check 5 (Checklist template) FAIL.\n\n**Blocking checks**\n\n❌ Check 14 (Pareto coverage): REVIEW — 4 points.\n\n❌ Check 5 (Checklist template): FAIL — stale.\n\n**Passed and not applicable checks**\n\n✅ Check 0 (CODEOWNER): PASS — ok.\n\n✅ Check 3 (Upstream recipe): PASS (acknowledged by @lead: equivalent) — arg absent.\n\nAssessed commit: abc."
        );
        let st = status_in(&v, None, "old-verifier");
        assert_eq!(st.context, "old-verifier");
        assert_eq!(
            (st.state.as_str(), st.description.as_str()),
            ("failure", STATUS_FAILURE)
        );
        let cr = check_run(&v);
        assert_eq!(cr.name, "sweepgate / verdict");
        assert_eq!(cr.annotations.len(), 1);
        assert_eq!(cr.annotations[0].start_line, 7);
        assert_eq!(cr.annotations[0].annotation_level, "warning");
    }

    #[test]
    fn superseded_marker_no_longer_names_the_sha() {
        let v = verdict(vec![CheckResult::pass(0, "ok.")]);
        let body = render_comment(&v);
        assert_eq!(marker_sha(&body), Some("abc"));
        let old = superseded(&body, "def");
        assert_eq!(marker_sha(&old), None);
        assert!(old.contains("Superseded: this verdict assessed abc; the PR head is now def"));
    }

    #[test]
    fn moved_head_note() {
        let mut v = verdict(vec![CheckResult::pass(0, "ok.")]);
        v.head_moved_to = Some("def".into());
        assert!(
            render_comment(&v).contains(
                "a fresh sign-off is needed for the new commit.\n\nAssessed commit: abc."
            )
        );
    }
}
