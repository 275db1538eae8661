//! The recipe-lint summary comment (`docs/contracts.md` §4): 🔴 errors,
//! 🟡 warnings, ℹ️ info collapsed; one line per finding with `file:line`,
//! the rule id and the fix; a clean PR gets one line saying so. Only what
//! the PR introduces is listed open: findings that were already there in
//! the files it touches are listed collapsed, with counts, and those in
//! other files are only counted.

use askama::Template;

use sweepgate_core::checks::lint::{Finding, Judged, Severity};

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
    pub severity: &'static str,
}

impl SummaryLine {
    fn from(f: &Finding) -> Self {
        Self {
            location: format!("{}:{}", f.file, f.line),
            rule: f.rule.to_string(),
            message: f.message.replace('\n', " "),
            fix: f.fix.clone(),
            severity: match f.severity {
                Severity::Error => "🔴",
                Severity::Warning => "🟡",
                Severity::Info => "ℹ️",
            },
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
    /// Pre-existing findings in files the PR touches.
    pub existing: Vec<SummaryLine>,
    /// Pre-existing counts by severity (errors, warnings, info), touched
    /// files only.
    pub existing_counts: (usize, usize, usize),
    /// Pre-existing findings in files the PR does not touch.
    pub existing_elsewhere: usize,
}

impl Summary {
    /// `touched` says whether the PR changes a file (head path).
    pub(crate) fn new(head_sha: &str, judged: &[Judged], touched: impl Fn(&str) -> bool) -> Self {
        let pick = |s: Severity| {
            judged
                .iter()
                .filter(|j| j.is_new() && j.finding.severity == s)
                .map(|j| SummaryLine::from(&j.finding))
                .collect()
        };
        let (here, elsewhere): (Vec<&Judged>, Vec<&Judged>) = judged
            .iter()
            .filter(|j| !j.is_new())
            .partition(|j| touched(&j.finding.file));
        let count = |s: Severity| here.iter().filter(|j| j.finding.severity == s).count();
        Self {
            marker: marker(head_sha),
            head_sha: head_sha.to_string(),
            errors: pick(Severity::Error),
            warnings: pick(Severity::Warning),
            infos: pick(Severity::Info),
            existing: here.iter().map(|j| SummaryLine::from(&j.finding)).collect(),
            existing_counts: (
                count(Severity::Error),
                count(Severity::Warning),
                count(Severity::Info),
            ),
            existing_elsewhere: elsewhere.len(),
        }
    }

    /// No new finding.
    pub(crate) fn is_clean(&self) -> bool {
        self.errors.is_empty() && self.warnings.is_empty() && self.infos.is_empty()
    }

    /// Nothing at all, new or pre-existing.
    pub(crate) fn is_spotless(&self) -> bool {
        self.is_clean() && self.existing.is_empty() && self.existing_elsewhere == 0
    }

    pub(crate) fn short_sha(&self) -> &str {
        self.head_sha.get(..7).unwrap_or(&self.head_sha)
    }

    /// `2 errors, 1 warning` of the pre-existing findings in touched files.
    pub(crate) fn existing_tally(&self) -> String {
        let (e, w, i) = self.existing_counts;
        let mut parts = Vec::new();
        let mut part = |n: usize, one: &str, many: &str| {
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        };
        part(e, "error", "errors");
        part(w, "warning", "warnings");
        part(i, "info", "info");
        parts.join(", ")
    }
}

/// The comment body; `touched` says whether the PR changes a file.
pub fn render(
    head_sha: &str,
    judged: &[Judged],
    touched: impl Fn(&str) -> bool,
) -> Result<String, askama::Error> {
    Summary::new(head_sha, judged, touched).render()
}
