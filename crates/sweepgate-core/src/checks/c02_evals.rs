//! Check 2 — Evals (`docs/rules.md` §2 Check 2, §1.5): every changed
//! key has an eval row in the run's `eval_results_all`, every counted score
//! meets its bar from the thresholds file, and the run used the image the
//! head ships.
use serde_json::Value;

use super::snapshot::{MasterEntry, parse_master};
use super::{CheckResult, Evidence, Snapshot, join_list};
use crate::config::RepoConfig;
use crate::recipe::thresholds;

const N: u8 = 2;

pub(crate) fn s_field<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

pub(crate) fn i_field(v: &Value, k: &str) -> Option<i64> {
    v.get(k).and_then(|x| {
        x.as_i64()
            .or_else(|| x.as_str().and_then(|s| s.parse().ok()))
    })
}

pub(crate) fn b_field(v: &Value, k: &str) -> bool {
    v.get(k)
        .map(|x| x.as_bool().unwrap_or_else(|| x.as_str() == Some("true")))
        .unwrap_or(false)
}

/// `TP4`, `TP2/EP2`, `DEP2`, with ` C<conc>`.
pub(crate) fn topology(v: &Value) -> String {
    let tp = i_field(v, "tp").unwrap_or(0);
    let ep = i_field(v, "ep").unwrap_or(1);
    let t = if b_field(v, "dp_attention") {
        format!("DEP{tp}")
    } else if ep > 1 {
        format!("TP{tp}/EP{ep}")
    } else {
        format!("TP{tp}")
    };
    match i_field(v, "conc") {
        Some(c) => format!("{t} C{c}"),
        None => t,
    }
}

/// SKU of a result row's `hw` (`gb300`, `b200-dgxc` → b200).
pub(crate) fn hw_sku(hw: &str) -> String {
    crate::recipe::launcher::sku_of(hw).to_owned()
}

/// Whether a result row belongs to a master entry.
pub(crate) fn row_matches(v: &Value, e: &MasterEntry) -> bool {
    let prefix = s_field(v, "model_prefix").or_else(|| s_field(v, "infmax_model_prefix"));
    prefix == Some(e.prefix())
        && s_field(v, "precision").is_none_or(|p| p.eq_ignore_ascii_case(e.precision()))
        && s_field(v, "framework").is_none_or(|f| f == e.framework())
        && s_field(v, "hw").is_none_or(|h| hw_sku(h) == e.sku())
}

fn num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    if !facts.benchmark_affecting(s, cfg) {
        return CheckResult::na(N, "no benchmark-affecting change; no evals required.");
    }
    let Some(art) = &s.artifacts else {
        return CheckResult::review(
            N,
            "run artifacts were not provided; eval scores and image cannot be read.",
        );
    };
    let run = s.pinned_run.as_ref().map(|r| r.id);
    let on_run = run.map_or(String::new(), |id| format!(" on run {id}"));
    if let Some(r) = &s.pinned_run
        && r.artifacts
            .iter()
            .any(|a| a.name == "eval_results_all" && a.expired)
    {
        return CheckResult::fail(N, format!("evals expired (eval_results_all){on_run}."));
    }
    if art.eval_rows.is_empty() {
        return CheckResult::fail(
            N,
            format!("evals missing (eval_results_all empty or absent){on_run}."),
        );
    }
    let th_path = &cfg.paths.eval_thresholds;
    let th = match s
        .policy
        .get(th_path)
        .map(|t| thresholds::parse(th_path, t.as_bytes()))
    {
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => return CheckResult::review(N, format!("{th_path} cannot be read: {e}.")),
        None => None,
    };
    let mut scores: Vec<String> = Vec::new();
    let mut bars: Vec<String> = Vec::new();
    for k in &facts.changed {
        let rows: Vec<&Value> = art
            .eval_rows
            .iter()
            .filter(|v| row_matches(v, &k.entry))
            .collect();
        if rows.is_empty() {
            return CheckResult::fail(N, format!("evals missing for {}{on_run}.", k.key));
        }
        for v in rows {
            let task = s_field(v, "task").unwrap_or("unknown");
            let prefix = s_field(v, "model_prefix").unwrap_or(k.entry.prefix());
            let bar = th.as_ref().map_or(
                thresholds::Threshold {
                    value: thresholds::CLI_FALLBACK,
                    source: thresholds::Source::CliFallback,
                    line: None,
                },
                |t| t.lookup(Some(prefix), task),
            );
            let counted: Vec<(&str, f64)> = if s_field(v, "score_name") == Some("accuracy") {
                num(v, "score").map(|x| ("score", x)).into_iter().collect()
            } else {
                [
                    ("em_strict", num(v, "em_strict")),
                    ("em_flexible", num(v, "em_flexible")),
                ]
                .into_iter()
                .filter_map(|(n, x)| x.map(|x| (n, x)))
                .collect()
            };
            if counted.is_empty() {
                return CheckResult::fail(
                    N,
                    format!(
                        "evals empty ({task} for {} at {}){on_run}.",
                        k.key,
                        topology(v)
                    ),
                );
            }
            for (name, x) in &counted {
                if x.is_nan() || *x < bar.value {
                    return CheckResult::fail(
                        N,
                        format!(
                            "evals below bar ({task} {name} {x:.4} < {:.2} for {} at {}){on_run}.",
                            bar.value,
                            k.key,
                            topology(v)
                        ),
                    );
                }
            }
            scores.push(format!("{:.4} ({})", counted[0].1, topology(v)));
            let src = match bar.source {
                thresholds::Source::Model => format!("{prefix} value"),
                thresholds::Source::Default => "default".to_owned(),
                thresholds::Source::CliFallback => "fallback".to_owned(),
            };
            let b = format!("{task} {:.2} ({src})", bar.value);
            if !bars.contains(&b) {
                bars.push(b);
            }
        }
    }
    // Image: the run's commit against the head, and the benchmark rows.
    let mut image_note = "image matches";
    // Each master config at the run's commit is parsed at most once.
    let mut at_run_parsed: std::collections::BTreeMap<&str, Option<Vec<MasterEntry>>> =
        std::collections::BTreeMap::new();
    for k in &facts.changed {
        let head_img = k.entry.image();
        if let Some(files) = &s.run_files {
            let file = k.entry.file.as_str();
            let at_run: Option<&MasterEntry> = match files.get(file) {
                // The head's text: its entry is the one already parsed.
                Some(t) if s.head_text(file) == Some(t.as_str()) => Some(&k.entry),
                Some(t) => at_run_parsed
                    .entry(file)
                    .or_insert_with(|| parse_master(file, t).ok())
                    .as_deref()
                    .and_then(|es| es.iter().find(|e| e.key == k.key)),
                None => None,
            };
            if let Some(e) = at_run
                && e.image() != head_img
            {
                return CheckResult::fail(
                    N,
                    format!(
                        "evals on different image ({} vs {head_img}) for {}.",
                        e.image(),
                        k.key
                    ),
                )
                .file(&k.entry.file, k.entry.field_line("image"));
            }
        } else if s
            .pinned_run
            .as_ref()
            .is_some_and(|r| r.head_sha != s.pr.head_sha)
        {
            image_note =
                "image matches in the result rows (master config at the run's commit not provided)";
        }
        for v in art.bmk_rows.iter().chain(&art.agentic_rows) {
            if row_matches(v, &k.entry)
                && let Some(img) = s_field(v, "image")
                && img != head_img
            {
                return CheckResult::fail(
                    N,
                    format!(
                        "evals on different image ({img} vs {head_img}) for {}.",
                        k.key
                    ),
                )
                .file(&k.entry.file, k.entry.field_line("image"));
            }
        }
    }
    let n = facts.changed.len();
    let mut r = CheckResult::pass(
        N,
        format!(
            "eval_results_all gives {}, all at or above the {} bar for {n} config{}{on_run}; {image_note}.",
            join_list(&scores),
            bars.join(", "),
            if n == 1 { "" } else { "s" }
        ),
    );
    if let Some(id) = run {
        r = r.with(Evidence::Run { id });
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::{ChangedFile, RunArtifacts};
    use serde_json::json;

    const MASTER: &str = "dsv4-fp4-b200-sglang:\n  image: lmsysorg/sglang:v1\n  model-prefix: dsv4\n  precision: fp4\n  framework: sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4] }\n";

    fn snap(rows: Vec<Value>) -> Snapshot {
        let mut s = Snapshot::default();
        s.head_files
            .insert("configs/nvidia-master.yaml".into(), MASTER.into());
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s.policy.insert(
            "utils/evals/thresholds.yaml".into(),
            "default:\n  gsm8k: 0.90\nmodels:\n  dsv4:\n    gsm8k: 0.91\n".into(),
        );
        s.artifacts = Some(RunArtifacts {
            eval_rows: rows,
            ..Default::default()
        });
        s
    }

    fn row(score: f64) -> Value {
        json!({"model_prefix": "dsv4", "precision": "fp4", "framework": "sglang", "hw": "b200", "task": "gsm8k", "em_strict": score, "em_flexible": null, "tp": 8, "ep": 1, "conc": 4})
    }

    #[test]
    fn scores_at_bar_pass() {
        let r = check(&snap(vec![row(0.95)]), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "eval_results_all gives 0.9500 (TP8 C4), all at or above the gsm8k 0.91 (dsv4 value) bar for 1 config; image matches."
        );
    }

    #[test]
    fn below_bar_fails() {
        let r = check(&snap(vec![row(0.905)]), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "evals below bar (gsm8k em_strict 0.9050 < 0.91 for dsv4-fp4-b200-sglang at TP8 C4)."
        );
    }

    #[test]
    fn missing_and_empty_fail() {
        assert!(
            check(&snap(vec![]), &RepoConfig::default())
                .reason
                .starts_with("evals missing")
        );
        let mut v = row(0.9);
        v["em_strict"] = Value::Null;
        assert!(
            check(&snap(vec![v]), &RepoConfig::default())
                .reason
                .starts_with("evals empty")
        );
    }
}
