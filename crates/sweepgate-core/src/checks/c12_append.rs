//! Check 12 — Append-only (`docs/rules.md` §2 Check 12): applies when
//! a new changelog entry sets `append-only: true`. Every new entry must then
//! be append-only without eval flags, the `check-changelog` check run on the
//! head must be green, and every changed benchmark-affecting hunk must be
//! provably reachable only by the new points; hunks it cannot prove are
//! listed for a person (REVIEW), never failed on the path alone.
use super::{CheckResult, Evidence, Snapshot, added_lines};
use crate::config::RepoConfig;

const N: u8 = 12;

/// The nearest enclosing `if` condition on a point-selecting variable above
/// `line` in `text`, if any.
fn guard(text: &str, line: usize) -> Option<String> {
    const VARS: [&str; 5] = [
        "$CONC",
        "$TP",
        "$EP_SIZE",
        "$DP_ATTENTION",
        "$KV_OFFLOADING",
    ];
    let lines: Vec<&str> = text.lines().collect();
    let mut depth = 0i32;
    for l in lines.iter().take(line.saturating_sub(1)).rev() {
        let t = l.trim_start();
        if t.starts_with("fi") {
            depth += 1;
        } else if t.starts_with("if ") || t.starts_with("elif ") {
            if depth == 0 {
                if VARS
                    .iter()
                    .any(|v| t.contains(v) || t.contains(&v.replace('$', "${")))
                {
                    return Some(t.trim_end().to_owned());
                }
                return None;
            }
            if t.starts_with("if ") {
                depth -= 1;
            }
        }
    }
    None
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let new = &facts.new_entries;
    let cl = &cfg.paths.changelog;
    if let Some((line, msg)) = facts
        .new_entry_errors
        .iter()
        .find(|(_, m)| m.contains("append-only"))
    {
        return CheckResult::fail(N, format!("{cl}:{line}: {msg}."))
            .subject("append-only entry")
            .file(cl, *line);
    }
    if !new.iter().any(|e| e.is_append_only()) {
        return CheckResult::na(N, "the new changelog entry does not set append-only: true.");
    }
    if let Some(e) = new.iter().find(|e| !e.is_append_only()) {
        return CheckResult::fail(
            N,
            format!(
                "mixed entries: the entry at {cl}:{} is not append-only.",
                e.line
            ),
        )
        .subject("append-only entry")
        .file(cl, e.line);
    }
    if let Some(e) = new.iter().find(|e| {
        e.evals_only.is_some() || e.all_evals.is_some() || e.eval_min_prefill_ep.is_some()
    }) {
        return CheckResult::fail(
            N,
            format!("append-only entry at {cl}:{} also sets an eval flag (evals-only, all-evals or eval-min-prefill-ep).", e.line),
        ).subject("append-only entry")
        .file(cl, e.line);
    }
    // The `check-changelog` result: the check run on the head when GitHub
    // provided it, else sweepgate's own implementation of its PR gate
    // (a local run has no check runs, and needs no person for this).
    let gate_note = match &s.check_runs {
        Some(runs) => {
            let green = runs
                .get(&s.pr.head_sha)
                .into_iter()
                .flatten()
                .find(|r| r.name == "check-changelog" || r.name.ends_with("/ check-changelog"));
            match green.and_then(|r| r.conclusion.as_deref()) {
                Some("success") => "check-changelog green",
                Some(c) => {
                    return CheckResult::fail(N, format!("check-changelog {c} on the head."))
                        .subject("check-changelog");
                }
                None => {
                    return CheckResult::fail(
                        N,
                        "check-changelog has not run on the head.".to_owned(),
                    )
                    .subject("check-changelog");
                }
            }
        }
        None => {
            let base = s.base_files.get(cl).map_or("", String::as_str);
            let Some(head) = s.head_files.get(cl) else {
                return CheckResult::review(N, format!("{cl} is not in the assessed files."));
            };
            let labels = |l: &str| s.pr.labels.iter().any(|x| x == l);
            let keys: Vec<&str> = facts.masters_head.keys().map(String::as_str).collect();
            let opts = crate::recipe::changelog::GateOptions {
                all_evals_label: labels(&cfg.labels.roles.all_evals),
                evals_only_label: labels(&cfg.labels.roles.evals_only),
                master_keys: (!keys.is_empty()).then_some(keys.as_slice()),
            };
            let report =
                crate::recipe::changelog::pr_gate(cl, base.as_bytes(), head.as_bytes(), &opts);
            if let Some(v) = report.violations.first() {
                return CheckResult::fail(
                    N,
                    format!(
                        "the changelog PR gate (check-changelog's rules) fails: {}: {}.",
                        v.loc, v.message
                    ),
                )
                .subject("check-changelog")
                .file(cl, v.loc.line);
            }
            "check-changelog's PR gate passes (run by sweepgate)"
        }
    };
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut guards: Vec<String> = Vec::new();
    for f in &s.files {
        let affecting = f.path.starts_with(&cfg.paths.benchmarks) || f.path.starts_with("runners/");
        if !affecting {
            continue;
        }
        let Some(p) = &f.patch else { continue };
        let text = s.head_text(&f.path).unwrap_or("");
        for (line, _) in added_lines(p) {
            match guard(text, line) {
                Some(g) => {
                    if !guards.contains(&g) {
                        guards.push(g);
                    }
                }
                None => {
                    if !open.iter().any(|(q, _)| *q == f.path) {
                        open.push((f.path.clone(), line));
                    }
                }
            }
        }
    }
    if !open.is_empty() {
        let list: Vec<String> = open.iter().map(|(p, l)| format!("{p}:{l}")).collect();
        return CheckResult::review(
            N,
            format!(
                "{} not provably isolated to the appended points.",
                list.join(", ")
            ),
        )
        .with_all(
            open.into_iter()
                .map(|(path, line)| Evidence::File { path, line }),
        );
    }
    let gated = if guards.is_empty() {
        "no script changes".to_owned()
    } else {
        format!("changes gated by {}", guards.join("; "))
    };
    CheckResult::pass(
        N,
        format!(
            "append-only: {} new entr{}; {gate_note}; {gated}.",
            new.len(),
            if new.len() == 1 { "y" } else { "ies" }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::{ChangedFile, CheckRun};

    const BASE: &str = "- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n";

    fn snap(entry_extra: &str, script_patch: Option<(&str, &str)>) -> Snapshot {
        let mut s = Snapshot::default();
        s.pr.head_sha = "h".repeat(40);
        s.base_files
            .insert("perf-changelog.yaml".into(), BASE.into());
        s.head_files.insert(
            "perf-changelog.yaml".into(),
            format!("{BASE}\n- config-keys:\n    - a\n  description:\n    - \"more points\"\n  pr-link: https://github.com/o/r/pull/2\n{entry_extra}"),
        );
        s.check_runs = Some(
            [(
                "h".repeat(40),
                vec![CheckRun {
                    name: "check-changelog".into(),
                    conclusion: Some("success".into()),
                    ..Default::default()
                }],
            )]
            .into_iter()
            .collect(),
        );
        if let Some((text, patch)) = script_patch {
            s.head_files.insert("benchmarks/x.sh".into(), text.into());
            s.files.push(ChangedFile {
                path: "benchmarks/x.sh".into(),
                status: "modified".into(),
                patch: Some(patch.into()),
                ..Default::default()
            });
        }
        s
    }

    #[test]
    fn not_append_only_is_na() {
        assert_eq!(
            check(&snap("", None), &RepoConfig::default()).outcome,
            Outcome::NotApplicable
        );
    }

    #[test]
    fn gated_change_passes_and_unguarded_is_review() {
        let text = "a\nif [ \"$CONC\" -gt 16 ]; then\n  X=1\nfi\n";
        let r = check(
            &snap(
                "  append-only: true\n",
                Some((
                    text,
                    "@@ -1,3 +1,4 @@\n a\n if [ \"$CONC\" -gt 16 ]; then\n+  X=1\n fi\n",
                )),
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "append-only: 1 new entry; check-changelog green; changes gated by if [ \"$CONC\" -gt 16 ]; then."
        );
        let r = check(
            &snap(
                "  append-only: true\n",
                Some(("a\nX=1\n", "@@ -1,1 +1,2 @@\n a\n+X=1\n")),
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Review);
        assert_eq!(
            r.reason,
            "benchmarks/x.sh:2 not provably isolated to the appended points."
        );
    }

    #[test]
    fn eval_flag_fails() {
        let r = check(
            &snap("  append-only: true\n  evals-only: true\n", None),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
    }
}
