//! Check 5 — Checklist template (`docs/rules.md` §2 Check 5): the
//! sign-off carries every item of the target repository's current template,
//! checked; an unchecked item needs an explanation in the detail section
//! (whether it suffices is REVIEW).
use super::{CheckResult, Snapshot};
use crate::config::RepoConfig;
use crate::signoff::{self, DETAIL_PLACEHOLDER, Item, SIGNED_PLACEHOLDER};

const N: u8 = 5;

fn describe(items: &[&Item], known: &[signoff::KnownItem]) -> String {
    items
        .iter()
        .map(|i| {
            let checks = signoff::checks_for(i, known);
            match checks.as_slice() {
                [] => i.short(),
                cs => format!(
                    "{} (Check {})",
                    i.short(),
                    cs.iter().map(u8::to_string).collect::<Vec<_>>().join("/")
                ),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let Some(so) = &s.signoff else {
        return CheckResult::fail(N, "no sign-off body to compare with the template.");
    };
    let path = &cfg.paths.checklist_template;
    let Some(text) = s.policy.get(path) else {
        return CheckResult::review(
            N,
            format!("{path} was not provided; the template cannot be compared."),
        );
    };
    let t = match signoff::parse_template(path, text) {
        Ok(t) => t,
        Err(e) => return CheckResult::review(N, format!("the template cannot be read: {e}.")),
    };
    let known = signoff::known_items(signoff::KNOWN_ITEMS_TOML).unwrap_or_default();
    let m = signoff::match_checklist(&t, &so.body, s.settings.checklist_similarity);
    let missing = m.missing(&t);
    let unchecked = m.unchecked(&t);
    let detail = signoff::detail_section(&so.body);
    let explained = !detail.is_empty() && !detail.contains(DETAIL_PLACEHOLDER);
    let signed = signoff::signed_name(&so.body);
    let n = t.items.len();
    if !missing.is_empty() || (!unchecked.is_empty() && !explained) {
        let mut parts = Vec::new();
        if !missing.is_empty() {
            parts.push(format!(
                "missing {} of {n} items: {}",
                missing.len(),
                describe(&missing, &known)
            ));
        }
        if !unchecked.is_empty() && !explained {
            parts.push(format!(
                "unchecked without explanation: {}",
                describe(&unchecked, &known)
            ));
        }
        let line = missing.first().or(unchecked.first()).map_or(0, |i| i.line);
        return CheckResult::fail(
            N,
            format!(
                "stale/incomplete template: {} (see {path}).",
                parts.join("; ")
            ),
        )
        .file(path, line);
    }
    if signed.as_deref() == Some(SIGNED_PLACEHOLDER) || signed.as_deref() == Some("") {
        return CheckResult::fail(
            N,
            format!("the sign-off is not signed (Signed: {SIGNED_PLACEHOLDER})."),
        );
    }
    let warn = match &signed {
        Some(name) if !name.eq_ignore_ascii_case(&so.author) => {
            format!(" Signed: {name} differs from the author @{}.", so.author)
        }
        _ => String::new(),
    };
    if !unchecked.is_empty() {
        return CheckResult::review(
            N,
            format!(
                "{} of {n} items unchecked with an explanation in the detail section; a person must judge it: {}.{warn}",
                unchecked.len(),
                describe(&unchecked, &known)
            ),
        );
    }
    CheckResult::pass(
        N,
        format!("all {n} current-template items are present and checked.{warn}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::Signoff;

    const TEMPLATE: &str = "## Template\n```\nAs a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [ ] Verified that this PR passes evals. Please link to GitHub Action workflow that shows this.\n- [ ] Verified that speculative decoding PRs uses chat templates to align the AL distribution to real world\n- [ ] Reported measured throughput/E2EL Pareto counts and evidence per affected curve\n\n### Additional detail section:\n- insert any additional info here\n\nSigned: `FILL_IN_GITHUB_USERNAME`\n```\n";

    fn snap(body: &str) -> Snapshot {
        let mut s = Snapshot::default();
        s.policy
            .insert("docs/PR_REVIEW_CHECKLIST.md".into(), TEMPLATE.into());
        s.signoff = Some(Signoff {
            author: "nv".into(),
            body: body.into(),
            ..Default::default()
        });
        s
    }

    const ALL: &str = "- [x] Verified that this PR passes evals. Please link to GitHub Action workflow that shows this.\n- [x] Verified that speculative decoding PRs uses chat templates to align the AL distribution to real world\n- [x] Reported measured throughput/E2EL Pareto counts and evidence per affected curve\n";

    #[test]
    fn complete_checklist_passes() {
        let r = check(
            &snap(&format!("{ALL}\nSigned: nv\n")),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "all 3 current-template items are present and checked."
        );
    }

    #[test]
    fn stale_template_fails_naming_missing_items() {
        let body = "- [x] Verified that this PR passes evals. Please link to GitHub Action workflow that shows this.\n- [x] Verified that speculative decoding PRs uses chat templates to align the AL distribution to real world\nSigned: nv\n";
        let r = check(&snap(body), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "stale/incomplete template: missing 1 of 3 items: \"reported measured throughput/e2el pareto counts and evidence per…\" (Check 14) (see docs/PR_REVIEW_CHECKLIST.md)."
        );
    }

    #[test]
    fn unchecked_item_needs_explanation() {
        let body = ALL.replacen(
            "[x] Verified that speculative",
            "[ ] Verified that speculative",
            1,
        );
        let r = check(
            &snap(&format!("{body}\nSigned: nv\n")),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert!(
            r.reason.contains("unchecked without explanation"),
            "{}",
            r.reason
        );
        let r = check(
            &snap(&format!(
                "{body}\n### Additional detail section:\n- no spec decoding here\nSigned: nv\n"
            )),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Review, "{}", r.reason);
    }
}
