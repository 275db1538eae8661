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
    /// What each primary label means, for its description.
    pub roles: &'a sweepgate_core::config::repo::LabelRoles,
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
    /// `file:line: message`, one per deprecated file or key in use.
    pub notes: &'a [String],
}

/// The marker of the configuration validation comment.
pub(crate) const CONFIG_CHECK_MARKER: &str = "<!-- sweepgate:config-check -->";

/// What became of `/verify` (also: an `/ack-check` over its cap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VerifyState {
    Pass,
    Rejected,
    /// No sign-off on the PR (as its author wrote it).
    NoSignoff,
    /// The latest sign-off covers no commit sweepgate can name.
    Stale,
    /// The user's verifier runs on the PR this hour are used up.
    Capped,
}

/// The answer to `/verify`: the verdict it published, or why none.
#[derive(Template)]
#[template(path = "verify-reply.md", escape = "none")]
pub(crate) struct VerifyReply<'a> {
    pub user: &'a str,
    pub state: VerifyState,
    /// The assessed commit (`Pass`, `Rejected`), the head (`Stale`).
    pub sha: &'a str,
    pub signer: &'a str,
    /// The verdict (`Pass`, `Rejected`), the sign-off (`Stale`).
    pub url: &'a str,
    pub limit: u32,
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

/// Why a sign-off got no verdict (`docs/contracts.md` §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The author may not sign this PR.
    NotASigner,
    /// No head was recorded before the comment.
    NoRecord,
    /// A push landed less than a minute before the comment.
    RecentPush,
    /// The author's hourly verifier runs on the PR are used up.
    Capped,
}

/// The reply to a sign-off that got no verdict.
#[derive(Template)]
#[template(path = "signoff-refused.md", escape = "none")]
pub(crate) struct SignoffRefused<'a> {
    pub marker: &'a str,
    pub user: &'a str,
    pub state: Refusal,
    /// The commit pushed just before (`RecentPush`).
    pub covers: &'a str,
    /// The PR's head now.
    pub head: &'a str,
    pub seconds: i64,
    pub limit: u32,
}

/// The verdict's note when a sign-off links more upstream pull requests
/// than one sign-off may make sweepgate read.
#[derive(Template)]
#[template(path = "links-capped.md", escape = "none")]
pub(crate) struct LinksCapped {
    pub links: usize,
    pub read: usize,
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

/// Escapes text taken from a PR or a comment where a comment quotes it
/// (`docs/contracts.md` §4): only what could break out — `@` (a mention),
/// `<` (an HTML comment or tag hiding the rest), `|` (a table cell),
/// backticks (a code span) and newlines. Everything else stays as written,
/// so ordinary text is byte-identical.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev: Option<char> = None;
    for ch in s.chars() {
        match ch {
            // `a@b` (an image digest, an e-mail) mentions nobody.
            '@' if prev.is_some_and(|p| p.is_alphanumeric() || p == '_') => out.push('@'),
            '@' => out.push_str("&#64;"),
            '<' => out.push_str("&lt;"),
            '|' => out.push_str("&#124;"),
            '`' => out.push_str("&#96;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
        prev = Some(ch);
    }
    out
}

/// GitHub's longest comment body, in characters.
pub(crate) const COMMENT_LIMIT: usize = 65_536;
/// GitHub's longest check-run summary, in characters.
pub(crate) const SUMMARY_LIMIT: usize = 65_535;

/// The note that ends a cut text.
#[derive(Template)]
#[template(path = "cut.md", escape = "none")]
struct Cut<'a> {
    lines: usize,
    chars: usize,
    link: Option<&'a str>,
}

/// `text` if it fits in `limit` characters; otherwise cut at a line
/// boundary, with a count of what was left out and a link to where the
/// whole of it is shown (`docs/contracts.md` §4), so GitHub never refuses
/// the text with a 422 and nothing is posted.
pub fn fit(text: &str, limit: usize, link: Option<&str>) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text.to_owned();
    }
    // The note is at most this long (counts of up to 20 digits each, the
    // link as given).
    let room = limit.saturating_sub(200 + link.map_or(0, |l| l.chars().count()));
    let mut kept = 0usize;
    let mut end = 0usize;
    for line in text.split_inclusive('\n') {
        let n = line.chars().count();
        if kept + n > room {
            break;
        }
        kept += n;
        end += line.len();
    }
    let rest = &text[end..];
    let note = render(&Cut {
        lines: rest.split_inclusive('\n').count(),
        chars: total - kept,
        link,
    });
    let mut out = String::with_capacity(end + note.len() + 1);
    out.push_str(&text[..end]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&note);
    out.push('\n');
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
    fn quote_escapes_only_what_breaks_out() {
        assert_eq!(
            quote("x @InferenceX/core <!-- a|b `c`\nd"),
            "x &#64;InferenceX/core &lt;!-- a&#124;b &#96;c&#96; d"
        );
        let plain = "configs/nvidia-master.yaml: TP8, EP8 (dp-attention) > 3 & more, img@sha256:ab";
        assert_eq!(quote(plain), plain);
    }

    #[test]
    fn a_long_text_is_cut_at_a_line_with_a_count_and_a_link() {
        let line = "x".repeat(99) + "\n";
        let text = line.repeat(1000);
        assert_eq!(fit(&text, 100_000, None), text);
        let cut = fit(&text, 10_000, Some("https://d.example/pr/1"));
        assert!(cut.chars().count() <= 10_000, "{}", cut.len());
        let kept = cut.lines().filter(|l| *l == &line[..99]).count();
        assert!(kept >= 97, "{kept}");
        assert!(
            cut.ends_with(&format!(
                "\n… {} more lines ({} characters) were left out to stay within GitHub's limit; the whole text: https://d.example/pr/1\n",
                1000 - kept,
                (1000 - kept) * 100
            )),
            "{}",
            &cut[cut.len() - 300..]
        );
        // A single line longer than the limit: nothing of it is kept.
        let one = "y".repeat(70_000);
        let cut = fit(&one, COMMENT_LIMIT, None);
        assert!(cut.starts_with("… 1 more line (70000 characters)"), "{cut}");
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
            roles: &cfg.labels.roles,
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
