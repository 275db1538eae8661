//! `dispatch` mode (`docs/contracts.md` §5), the pure part: the sweep id, the
//! job matrix the workflow fetches (grouped by job family, chunks of at
//! most `chunk_size`), the `workflow_dispatch` inputs, and the safety rule
//! that keeps a workflow with its own `pull_request` trigger from running
//! a sweep twice.
use crate::config::repo::LabelRoles;
use crate::matrix::args::ScenarioType;
use crate::matrix::jobs::{EntryFlags, JobList, LabelFlags};
use crate::recipe::changelog::{self, Entry};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The sweep of one head under one label set: the same decision always
/// names the same sweep, so a redelivery or a restart finds it instead of
/// dispatching again.
pub fn sweep_id(
    repo: &str,
    pr: u64,
    head_sha: &str,
    primary: &str,
    modifiers: &[String],
) -> String {
    let mut mods = modifiers.to_vec();
    mods.sort();
    let digest = Sha256::digest(format!(
        "{repo}#{pr}@{head_sha}:{primary}:{}",
        mods.join(",")
    ));
    format!(
        "sg-{pr}-{}-{}",
        &head_sha[..head_sha.len().min(10)],
        &hex::encode(digest)[..8]
    )
}

/// What the labels ask of the job list, by their roles.
pub fn label_flags(roles: &LabelRoles, primary: &str, modifiers: &[String]) -> LabelFlags {
    LabelFlags {
        evals_only: modifiers.contains(&roles.evals_only),
        all_evals: modifiers.contains(&roles.all_evals),
        trim_conc: roles.is_trimmed(primary),
    }
}

/// The appended changelog entries as the job list reads them.
pub fn entry_flags(entries: &[Entry]) -> Vec<EntryFlags> {
    entries
        .iter()
        .map(|e| EntryFlags {
            config_keys: e.config_keys.iter().map(|k| k.value.clone()).collect(),
            evals_only: e.is_evals_only(),
            all_evals: e.is_all_evals(),
            append_only: e.is_append_only(),
            eval_min_prefill_ep: e.eval_min_prefill_ep.map(|(v, _)| v as i64),
            scenario_type: e.scenario_type.as_ref().map(|ts| {
                ts.iter()
                    .map(|t| match t {
                        changelog::ScenarioType::FixedSeqLen => ScenarioType::FixedSeqLen,
                        changelog::ScenarioType::AgenticCoding => ScenarioType::AgenticCoding,
                    })
                    .collect()
            }),
        })
        .collect()
}

/// The families of a job list, in the order the workflow runs them, with
/// the names its job titles start with (`single-node 8k1k`, `agentic`,
/// `multi-node 8k1k`, `eval`, `agentic eval`, …).
pub fn families(jobs: &JobList) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    for (bucket, rows) in &jobs.single_node {
        let name = if bucket == "agentic" {
            "agentic".to_owned()
        } else {
            format!("single-node {bucket}")
        };
        out.push((name, rows.clone()));
    }
    for (bucket, rows) in &jobs.multi_node {
        out.push((format!("multi-node {bucket}"), rows.clone()));
    }
    for (name, rows) in [
        ("eval", &jobs.evals),
        ("agentic eval", &jobs.agentic_evals),
        ("multi-node eval", &jobs.multinode_evals),
        ("multi-node agentic eval", &jobs.multinode_agentic_evals),
    ] {
        out.push((name.to_owned(), rows.clone()));
    }
    out.retain(|(_, rows)| !rows.is_empty());
    out
}

/// The document `GET /api/sweeps/<id>/matrix` serves.
pub fn matrix_document(sweep_id: &str, jobs: &JobList, chunk_size: usize) -> Value {
    let chunk = chunk_size.max(1);
    let fams: Vec<Value> = families(jobs)
        .into_iter()
        .map(|(family, rows)| {
            let chunks: Vec<Value> = rows.chunks(chunk).map(|c| json!(c)).collect();
            json!({ "family": family, "jobs": rows.len(), "chunks": chunks })
        })
        .collect();
    json!({
        "sweep-id": sweep_id,
        "jobs": jobs.throughput_len() + jobs.eval_len(),
        "families": fams,
    })
}

/// Everything one dispatch says.
pub struct DispatchInputs<'a> {
    pub sweep_id: &'a str,
    pub matrix_url: &'a str,
    pub pr: u64,
    pub head_sha: &'a str,
    pub base_sha: &'a str,
    pub primary: &'a str,
    pub modifiers: &'a [String],
    /// What the primary label means.
    pub roles: &'a LabelRoles,
}

/// The `inputs` of the `workflow_dispatch` (all strings, as GitHub wants).
pub fn inputs(d: &DispatchInputs<'_>) -> Value {
    json!({
        "sweep-id": d.sweep_id,
        "matrix-url": d.matrix_url,
        "pr-number": d.pr.to_string(),
        "head-sha": d.head_sha,
        "base-sha": d.base_sha,
        "primary-label": d.primary,
        "modifiers": d.modifiers.join(","),
        "canary": d.roles.canary(d.primary).to_string(),
        "fail-fast": d.roles.fail_fast(d.primary).to_string(),
    })
}

/// Why `dispatch` mode cannot be used with this workflow file: its own
/// `pull_request` (or `pull_request_target`) trigger would run every sweep
/// a second time. `None` when the workflow is safe to dispatch.
pub fn unsafe_trigger(workflow_yaml: &str) -> Option<String> {
    let doc: Value = match serde_saphyr::from_str(workflow_yaml) {
        Ok(v) => v,
        Err(e) => return Some(format!("the workflow file cannot be read: {e}")),
    };
    // YAML 1.1 readers take a bare `on` for the boolean true.
    let on = doc.get("on").or_else(|| doc.get("true"))?;
    let names: Vec<String> = match on {
        Value::String(s) => vec![s.clone()],
        Value::Array(s) => s
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Value::Object(m) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    let bad: Vec<&String> = names
        .iter()
        .filter(|n| *n == "pull_request" || *n == "pull_request_target")
        .collect();
    if !bad.is_empty() {
        return Some(format!(
            "the sweep workflow still has a `{}` trigger; remove it before using dispatch mode, or every sweep would run twice",
            bad[0]
        ));
    }
    if !names.iter().any(|n| n == "workflow_dispatch") {
        return Some("the sweep workflow has no `workflow_dispatch` trigger".into());
    }
    None
}

/// The matrix URL's token made of 24 random bytes (the caller draws them),
/// and its SHA-256 (the store keeps only the digest).
pub fn new_token(random: [u8; 24]) -> (String, String) {
    let token = hex::encode(random);
    let digest = hex::encode(Sha256::digest(token.as_bytes()));
    (token, digest)
}

/// Whether `given` is the token whose digest is `digest`.
pub fn token_matches(digest: &str, given: &str) -> bool {
    hex::encode(Sha256::digest(given.as_bytes())) == digest
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_same_decision_names_the_same_sweep() {
        let m = vec!["all-evals".to_owned(), "agentx-fast".to_owned()];
        let r = vec!["agentx-fast".to_owned(), "all-evals".to_owned()];
        let a = sweep_id("o/r", 7, "0123456789abcdef", "full-sweep-enabled", &m);
        assert_eq!(
            a,
            sweep_id("o/r", 7, "0123456789abcdef", "full-sweep-enabled", &r)
        );
        assert!(a.starts_with("sg-7-0123456789-"), "{a}");
        assert_ne!(
            a,
            sweep_id("o/r", 7, "0123456789abcdef", "full-sweep-fail-fast", &m)
        );
        assert_ne!(
            a,
            sweep_id("o/r", 7, "fedcba9876543210", "full-sweep-enabled", &m)
        );
    }

    #[test]
    fn primary_labels_set_canary_and_fail_fast() {
        let r = LabelRoles::default();
        assert!(r.canary("full-sweep-fail-fast") && r.fail_fast("full-sweep-fail-fast"));
        assert!(r.canary("full-sweep-enabled") && !r.fail_fast("full-sweep-enabled"));
        assert!(!r.canary("non-canary-full-sweep-enabled"));
        assert!(!r.fail_fast("non-canary-full-sweep-enabled"));
        // Roles, not names: a renamed fail-fast label is still fail-fast.
        let renamed = LabelRoles {
            fail_fast: "gpu-sweep-strict".into(),
            non_canary: "gpu-sweep-direct".into(),
            ..LabelRoles::default()
        };
        assert!(renamed.fail_fast("gpu-sweep-strict") && renamed.canary("gpu-sweep-strict"));
        assert!(!renamed.canary("gpu-sweep-direct"));
        assert!(!renamed.fail_fast("full-sweep-fail-fast"));
    }

    #[test]
    fn families_are_chunked() {
        let rows: Vec<Value> = (0..600).map(|i| json!({ "i": i })).collect();
        let jobs = JobList {
            single_node: BTreeMap::from([
                ("8k1k".to_owned(), rows),
                ("agentic".to_owned(), vec![json!({})]),
            ]),
            evals: vec![json!({ "e": 1 })],
            ..JobList::default()
        };
        let doc = matrix_document("sg-1", &jobs, 256);
        let f = doc["families"].as_array().unwrap();
        let names: Vec<&str> = f.iter().map(|x| x["family"].as_str().unwrap()).collect();
        assert_eq!(names, ["single-node 8k1k", "agentic", "eval"]);
        let sizes: Vec<usize> = f[0]["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_array().unwrap().len())
            .collect();
        assert_eq!(sizes, [256, 256, 88]);
        assert_eq!(doc["jobs"], 602);
    }

    #[test]
    fn a_pull_request_trigger_forbids_dispatch_mode() {
        let both = "on:\n  pull_request:\n  workflow_dispatch:\n";
        assert_eq!(
            unsafe_trigger(both).unwrap(),
            "the sweep workflow still has a `pull_request` trigger; remove it before using dispatch mode, or every sweep would run twice"
        );
        assert_eq!(unsafe_trigger("on: [workflow_dispatch]\n"), None);
        assert_eq!(
            unsafe_trigger("on:\n  workflow_dispatch:\n    inputs: {}\n"),
            None
        );
        assert_eq!(
            unsafe_trigger("on: push\n").unwrap(),
            "the sweep workflow has no `workflow_dispatch` trigger"
        );
    }

    #[test]
    fn tokens_are_checked_by_digest() {
        let (t, d) = new_token([7; 24]);
        assert_eq!(t.len(), 48);
        assert!(token_matches(&d, &t));
        assert!(!token_matches(&d, "guess"));
    }
}
