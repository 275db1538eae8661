//! Rendering of every comment sweepgate posts, through the askama templates
//! in `templates/` (compiled in, so a missing field is a build error). The
//! texts live in the templates; this module only shapes their inputs and
//! escapes what users control.
use askama::Template;

/// Marker of the contribution guide, shared with the reference automation so
/// a PR that already has the old bot's comment gets no second one.
pub(crate) const GUIDE_MARKER: &str = "<!-- recipe-reminder -->";

#[derive(Template)]
#[template(path = "guide.md", escape = "none")]
pub(crate) struct Guide<'a> {
    pub core_team: &'a str,
    pub codeowners_url: &'a str,
    pub checklist_url: &'a str,
    pub contact: &'a str,
    pub changelog: &'a str,
    pub primary: &'a [String],
    pub modifiers: &'a [String],
    pub label_docs_url: &'a str,
    pub rerun_docs_url: &'a str,
}

/// One row of the `/help` table, already escaped for a table cell.
pub(crate) struct HelpRow {
    pub syntax: String,
    pub description: String,
    pub who: String,
}

impl HelpRow {
    pub(crate) fn new(syntax: &str, description: &str, who: &str) -> Self {
        Self {
            // Inside a code span entities are shown literally: only pipes.
            syntax: syntax.replace('|', "\\|"),
            description: cell(description),
            who: cell(who),
        }
    }
}

#[derive(Template)]
#[template(path = "help.md", escape = "none")]
pub(crate) struct Help<'a> {
    pub user: &'a str,
    pub commands: &'a [HelpRow],
}

/// The answers to the commands of one comment, marked with the comment it
/// answers so a retried job edits instead of posting twice.
#[derive(Template)]
#[template(path = "reply.md", escape = "none")]
pub(crate) struct Reply<'a> {
    pub comment_id: u64,
    pub answers: &'a [String],
}

/// The validation of a PR that changes sweepgate's own configuration.
#[derive(Template)]
#[template(path = "config-check.md", escape = "none")]
pub(crate) struct ConfigCheck<'a> {
    pub sha: &'a str,
    /// The changed configuration files, as `a` or `a and b`.
    pub files: &'a str,
    pub many: bool,
    pub branch: &'a str,
    /// `file:line:column: message`, one per problem.
    pub problems: &'a [String],
}

/// The marker of the configuration validation comment.
pub(crate) const CONFIG_CHECK_MARKER: &str = "<!-- sweepgate:config-check -->";

/// The answer to `/verify`: the verdict it published, or that there is
/// no sign-off to verify.
#[derive(Template)]
#[template(path = "verify-reply.md", escape = "none")]
pub(crate) struct VerifyReply<'a> {
    pub user: &'a str,
    /// `PASS` or `REJECTED`; `None`: no sign-off on the PR.
    pub verdict: Option<&'a str>,
    pub sha: &'a str,
    pub signer: &'a str,
    pub url: &'a str,
}

/// What became of an `/ack-check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AckState {
    Accepted,
    NotReview,
    NoVerdict,
}

#[derive(Template)]
#[template(path = "ack-reply.md", escape = "none")]
pub(crate) struct AckReply<'a> {
    pub user: &'a str,
    pub state: AckState,
    pub check: u8,
    pub name: &'a str,
    pub sha: &'a str,
    pub reason: &'a str,
    /// The row's outcome (for `NotReview`).
    pub outcome: &'a str,
    /// The verdict after the acknowledgement.
    pub verdict: &'a str,
    pub url: &'a str,
}

/// A command line that could not be read, or was refused.
#[derive(Template)]
#[template(path = "command-error.md", escape = "none")]
pub(crate) struct CommandProblem<'a> {
    pub user: &'a str,
    pub line: usize,
    pub message: &'a str,
}

/// The marker a reply to `comment_id` carries.
pub fn reply_marker(comment_id: u64) -> String {
    format!("<!-- sweepgate:reply comment={comment_id} -->")
}

/// Escapes text for a Markdown table cell: pipes, newlines, and HTML that
/// could hide or fake a marker.
pub(crate) fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Renders; askama fails only on a formatter error, which writing to a
/// `String` never produces, so the fallback is a plain notice, not a panic.
pub(crate) fn render(t: &impl Template) -> String {
    t.render()
        .unwrap_or_else(|e| format!("sweepgate could not render this comment: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_escapes_pipes_and_html() {
        assert_eq!(cell("a|b\n<!-- x -->"), "a\\|b &lt;!-- x --&gt;");
    }

    #[test]
    fn reply_carries_its_marker() {
        let answers = ["@octo hello".to_string(), "@octo again".to_string()];
        let body = render(&Reply {
            comment_id: 42,
            answers: &answers,
        });
        assert_eq!(
            body,
            format!("{}\n@octo hello\n\n@octo again\n", reply_marker(42))
        );
    }
}

#[cfg(test)]
mod guide_tests {
    use super::*;
    use sweepgate_core::config::RepoConfig;

    #[test]
    fn guide_lists_labels_like_the_seed() {
        let cfg = RepoConfig::default();
        let body = render(&Guide {
            core_team: "@SemiAnalysisAI/core",
            codeowners_url: "https://github.com/o/r/blob/main/.github/CODEOWNERS",
            checklist_url: "https://github.com/o/r/blob/main/docs/PR_REVIEW_CHECKLIST.md",
            contact: "Slack",
            changelog: "perf-changelog.yaml",
            primary: &cfg.labels.primary,
            modifiers: &cfg.labels.modifiers,
            label_docs_url: "https://example.test/labels",
            rerun_docs_url: &cfg.links.rerun_docs,
        });
        assert!(body.starts_with(GUIDE_MARKER));
        // seed 002, line 66: the three primary labels and the modifiers.
        assert!(body.contains(
            "carries exactly one primary label: `full-sweep-fail-fast` (strongly recommended; canary plus per-matrix fail-fast), `full-sweep-enabled` (canary; matrix jobs continue after a failure), or `non-canary-full-sweep-enabled` (no canary or fail-fast). The modifiers `all-evals`, `evals-only`, and `agentx-fast` require a primary label."
        ), "{body}");
        assert!(
            body.contains(
                "修饰标签 `all-evals`、`evals-only` 和 `agentx-fast` 必须与主标签一起使用。"
            ),
            "{body}"
        );
        assert!(body.contains("As a PR reviewer and CODEOWNER, I have reviewed this and have"));
    }
}

/// Marker of the result-links comment of one run.
pub(crate) fn results_marker(run: u64) -> String {
    format!("<!-- sweepgate:results run={run} -->")
}

#[derive(Template)]
#[template(path = "results.md", escape = "none")]
pub(crate) struct Results<'a> {
    pub run: u64,
    pub site: &'a str,
    pub run_url: &'a str,
    pub conclusion: &'a str,
    pub families: &'a [sweepgate_core::sweep::results::Family],
    pub canary: &'a str,
}

/// The staging reply, in each of its states.
#[derive(Template)]
#[template(path = "staging.md", escape = "none")]
pub(crate) struct Staging<'a> {
    /// `requested`, `started`, `staged` or `failed`.
    pub state: &'a str,
    pub user: &'a str,
    pub run: u64,
    pub curves: &'a [String],
    pub link: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "run-refused.md", escape = "none")]
pub(crate) struct RunRefused<'a> {
    pub user: &'a str,
    pub run: Option<u64>,
    pub checked: usize,
    pub reason: &'a str,
}

/// Marker of the one sweep-gate comment per PR.
pub(crate) const SWEEP_GATE_MARKER: &str = "<!-- sweepgate:sweep-gate -->";

#[derive(Template)]
#[template(path = "sweep-gate.md", escape = "none")]
pub(crate) struct SweepGate<'a> {
    pub author: &'a str,
    pub sha: &'a str,
    pub reasons: &'a [String],
    pub summary: &'a str,
    pub track: bool,
}
