//! Runs checks 0–17 over one snapshot and applies `/ack-check`
//! acknowledgements (`docs/contracts.md` §3, §6).
use super::snapshot::{AckRecord, Comment};
use super::{
    Acknowledgement, CheckResult, Outcome, Snapshot, c00_codeowner, c01_sweep, c02_evals,
    c03_upstream, c04_reuse, c05_checklist, c06_image, c07_deprecated, c08_arch, c09_chat,
    c10_patches, c11_golden, c12_append, c13_draft, c14_pareto, c15_description, c16_nvidia,
    c17_metrics, command_lines,
};
use crate::config::RepoConfig;

/// A check's entry point.
pub(crate) type CheckFn = fn(&Snapshot, &RepoConfig) -> CheckResult;

/// Checks 0–17, in order.
pub(crate) const CHECKS: [CheckFn; 18] = [
    c00_codeowner::check,
    c01_sweep::check,
    c02_evals::check,
    c03_upstream::check,
    c04_reuse::check,
    c05_checklist::check,
    c06_image::check,
    c07_deprecated::check,
    c08_arch::check,
    c09_chat::check,
    c10_patches::check,
    c11_golden::check,
    c12_append::check,
    c13_draft::check,
    c14_pareto::check,
    c15_description::check,
    c16_nvidia::check,
    c17_metrics::check,
];

/// Every check, acknowledgements applied.
pub fn run_all(s: &Snapshot, cfg: &RepoConfig) -> Vec<CheckResult> {
    let mut rows: Vec<CheckResult> = CHECKS.iter().map(|c| c(s, cfg)).collect();
    apply_acks(
        &mut rows,
        &s.acks,
        s.signoff.as_ref().map(|x| x.created_at.as_str()),
    );
    rows
}

/// Turns acknowledged REVIEW rows into PASS: the newest ack per check
/// wins; acks older than the sign-off (when both times are known) and acks
/// for rows that are not REVIEW change nothing.
pub(crate) fn apply_acks(rows: &mut [CheckResult], acks: &[AckRecord], signed_at: Option<&str>) {
    for row in rows.iter_mut().filter(|r| r.outcome == Outcome::Review) {
        let ack = acks
            .iter()
            .filter(|a| a.check == row.number)
            .filter(|a| match signed_at {
                Some(t) if !t.is_empty() && !a.created_at.is_empty() => a.created_at.as_str() >= t,
                _ => true,
            })
            .max_by(|a, b| a.created_at.cmp(&b.created_at));
        if let Some(a) = ack {
            row.outcome = Outcome::Pass;
            row.acknowledged = Some(Acknowledgement {
                user: a.user.clone(),
                reason: a.reason.clone(),
                url: a.url.clone(),
            });
        }
    }
}

/// Why an `/ack-check` was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AckRefusal {
    #[error("/ack-check needs repository role admin or maintain (@{user} has {role})")]
    Role { user: String, role: String },
    #[error("the PR author (@{user}) cannot acknowledge checks on their own PR")]
    Author { user: String },
    #[error("`{line}` is not `/ack-check <N> <reason>` with N in 0..=17 and a reason")]
    Syntax { line: String },
}

/// Reads `/ack-check <N> <reason>` lines from conversation comments.
/// Authorization (`docs/contracts.md` §3): role admin or maintain, read through
/// the API into `Comment::permission`, and not the PR author.
pub fn parse_acks(
    comments: &[Comment],
    pr_author: &str,
) -> (Vec<AckRecord>, Vec<(String, AckRefusal)>) {
    let mut ok = Vec::new();
    let mut refused = Vec::new();
    for c in comments {
        for (_, line) in command_lines(&c.body) {
            let Some(rest) = line.strip_prefix("/ack-check") else {
                continue;
            };
            if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
                continue;
            }
            let mut parts = rest.trim().splitn(2, char::is_whitespace);
            let n = parts
                .next()
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|n| *n <= 17);
            let reason = parts.next().map(str::trim).unwrap_or("");
            let Some(n) = n.filter(|_| !reason.is_empty()) else {
                refused.push((c.url.clone(), AckRefusal::Syntax { line: line.clone() }));
                continue;
            };
            let role = c.permission.clone().unwrap_or_else(|| "unknown".into());
            if !matches!(role.as_str(), "admin" | "maintain") {
                refused.push((
                    c.url.clone(),
                    AckRefusal::Role {
                        user: c.author.clone(),
                        role,
                    },
                ));
                continue;
            }
            if c.author.eq_ignore_ascii_case(pr_author) {
                refused.push((
                    c.url.clone(),
                    AckRefusal::Author {
                        user: c.author.clone(),
                    },
                ));
                continue;
            }
            ok.push(AckRecord {
                check: n,
                user: c.author.clone(),
                reason: reason.to_owned(),
                url: c.url.clone(),
                created_at: c.created_at.clone(),
            });
        }
    }
    (ok, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(author: &str, role: Option<&str>, body: &str) -> Comment {
        Comment {
            id: 1,
            author: author.into(),
            association: "MEMBER".into(),
            body: body.into(),
            url: "https://github.com/o/r/pull/1#issuecomment-1".into(),
            created_at: "2026-10-16T12:00:00Z".into(),
            permission: role.map(str::to_owned),
        }
    }

    #[test]
    fn maintainer_ack_turns_review_into_pass() {
        let (acks, refused) = parse_acks(
            &[comment(
                "lead",
                Some("maintain"),
                "/ack-check 14 four points is the whole curve",
            )],
            "author",
        );
        assert!(refused.is_empty());
        let mut rows = vec![
            CheckResult::review(14, "x has 4 frontier points"),
            CheckResult::fail(0, "no"),
        ];
        apply_acks(&mut rows, &acks, None);
        assert_eq!(rows[0].outcome, Outcome::Pass);
        assert_eq!(
            rows[0].acknowledged.as_ref().map(|a| a.user.as_str()),
            Some("lead")
        );
        assert_eq!(rows[1].outcome, Outcome::Fail);
    }

    #[test]
    fn writers_authors_and_bad_syntax_are_refused() {
        let (acks, refused) = parse_acks(
            &[
                comment("w", Some("write"), "/ack-check 3 fine"),
                comment("author", Some("admin"), "/ack-check 3 fine"),
                comment("lead", Some("admin"), "/ack-check 30 fine\n/ack-check 3"),
            ],
            "author",
        );
        assert!(acks.is_empty());
        assert_eq!(refused.len(), 4);
        assert!(matches!(refused[0].1, AckRefusal::Role { .. }));
        assert!(matches!(refused[1].1, AckRefusal::Author { .. }));
    }

    #[test]
    fn every_check_runs_on_an_empty_snapshot() {
        let rows = run_all(&Snapshot::default(), &RepoConfig::default());
        assert_eq!(rows.len(), 18);
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(usize::from(r.number), i);
        }
    }
}
