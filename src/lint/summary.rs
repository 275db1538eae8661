//! The recipe-lint summary comment (`docs/contracts.md` §4): 🔴 errors,
//! 🟡 warnings, ℹ️ info collapsed; one line per finding with `file:line`,
//! the rule id and the fix; a clean PR gets one line saying so.

use askama::Template;

use sweepgate_core::checks::lint::{Finding, Severity};

/// The hidden marker of the summary comment for a head SHA.
pub fn marker(head_sha: &str) -> String {
    format!("<!-- sweepgate:recipe-lint sha={head_sha} -->")
}

/// One rendered line of the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SummaryLine {
    pub location: String,
    pub rule: String,
    pub message: String,
    pub fix: Option<String>,
}

impl SummaryLine {
    fn from(f: &Finding) -> Self {
        Self {
            location: format!("{}:{}", f.file, f.line),
            rule: f.rule.to_string(),
            message: f.message.replace('\n', " "),
            fix: f.fix.clone(),
        }
    }
}

/// Findings grouped for the comment.
#[derive(Debug, Clone, PartialEq, Eq, Template)]
#[template(path = "lint-summary.md", escape = "none")]
pub(crate) struct Summary {
    pub marker: String,
    pub head_sha: String,
    pub errors: Vec<SummaryLine>,
    pub warnings: Vec<SummaryLine>,
    pub infos: Vec<SummaryLine>,
}

impl Summary {
    pub(crate) fn new(head_sha: &str, findings: &[Finding]) -> Self {
        let pick = |s: Severity| {
            findings
                .iter()
                .filter(|f| f.severity == s)
                .map(SummaryLine::from)
                .collect()
        };
        Self {
            marker: marker(head_sha),
            head_sha: head_sha.to_string(),
            errors: pick(Severity::Error),
            warnings: pick(Severity::Warning),
            infos: pick(Severity::Info),
        }
    }

    pub(crate) fn is_clean(&self) -> bool {
        self.errors.is_empty() && self.warnings.is_empty() && self.infos.is_empty()
    }

    pub(crate) fn short_sha(&self) -> &str {
        self.head_sha.get(..7).unwrap_or(&self.head_sha)
    }
}

/// The comment body.
pub fn render(head_sha: &str, findings: &[Finding]) -> Result<String, askama::Error> {
    Summary::new(head_sha, findings).render()
}
