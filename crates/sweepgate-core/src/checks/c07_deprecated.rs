//! Check 7 — Deprecated models (`docs/rules.md` §2 Check 7, §1.2):
//! no changed key submits a model, scenario, precision or spec arm that
//! MODELS.md (default branch) retires on or before the review date (the
//! snapshot's injected `today`).
//!
//! `recipe::models_md` was not ready when this was written, so the table
//! reading below is a minimal private parser of the four tables the rules
//! use; an unreadable file gives REVIEW, never a guess.
use chrono::NaiveDate;

use super::snapshot::{ChangeKind, ChangedKey, has_spec_marker};
use super::{CheckResult, Snapshot, strip_shell_comments};
use crate::config::RepoConfig;

const N: u8 = 7;

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ModelsPolicy {
    /// (prefixes, active cell, deprecated cell, line)
    pub matrix: Vec<(Vec<String>, String, String, usize)>,
    /// Scenarios deprecated for all models: (name, since, line).
    pub scenarios_deprecated: Vec<(String, NaiveDate, usize)>,
    /// (prefix, deprecated text, effective date, line).
    pub retirements: Vec<(String, String, NaiveDate, usize)>,
    /// (prefix, deprecated arm text, effective date, line).
    pub arms: Vec<(String, String, NaiveDate, usize)>,
}

fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_owned())
        .collect()
}

fn find_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(9)).find_map(|i| {
        let s = text.get(i..i + 10)?;
        let b = s.as_bytes();
        let shape = b.iter().enumerate().all(|(j, c)| {
            if j == 4 || j == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
        if !shape {
            return None;
        }
        NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
    })
}

/// Reads the tables of MODELS.md (as GitHub renders it: `crate::markdown`).
pub(crate) fn parse_models(text: &str) -> ModelsPolicy {
    let mut p = ModelsPolicy::default();
    let outline = crate::markdown::outline(text);
    for (line, table) in &outline.tables {
        // The day after the date of the `### ` heading the table stands
        // under (none under a `## ` one).
        let section_date = outline
            .headings
            .range(..line)
            .rev()
            .find(|(_, h)| h.level <= 3)
            .filter(|(_, h)| h.level == 3)
            .and_then(|(_, h)| NaiveDate::parse_from_str(&h.text, "%A, %B %d, %Y").ok())
            .and_then(|d| d.succ_opt());
        let c = &table.header;
        let head = |a: &str| c.first().is_some_and(|x| x == a);
        let kind = if head("Model architecture class") {
            "matrix"
        } else if head("Scenario") {
            "scenarios"
        } else if head("Model") && c.get(1).is_some_and(|x| x == "Deprecated") {
            "retire"
        } else if head("Model") && c.get(1).is_some_and(|x| x == "Deprecated arm") {
            "arm"
        } else {
            "other"
        };
        for (i, c) in &table.rows {
            match kind {
                "matrix" if c.len() >= 5 => {
                    p.matrix
                        .push((backticked(&c[1]), c[3].clone(), c[4].clone(), *i));
                }
                "scenarios" if c.len() >= 3 => {
                    if c[2].contains("Deprecated for all models")
                        && let Some(d) = find_date(&c[2])
                    {
                        p.scenarios_deprecated.push((c[0].clone(), d, *i));
                    }
                }
                "retire" if c.len() >= 2 => {
                    if let Some(d) = section_date {
                        for pre in backticked(&c[0]) {
                            p.retirements.push((pre, c[1].clone(), d, *i));
                        }
                    }
                }
                "arm" if c.len() >= 2 => {
                    if let Some(d) = section_date {
                        for pre in backticked(&c[0]) {
                            p.arms.push((pre, c[1].clone(), d, *i));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    p
}

/// Scenario names of a key (`Agentic coding`, `Single-turn 8k1k`, …).
pub(crate) fn scenario_names(k: &ChangedKey) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in k.entry.rows() {
        let n = if r.agentic {
            "Agentic coding".to_owned()
        } else {
            match (r.isl, r.osl) {
                (Some(8192), Some(1024)) => "Single-turn 8k1k".into(),
                (Some(1024), Some(1024)) => "Single-turn 1k1k".into(),
                (Some(1024), Some(8192)) => "Single-turn 1k8k".into(),
                (a, b) => format!("Single-turn {}/{}", a.unwrap_or(0), b.unwrap_or(0)),
            }
        };
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// Comma-separated items of a cell, parenthesised text dropped.
fn items(cell: &str) -> Vec<String> {
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut out = Vec::new();
    for ch in cell.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_owned());
                cur.clear();
            }
            c if depth == 0 => cur.push(c),
            _ => {}
        }
    }
    out.push(cur.trim().to_owned());
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    if facts.changed.is_empty() {
        return CheckResult::na(N, "no benchmark config added, changed or re-enabled.");
    }
    let path = &cfg.paths.models_policy;
    let Some(text) = s.policy.get(path) else {
        return CheckResult::review(
            N,
            format!("{path} was not provided; deprecations cannot be checked."),
        );
    };
    let p = parse_models(text);
    if p.matrix.is_empty() {
        return CheckResult::review(
            N,
            format!("{path} changed; policy table needs re-derivation (no support matrix found)."),
        );
    }
    // Rule 1 (the prefix is registered) is lint L18's: both read the
    // support matrix with `recipe::models_md`, and both judge a PR on what
    // it changes. A key the PR adds, or whose prefix it changes, brings
    // the prefix in; a key that keeps an unregistered prefix was so on the
    // default branch already (`e8c02d7` changes `kimik2.6-fp4-b200-dynamo-vllm`,
    // added unregistered by `d97170a`): pre-existing, not the author's. The
    // rule runs over every key first, so a deprecation FAIL of another key
    // cannot hide it.
    let registered = crate::recipe::models_md::parse(path, text.as_bytes()).ok();
    let in_matrix = |prefix: &str| {
        registered
            .as_ref()
            .is_none_or(|m| m.model(prefix).is_some())
            && p.matrix
                .iter()
                .any(|(ps, ..)| ps.iter().any(|x| x == prefix))
    };
    let mut pre_existing: Vec<String> = Vec::new();
    for k in &facts.changed {
        let prefix = k.entry.prefix();
        if in_matrix(prefix) {
            continue;
        }
        if brings_prefix(k, &facts.masters_base) {
            return CheckResult::fail(N, unregistered_reason(prefix, path, &k.key))
                .subject(k.key.clone())
                .file(&k.entry.file, k.entry.line);
        }
        pre_existing.push(format!(
            "{} keeps prefix {prefix}, which is not in the {path} support matrix on the default branch either (pre-existing)",
            k.key
        ));
    }
    let today = s.today;
    let mut active: Vec<String> = Vec::new();
    for k in &facts.changed {
        let prefix = k.entry.prefix();
        // Unregistered and pre-existing (above): no row to judge it by.
        let Some((_, act, dep, line)) = p
            .matrix
            .iter()
            .find(|(ps, ..)| ps.iter().any(|x| x == prefix))
        else {
            continue;
        };
        if act.trim_start().starts_with("None")
            && let Some(d) = find_date(act)
            && d <= today
        {
            return CheckResult::fail(
                N,
                format!(
                    "{prefix} model is deprecated since {d} ({path} support matrix, retired) — {}.",
                    k.key
                ),
            )
            .subject(k.key.clone())
            .file(path, *line);
        }
        let scen = scenario_names(k);
        for sc in &scen {
            if let Some((_, d, l)) = p
                .scenarios_deprecated
                .iter()
                .find(|(n, d, _)| n.eq_ignore_ascii_case(sc) && *d <= today)
            {
                return CheckResult::fail(
                    N,
                    format!("{prefix} {sc} is deprecated since {d} ({path} Scenarios, for all models) — {}.", k.key),
                ).subject(k.key.clone())
                .file(path, *l);
            }
            if items(dep).iter().any(|i| i.eq_ignore_ascii_case(sc)) {
                let since = find_date(dep).map_or("listed".to_owned(), |d| d.to_string());
                return CheckResult::fail(
                    N,
                    format!(
                        "{prefix} {sc} is deprecated since {since} ({path} support matrix) — {}.",
                        k.key
                    ),
                )
                .subject(k.key.clone())
                .file(path, *line);
            }
            for (pre, what, d, l) in &p.retirements {
                if pre == prefix
                    && *d <= today
                    && what.to_ascii_lowercase().contains(&sc.to_ascii_lowercase())
                {
                    return CheckResult::fail(
                        N,
                        format!("{prefix} {sc} is deprecated since {d} ({path} Deprecation Notice) — {}.", k.key),
                    ).subject(k.key.clone())
                    .file(path, *l);
                }
            }
        }
        let prec = k.entry.precision().to_ascii_lowercase();
        for (pre, what, d, l) in &p.retirements {
            if pre == prefix
                && *d <= today
                && !prec.is_empty()
                && what.to_ascii_lowercase().contains(&prec)
            {
                return CheckResult::fail(
                    N,
                    format!(
                        "{prefix} {prec} is deprecated since {d} ({path} Deprecation Notice) — {}.",
                        k.key
                    ),
                )
                .subject(k.key.clone())
                .file(path, *l);
            }
        }
        // Spec-decode arm retirements: a non-spec agentic arm.
        let launch_spec = k
            .launch_texts(s)
            .iter()
            .any(|(_, t)| has_spec_marker(&strip_shell_comments(t)));
        let non_spec_agentic =
            k.entry.rows().iter().any(|r| r.agentic && r.spec == "none") && !launch_spec;
        if non_spec_agentic {
            for (pre, arm, d, l) in &p.arms {
                if pre != prefix || !arm.to_ascii_lowercase().contains("non-") {
                    continue;
                }
                let day0 = arm.to_ascii_lowercase().contains("day 0");
                if day0
                    || (k.kind == ChangeKind::Added
                        && s.settings.announced_retirement_fails_new_arms)
                {
                    return CheckResult::fail(
                        N,
                        format!("{prefix} arm \"{arm}\" is deprecated since {d} ({path} Deprecation Notice) — {}.", k.key),
                    ).subject(k.key.clone())
                    .file(path, *l);
                }
                return CheckResult::review(
                    N,
                    format!("{} modifies a non-spec agentic arm whose retirement is announced but not yet enacted.", k.key),
                )
                .file(path, *l);
            }
        }
        let a = format!("{prefix} {}", scen.join(" and ").to_ascii_lowercase());
        if !active.contains(&a) {
            active.push(a);
        }
    }
    let mut said: Vec<String> = Vec::new();
    if !active.is_empty() {
        said.push(format!(
            "{} is active in {path} as of {today}",
            active.join("; ")
        ));
    }
    said.extend(pre_existing);
    CheckResult::pass(N, format!("{}.", said.join("; ")))
}

/// Rule 1's FAIL reason; [`is_unregistered_prefix`] recognises it.
fn unregistered_reason(prefix: &str, path: &str, key: &str) -> String {
    format!("{prefix} is not in the {path} support matrix — {key}.")
}

/// Whether a Check 7 FAIL reason is rule 1 (the prefix is not registered),
/// the fact lint L18 shares; the other rules are deprecations L18 does not
/// judge. The replay counts the pair on this fact alone.
pub fn is_unregistered_prefix(reason: &str) -> bool {
    reason.contains(" is not in the ") && reason.contains(" support matrix — ")
}

/// A key the PR adds, or whose `model-prefix` it changes, brings its prefix
/// in; as L18's fingerprint (rule, file, prefix, key) tells a new finding
/// from a pre-existing one.
fn brings_prefix(
    k: &ChangedKey,
    base: &std::collections::BTreeMap<String, crate::checks::snapshot::MasterEntry>,
) -> bool {
    k.kind == ChangeKind::Added
        || base
            .get(&k.key)
            .is_none_or(|b| b.prefix() != k.entry.prefix())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::ChangedFile;

    const MODELS: &str = "# Models\n\n## Deprecation Notice\n\n### Monday, August 3, 2026\n\n| Model | Deprecated | Remains |\n|---|---|---|\n| MiniMax-M3 (`minimaxm3`) | Single-turn 8k1k | Agentic coding |\n\n## Scenarios\n\n| Scenario | ISL/OSL | Status |\n|---|---|---|\n| Single-turn 1k1k | 1024 / 1024 | **Deprecated for all models** since 2026-07-17 |\n\n## Model support matrix\n\n| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |\n|---|---|---|---|---|\n| MiniMax-M3 | `minimaxm3` | 2026-06-12 | Agentic coding | Single-turn 1k1k |\n| gpt-oss | `gptoss` | 2025-09-09 | None (retired 2026-07-06) | Single-turn 8k1k |\n";

    fn snap(key: &str, isl: i64, osl: i64, today: &str) -> Snapshot {
        let mut s = Snapshot::default();
        let prefix = key.split('-').next().unwrap_or("");
        s.head_files.insert(
            "configs/nvidia-master.yaml".into(),
            format!("{key}:\n  model-prefix: {prefix}\n  precision: fp8\n  framework: vllm\n  scenarios:\n    fixed-seq-len:\n    - isl: {isl}\n      osl: {osl}\n      search-space:\n      - {{ tp: 8, conc-list: [4] }}\n"),
        );
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s.policy.insert("MODELS.md".into(), MODELS.into());
        s.today = NaiveDate::parse_from_str(today, "%Y-%m-%d").unwrap();
        s
    }

    #[test]
    fn deprecation_takes_effect_the_next_day() {
        let r = check(
            &snap("minimaxm3-fp8-b200-vllm", 8192, 1024, "2026-08-03"),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "minimaxm3 single-turn 8k1k is active in MODELS.md as of 2026-08-03."
        );
        let r = check(
            &snap("minimaxm3-fp8-b200-vllm", 8192, 1024, "2026-08-04"),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "minimaxm3 Single-turn 8k1k is deprecated since 2026-08-04 (MODELS.md Deprecation Notice) — minimaxm3-fp8-b200-vllm."
        );
    }

    /// `e8c02d7` (#2438) changes `kimik2.6-fp4-b200-dynamo-vllm`, whose
    /// prefix was unregistered on main already: pre-existing, as L18 finds
    /// it. Adding such a key, or moving a key to such a prefix, still FAILs.
    #[test]
    fn an_unregistered_prefix_kept_is_pre_existing() {
        let key = |prefix: &str, tp: u32| {
            format!(
                "nope-fp8-b200-vllm:\n  model-prefix: {prefix}\n  precision: fp8\n  framework: vllm\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - {{ tp: {tp}, conc-list: [4] }}\n"
            )
        };
        // A snapshot derives its facts once: one per base.
        let changed = |base: &str| {
            let mut s = snap("nope-fp8-b200-vllm", 8192, 1024, "2026-08-01");
            s.head_files
                .insert("configs/nvidia-master.yaml".into(), key("nope", 4));
            s.base_files
                .insert("configs/nvidia-master.yaml".into(), key(base, 8));
            s.files[0].status = "modified".into();
            s
        };
        let r = check(&changed("nope"), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "nope-fp8-b200-vllm keeps prefix nope, which is not in the MODELS.md support matrix on the default branch either (pre-existing)."
        );
        assert!(!is_unregistered_prefix(&r.reason));
        // The PR moves the key to an unregistered prefix: its own.
        let r = check(&changed("minimaxm3"), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail, "{}", r.reason);
        assert!(is_unregistered_prefix(&r.reason), "{}", r.reason);
        // A deprecation FAIL is not the fact L18 shares.
        let r = check(
            &snap("minimaxm3-fp8-b200-vllm", 1024, 1024, "2026-08-01"),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert!(!is_unregistered_prefix(&r.reason), "{}", r.reason);
    }

    #[test]
    fn retired_unknown_and_scenario_wide() {
        let r = check(
            &snap("gptoss-fp8-b200-vllm", 8192, 1024, "2026-08-01"),
            &RepoConfig::default(),
        );
        assert!(
            r.reason
                .starts_with("gptoss model is deprecated since 2026-07-06"),
            "{}",
            r.reason
        );
        let r = check(
            &snap("nope-fp8-b200-vllm", 8192, 1024, "2026-08-01"),
            &RepoConfig::default(),
        );
        assert_eq!(
            r.reason,
            "nope is not in the MODELS.md support matrix — nope-fp8-b200-vllm."
        );
        let r = check(
            &snap("minimaxm3-fp8-b200-vllm", 1024, 1024, "2026-08-01"),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert!(
            r.reason
                .contains("Single-turn 1k1k is deprecated since 2026-07-17"),
            "{}",
            r.reason
        );
    }
}
