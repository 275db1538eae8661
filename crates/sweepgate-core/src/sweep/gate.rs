//! The sweep gate (`docs/contracts.md` §2–§3, `docs/reference-automation.md` §2.3):
//! whether a PR's labels, changelog and head commit let a sweep run. Pure;
//! in `track` mode its answer is advisory (a check run and one comment).
use crate::commands::RepoRole;
use crate::config::RepoConfig;
use crate::recipe::changelog::GateReport;

pub struct GateInput<'a> {
    pub cfg: &'a RepoConfig,
    pub labels: &'a [String],
    pub draft: bool,
    pub fork: bool,
    pub head_message: &'a str,
    /// `None` when the PR does not touch the changelog.
    pub changelog: Option<&'a GateReport>,
    /// For fork PRs: who applied the primary label last, and their role.
    pub labeler: Option<(&'a str, RepoRole)>,
    pub head_sha: &'a str,
    /// For fork PRs: the commit a user with write access labelled (the
    /// sweep is bound to it; a new push needs a new label).
    pub fork_bound: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateOutcome {
    /// Neither a sweep label nor a changelog change: not a sweep PR.
    NotASweep,
    /// No sweep on this head, by the author's choice (draft, `[skip-sweep]`).
    Skipped(String),
    Refused(Vec<String>),
    Allowed {
        primary: String,
        modifiers: Vec<String>,
    },
}

pub fn decide(input: &GateInput<'_>) -> GateOutcome {
    let cfg = input.cfg;
    let primary: Vec<&String> = input
        .labels
        .iter()
        .filter(|l| cfg.labels.primary.contains(l))
        .collect();
    let modifiers: Vec<String> = input
        .labels
        .iter()
        .filter(|l| cfg.labels.modifiers.contains(l))
        .cloned()
        .collect();
    if primary.is_empty() && modifiers.is_empty() && input.changelog.is_none() {
        return GateOutcome::NotASweep;
    }
    if input.draft {
        return GateOutcome::Skipped("the PR is a draft".into());
    }
    let mut reasons = Vec::new();
    let list = |v: &[String]| {
        v.iter()
            .map(|l| format!("`{l}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match primary.as_slice() {
        [] => reasons.push(format!(
            "no primary sweep label: add exactly one of {}{}",
            list(&cfg.labels.primary),
            if modifiers.is_empty() {
                String::new()
            } else {
                format!(" (the modifiers {} need one)", list(&modifiers))
            }
        )),
        [_] => {}
        many => reasons.push(format!(
            "{} primary labels ({}): keep exactly one",
            many.len(),
            many.iter()
                .map(|l| format!("`{l}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
    match input.changelog {
        None => reasons.push(format!(
            "the PR appends no entry to `{}`; sweeps run only for appended entries",
            cfg.paths.changelog
        )),
        Some(report) => {
            if report.appended.is_empty() && report.violations.is_empty() {
                reasons.push(format!(
                    "the PR appends no entry to `{}`; sweeps run only for appended entries",
                    cfg.paths.changelog
                ));
            }
            for v in &report.violations {
                reasons.push(format!("{}: {}", v.loc, v.message));
            }
        }
    }
    if input.fork
        && let [label] = primary.as_slice()
    {
        let short = |s: &str| s[..s.len().min(8)].to_owned();
        match input.labeler {
            Some((_, role)) if role >= RepoRole::Write => match input.fork_bound {
                Some(sha) if sha == input.head_sha => {}
                Some(sha) => reasons.push(format!(
                    "on a fork PR the `{label}` label allows a sweep of the commit it was applied on ({}); the head is now {}: a user with write access must apply it again",
                    short(sha),
                    short(input.head_sha)
                )),
                None => reasons.push(format!(
                    "on a fork PR the `{label}` label allows a sweep of the commit it was applied on, and it was applied before {} was pushed: a user with write access must apply it again",
                    short(input.head_sha)
                )),
            },
            Some((who, role)) => reasons.push(format!(
                "on a fork PR the `{label}` label must be applied by a user with write access; @{who} has {role}"
            )),
            None => reasons.push(format!(
                "on a fork PR the `{label}` label must be applied by a user with write access, and nobody did"
            )),
        }
    }
    if !reasons.is_empty() {
        return GateOutcome::Refused(reasons);
    }
    if input.head_message.contains("[skip-sweep]") {
        return GateOutcome::Skipped("the head commit's message contains `[skip-sweep]`".into());
    }
    GateOutcome::Allowed {
        primary: primary[0].clone(),
        modifiers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::changelog::pr_gate;

    const BASE: &[u8] = b"- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n";
    const HEAD: &[u8] = b"- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n- config-keys:\n    - b\n  description:\n    - \"y\"\n  pr-link: https://github.com/o/r/pull/2\n";

    fn labels(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn run(
        labels: &[String],
        report: Option<&GateReport>,
        fork: bool,
        labeler: Option<(&str, RepoRole)>,
        msg: &str,
    ) -> GateOutcome {
        let cfg = RepoConfig::default();
        decide(&GateInput {
            cfg: &cfg,
            labels,
            draft: false,
            fork,
            head_message: msg,
            changelog: report,
            labeler,
            head_sha: "1111111111",
            fork_bound: Some("1111111111"),
        })
    }

    #[test]
    fn exactly_one_primary_label_and_an_appended_entry() {
        let report = pr_gate("perf-changelog.yaml", BASE, HEAD, &Default::default());
        assert!(report.passed());
        let one = labels(&["full-sweep-fail-fast", "all-evals"]);
        assert_eq!(
            run(&one, Some(&report), false, None, "tune"),
            GateOutcome::Allowed {
                primary: "full-sweep-fail-fast".into(),
                modifiers: vec!["all-evals".into()]
            }
        );
        let two = labels(&["full-sweep-fail-fast", "full-sweep-enabled"]);
        assert_eq!(
            run(&two, Some(&report), false, None, ""),
            GateOutcome::Refused(vec![
                "2 primary labels (`full-sweep-fail-fast`, `full-sweep-enabled`): keep exactly one"
                    .into()
            ])
        );
        let only_mod = labels(&["evals-only"]);
        let GateOutcome::Refused(r) = run(&only_mod, Some(&report), false, None, "") else {
            panic!()
        };
        assert!(
            r[0].contains("the modifiers `evals-only` need one"),
            "{r:?}"
        );
        assert_eq!(run(&[], None, false, None, ""), GateOutcome::NotASweep);
        let GateOutcome::Refused(r) = run(&labels(&["full-sweep-enabled"]), None, false, None, "")
        else {
            panic!()
        };
        assert!(r[0].contains("appends no entry"));
        assert!(matches!(
            run(&one, Some(&report), false, None, "wip [skip-sweep]"),
            GateOutcome::Skipped(_)
        ));
    }

    #[test]
    fn changelog_violations_and_the_fork_rule() {
        let broken = b"- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n- config-keys: []\n";
        let report = pr_gate("perf-changelog.yaml", BASE, broken, &Default::default());
        assert!(!report.passed());
        let one = labels(&["full-sweep-fail-fast"]);
        let GateOutcome::Refused(r) = run(&one, Some(&report), false, None, "") else {
            panic!()
        };
        assert!(
            r.iter().all(|m| m.starts_with("perf-changelog.yaml:")),
            "{r:?}"
        );
        let good = pr_gate("perf-changelog.yaml", BASE, HEAD, &Default::default());
        let GateOutcome::Refused(r) = run(
            &one,
            Some(&good),
            true,
            Some(("drive-by", RepoRole::Read)),
            "",
        ) else {
            panic!()
        };
        assert_eq!(
            r,
            vec![
                "on a fork PR the `full-sweep-fail-fast` label must be applied by a user with write access; @drive-by has read"
            ]
        );
        assert!(matches!(
            run(
                &one,
                Some(&good),
                true,
                Some(("maint", RepoRole::Maintain)),
                ""
            ),
            GateOutcome::Allowed { .. }
        ));
        // The label binds the fork's sweep to the commit it was applied on.
        let cfg = RepoConfig::default();
        let moved = |bound| {
            decide(&GateInput {
                cfg: &cfg,
                labels: &one,
                draft: false,
                fork: true,
                head_message: "",
                changelog: Some(&good),
                labeler: Some(("maint", RepoRole::Maintain)),
                head_sha: "2222222222",
                fork_bound: bound,
            })
        };
        assert_eq!(
            moved(Some("1111111111")),
            GateOutcome::Refused(vec![
                "on a fork PR the `full-sweep-fail-fast` label allows a sweep of the commit it was applied on (11111111); the head is now 22222222: a user with write access must apply it again".into()
            ])
        );
        assert!(matches!(moved(None), GateOutcome::Refused(_)));
    }
}
