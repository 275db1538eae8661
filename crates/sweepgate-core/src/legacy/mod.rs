//! The verdict comment of the verifier sweepgate replaces (an LLM auditor
//! whose comments carry `<!-- codeowner-signoff-verify sha=… -->`, seed
//! 002), read back row by row so sweepgate's verdict can be shown beside
//! it, check by check (`docs/shadow.md`).
//!
//! The comment is hostile input: only its first [`MAX_BYTES`] are read, at
//! most [`MAX_ROWS`] rows are kept, and a line that does not have a row's
//! shape is skipped, never an error.
use crate::checks::CheckResult;
use serde::{Deserialize, Serialize};

/// The marker every verdict comment of the old verifier starts with.
pub const MARKER: &str = "<!-- codeowner-signoff-verify sha=";
/// Bytes of a comment read at most (GitHub allows 65,536 characters).
pub const MAX_BYTES: usize = 256 * 1024;
/// Rows kept at most.
pub const MAX_ROWS: usize = 64;
/// Characters of a reason kept at most.
const MAX_REASON: usize = 2000;

/// The old verifier's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyVerdict {
    /// The commit its marker names.
    pub sha: String,
    /// `PASS`, `REJECTED`, or `""` when the comment states neither.
    pub verdict: String,
    /// The rows in the comment's order.
    pub rows: Vec<LegacyRow>,
    /// The `Assessed commit:` line, when present.
    pub assessed_commit: Option<String>,
}

/// One `✅ Check 3 (Upstream recipe): PASS — reason` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyRow {
    pub number: u8,
    pub name: String,
    /// `PASS`, `FAIL`, `REVIEW`, `N/A`, or whatever word it wrote.
    pub outcome: String,
    pub reason: String,
}

/// The verdict in `body`, when it is one (the marker with a hex SHA).
pub fn parse(body: &str) -> Option<LegacyVerdict> {
    let body = cut(body, MAX_BYTES);
    let at = body.find(MARKER)?;
    let rest = &body[at + MARKER.len()..];
    let sha: String = rest
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .take(64)
        .collect();
    if sha.len() < 7 {
        return None;
    }
    let mut verdict = String::new();
    let mut rows = Vec::new();
    let mut assessed_commit = None;
    for line in body.lines() {
        let plain = line.replace("**", "");
        let plain = plain.trim();
        if verdict.is_empty() {
            if plain.contains("Verdict: PASS") {
                verdict = "PASS".into();
            } else if plain.contains("REJECTED") && !plain.contains("Check ") {
                verdict = "REJECTED".into();
            }
        }
        if let Some(c) = plain.strip_prefix("Assessed commit:") {
            let c: String = c
                .trim()
                .chars()
                .take_while(char::is_ascii_hexdigit)
                .collect();
            if !c.is_empty() {
                assessed_commit = Some(c);
            }
        }
        if rows.len() < MAX_ROWS
            && let Some(row) = row(plain)
        {
            rows.push(row);
        }
    }
    Some(LegacyVerdict {
        sha,
        verdict,
        rows,
        assessed_commit,
    })
}

/// At most `max` bytes of `s`, on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A row line: an optional emoji, `Check N (Name): OUTCOME`, then an
/// optional ` — reason`.
fn row(line: &str) -> Option<LegacyRow> {
    let start = line.find("Check ")?;
    // Only a mark (emoji, bullet) may come before `Check`.
    if line[..start].chars().any(char::is_alphanumeric) {
        return None;
    }
    let rest = &line[start + "Check ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let number: u8 = digits.parse().ok()?;
    let rest = rest[digits.len()..].strip_prefix(" (")?;
    let close = rest.find("): ")?;
    let name = &rest[..close];
    if name.is_empty() || name.len() > 80 || name.contains('(') {
        return None;
    }
    let rest = &rest[close + 3..];
    let (outcome, reason) = match rest.split_once(" — ") {
        Some((o, r)) => (o.trim(), r.trim()),
        None => (rest.trim(), ""),
    };
    let word = outcome.split_whitespace().next().unwrap_or("");
    if word.is_empty() || word.len() > 16 {
        return None;
    }
    Some(LegacyRow {
        number,
        name: name.to_owned(),
        outcome: word.to_owned(),
        reason: reason.chars().take(MAX_REASON).collect(),
    })
}

/// One check, both verifiers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowComparison {
    pub number: u8,
    pub name: String,
    /// sweepgate's outcome and reason (`None`: it has no such row).
    pub ours: Option<(String, String)>,
    /// The old verifier's.
    pub theirs: Option<(String, String)>,
    /// Both have the row with the same outcome.
    pub same: bool,
}

/// sweepgate's outcome as the old verifier writes it: an acknowledged
/// REVIEW is a PASS.
fn our_outcome(r: &CheckResult) -> String {
    if r.acknowledged.is_some() {
        "PASS".into()
    } else {
        r.outcome.as_str().into()
    }
}

/// Check by check, in check order: both rows, and whether they agree.
pub fn compare(ours: &[CheckResult], theirs: &LegacyVerdict) -> Vec<RowComparison> {
    let mut numbers: Vec<u8> = ours
        .iter()
        .map(|r| r.number)
        .chain(theirs.rows.iter().map(|r| r.number))
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    numbers
        .into_iter()
        .map(|n| {
            let o = ours.iter().find(|r| r.number == n);
            let t = theirs.rows.iter().find(|r| r.number == n);
            let ours = o.map(|r| (our_outcome(r), r.reason.clone()));
            let theirs = t.map(|r| (r.outcome.clone(), r.reason.clone()));
            let same =
                matches!((&ours, &theirs), (Some(a), Some(b)) if a.0.eq_ignore_ascii_case(&b.0));
            RowComparison {
                number: n,
                name: o
                    .map(|r| r.name.clone())
                    .or_else(|| t.map(|r| r.name.clone()))
                    .unwrap_or_default(),
                ours,
                theirs,
                same,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_verdict_are_read() {
        let body = "<!-- codeowner-signoff-verify sha=86ace5cf836ad92bf302c3d39d3ff48b2f98af2c -->\n\
            ✅✅✅ Verdict: PASS ✅✅✅\n\n\
            ✅ Check 0 (CODEOWNER): PASS — @a owns it.\n\n\
            ➖ Check 12 (Append-only): N/A — none.\n\n\
            ❌ **Check 14 (Pareto coverage): REVIEW** — 4 points.\n\n\
            Assessed commit: 86ace5cf836ad92bf302c3d39d3ff48b2f98af2c.";
        let v = parse(body).unwrap();
        assert_eq!(v.verdict, "PASS");
        assert_eq!(v.sha, "86ace5cf836ad92bf302c3d39d3ff48b2f98af2c");
        assert_eq!(v.assessed_commit.as_deref(), Some(v.sha.as_str()));
        let rows: Vec<(u8, &str, &str)> = v
            .rows
            .iter()
            .map(|r| (r.number, r.name.as_str(), r.outcome.as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                (0, "CODEOWNER", "PASS"),
                (12, "Append-only", "N/A"),
                (14, "Pareto coverage", "REVIEW")
            ]
        );
    }

    #[test]
    fn hostile_comments_give_nothing_or_bounded_rows() {
        assert_eq!(parse("no marker here"), None);
        assert_eq!(parse("<!-- codeowner-signoff-verify sha=zz -->"), None);
        assert_eq!(parse("<!-- codeowner-signoff-verify sha="), None);
        let many = format!(
            "<!-- codeowner-signoff-verify sha=abcdef0 -->\n{}",
            "✅ Check 1 (X): PASS — y\n".repeat(10_000)
        );
        assert_eq!(parse(&many).unwrap().rows.len(), MAX_ROWS);
        // Prose that mentions a check is not a row; a number over 255 neither.
        let v = parse(
            "<!-- codeowner-signoff-verify sha=abcdef0 -->\nSee Check 3 (Upstream): FAIL — x\n✅ Check 300 (X): PASS\n✅ Check 2 (Evals):\n",
        )
        .unwrap();
        assert!(v.rows.is_empty());
        // A cut inside a character does not panic.
        let wide = format!(
            "<!-- codeowner-signoff-verify sha=abcdef0 -->{}",
            "é".repeat(MAX_BYTES)
        );
        assert!(parse(&wide).is_some());
    }
}
