//! Check 17 — Metrics publication (`docs/rules.md` §2 Check 17): a
//! Dynamo TRT-LLM config must publish engine iteration/KV-cache metrics.
//! Primary test on the run's result rows (`server_metrics`); static test
//! on the recipes (`publish_events_and_metrics: false` is REVIEW).
use serde_json::Value;

use super::c02_evals::row_matches;
use super::{CheckResult, Evidence, Snapshot, line_of};
use crate::config::RepoConfig;

const N: u8 = 17;

fn null_at(v: &Value, path: &[&str]) -> bool {
    path.iter()
        .try_fold(v, |acc, k| acc.get(k))
        .is_none_or(Value::is_null)
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let keys: Vec<_> = facts
        .changed
        .iter()
        .filter(|k| k.entry.framework() == "dynamo-trt")
        .collect();
    if keys.is_empty() {
        let mut fws: Vec<&str> = facts.changed.iter().map(|k| k.entry.framework()).collect();
        fws.sort();
        fws.dedup();
        let fw = if fws.is_empty() {
            String::new()
        } else {
            format!(" (framework: {})", fws.join(", "))
        };
        return CheckResult::na(N, format!("no Dynamo TRT-LLM configs{fw}."));
    }
    for k in &keys {
        for (p, t) in k.launch_texts(s) {
            let key = "publish_events_and_metrics: false";
            if let Some(line) = line_of(t, key) {
                return CheckResult::review(N, format!("{p}:{line} has publish_events_and_metrics=false; confirm metrics are collected another way."))
                    .file(p, line);
            }
        }
    }
    let Some(art) = &s.artifacts else {
        return CheckResult::review(
            N,
            "run artifacts were not provided; server metrics cannot be read.",
        );
    };
    let run = s
        .pinned_run
        .as_ref()
        .map_or(String::new(), |r| format!(" in run {}", r.id));
    let mut points = 0;
    for k in &keys {
        for v in art
            .agentic_rows
            .iter()
            .chain(&art.bmk_rows)
            .filter(|v| row_matches(v, &k.entry))
        {
            points += 1;
            let present = v
                .get("server_metrics")
                .and_then(|m| m.get("present"))
                .and_then(Value::as_bool)
                == Some(true);
            let adapter = v
                .get("server_metrics")
                .and_then(|m| m.get("adapter"))
                .and_then(Value::as_str)
                .is_some_and(|a| a != "none");
            let field = if !present {
                Some("present")
            } else if !adapter {
                Some("adapter")
            } else if null_at(v, &["server_metrics", "kv_cache", "gpu_usage_pct"]) {
                Some("kv_cache.gpu_usage_pct")
            } else if null_at(v, &["kv_cache_pool_tokens"]) {
                Some("kv_cache_pool_tokens")
            } else {
                None
            };
            if let Some(f) = field {
                let mut r = CheckResult::fail(
                    N,
                    format!(
                        "{} published no engine KV/iteration metrics (server_metrics.{f} missing or null{run}).",
                        k.key
                    ),
                ).subject(k.key.clone());
                if let Some(p) = s.pinned_run.as_ref() {
                    r = r.with(Evidence::Run { id: p.id });
                }
                return r;
            }
        }
    }
    if points == 0 {
        return CheckResult::fail(
            N,
            format!("no result rows for the Dynamo TRT-LLM configs{run}."),
        )
        .subject("dynamo-trt results");
    }
    CheckResult::pass(
        N,
        format!("Dynamo TRT-LLM iteration/KV metrics present for {points} points{run}."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::{ChangedFile, RunArtifacts};
    use serde_json::json;

    fn snap(rows: Vec<Value>) -> Snapshot {
        let mut s = Snapshot::default();
        s.head_files.insert(
            "configs/nvidia-master.yaml".into(),
            "m-fp4-gb300-dynamo-trt:\n  image: nvcr.io#nvidia/x:1\n  model-prefix: m\n  precision: fp4\n  framework: dynamo-trt\n  runner: gb300\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - { conc-list: [4] }\n".into(),
        );
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s.artifacts = Some(RunArtifacts {
            agentic_rows: rows,
            ..Default::default()
        });
        s
    }

    fn row(usage: Value) -> Value {
        json!({"infmax_model_prefix": "m", "precision": "fp4", "framework": "dynamo-trt", "hw": "gb300", "server_metrics": {"present": true, "adapter": "dynamo-vllm", "kv_cache": {"gpu_usage_pct": usage}}, "kv_cache_pool_tokens": 1000})
    }

    #[test]
    fn metrics_present_pass_and_null_fails() {
        let r = check(&snap(vec![row(json!(41.0))]), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "Dynamo TRT-LLM iteration/KV metrics present for 1 points."
        );
        let r = check(&snap(vec![row(Value::Null)]), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "m-fp4-gb300-dynamo-trt published no engine KV/iteration metrics (server_metrics.kv_cache.gpu_usage_pct missing or null)."
        );
    }

    #[test]
    fn other_frameworks_are_na() {
        let r = check(&Snapshot::default(), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::NotApplicable);
        assert_eq!(r.reason, "no Dynamo TRT-LLM configs.");
    }
}
