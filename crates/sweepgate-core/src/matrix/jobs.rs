//! The changelog-driven job list (docs/reference-automation.md §3.2): appended
//! changelog entries → throughput and eval rows, trimming, recipe
//! fingerprints, and buckets per job family. Entries come in as plain keys
//! and flags so this does not depend on the changelog parser's types.

use std::collections::{BTreeMap, HashSet};
use std::io;

use sha2::{Digest, Sha256};

use super::args::{ScenarioType, SharedOptions, TestConfigOptions};
use super::evals::{self, EvalMode};
use super::generate::test_config;
use super::rows::Row;
use super::{Inputs, MatrixError};

/// One appended changelog entry, reduced to what the job list needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryFlags {
    pub config_keys: Vec<String>,
    pub evals_only: bool,
    pub all_evals: bool,
    pub append_only: bool,
    pub eval_min_prefill_ep: Option<i64>,
    pub scenario_type: Option<Vec<ScenarioType>>,
}

/// PR labels that change the job list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LabelFlags {
    /// Label `evals-only`: no throughput rows.
    pub evals_only: bool,
    /// Label `all-evals`: expanded eval selection (throughput still runs).
    pub all_evals: bool,
    /// Label `sweep-enabled`: `--trim-conc`.
    pub trim_conc: bool,
}

/// Rows per job family, as `process_changelog.py` buckets them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobList {
    /// `single_node.<1k1k|8k1k|isl_osl|agentic>`.
    pub single_node: BTreeMap<String, Vec<serde_json::Value>>,
    pub multi_node: BTreeMap<String, Vec<serde_json::Value>>,
    pub evals: Vec<serde_json::Value>,
    pub agentic_evals: Vec<serde_json::Value>,
    pub multinode_evals: Vec<serde_json::Value>,
    pub multinode_agentic_evals: Vec<serde_json::Value>,
}

impl JobList {
    pub fn throughput_len(&self) -> usize {
        self.single_node
            .values()
            .chain(self.multi_node.values())
            .map(Vec::len)
            .sum()
    }
    pub fn eval_len(&self) -> usize {
        self.evals.len()
            + self.agentic_evals.len()
            + self.multinode_evals.len()
            + self.multinode_agentic_evals.len()
    }
}

/// Changelog key resolution: only `*` is a wildcard (full match); `?` is literal.
fn resolve(inputs: &Inputs, patterns: &[String]) -> Result<Vec<String>, MatrixError> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let available = || {
        let mut k: Vec<&str> = inputs.master.keys().collect();
        k.sort_unstable();
        k.join(", ")
    };
    for p in patterns {
        let matched: Vec<&str> = if p.contains('*') {
            inputs.master.keys().filter(|k| star_match(p, k)).collect()
        } else {
            inputs
                .master
                .get(p)
                .map(|e| e.key.as_str())
                .into_iter()
                .collect()
        };
        if matched.is_empty() {
            return Err(if p.contains('*') {
                MatrixError::PatternNoMatch {
                    pattern: p.clone(),
                    available: available(),
                }
            } else {
                MatrixError::KeyNotFound {
                    key: p.clone(),
                    available: available(),
                }
            });
        }
        for k in matched {
            if seen.insert(k.to_string()) {
                out.push(k.to_string());
            }
        }
    }
    Ok(out)
}

fn star_match(pattern: &str, key: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !key.starts_with(first) || key.len() < first.len() + last.len() || !key.ends_with(last) {
        return false;
    }
    let mut rest = &key[first.len()..key.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

fn scenario_list(e: &EntryFlags) -> Vec<ScenarioType> {
    match &e.scenario_type {
        Some(v) if !v.is_empty() => {
            let mut out = Vec::new();
            for s in [ScenarioType::FixedSeqLen, ScenarioType::AgenticCoding] {
                if v.contains(&s) {
                    out.push(s);
                }
            }
            out
        }
        _ => vec![ScenarioType::FixedSeqLen, ScenarioType::AgenticCoding],
    }
}

fn rows_for<'a>(
    inputs: &'a Inputs,
    keys: Vec<String>,
    scenarios: Vec<ScenarioType>,
    mode: EvalMode,
) -> Result<Vec<Row<'a>>, MatrixError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let shared = SharedOptions {
        scenario_type: Some(scenarios),
        ..SharedOptions::default()
    };
    let opts = TestConfigOptions {
        config_keys: keys,
        conc: None,
        seq_lens: None,
    };
    let rows = test_config(&inputs.master, &inputs.runners, &shared, &opts)?;
    Ok(evals::apply(rows, mode))
}

/// `--trim-conc`: single-node rows keep only the lowest conc per group of
/// otherwise-equal rows; multi-node rows keep their place with `conc: [min]`.
fn trim(rows: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    let identity = |r: &serde_json::Value| {
        let mut m = r.as_object().cloned().unwrap_or_default();
        m.remove("conc");
        m.remove("exp-name");
        canonical(&serde_json::Value::Object(m))
    };
    let mut best: BTreeMap<String, (usize, i64)> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        if let Some(c) = r.get("conc").and_then(serde_json::Value::as_i64) {
            let k = identity(r);
            match best.get(&k) {
                Some(&(_, b)) if b <= c => {}
                _ => {
                    best.insert(k, (i, c));
                }
            }
        }
    }
    let keep: HashSet<usize> = best.values().map(|&(i, _)| i).collect();
    rows.into_iter()
        .enumerate()
        .filter_map(|(i, mut r)| {
            match r.get_mut("conc") {
                Some(serde_json::Value::Array(list)) => {
                    if let Some(min) = list.iter().filter_map(serde_json::Value::as_i64).min() {
                        *list = vec![serde_json::Value::from(min)];
                    }
                }
                Some(_) if !keep.contains(&i) => return None,
                _ => {}
            }
            Some(r)
        })
        .collect()
}

/// Sorted-key, compact, ASCII-only JSON (`json.dumps(sort_keys=True,
/// separators=(",", ":"))`).
pub(crate) fn canonical(v: &serde_json::Value) -> String {
    fn sort(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                let sorted: BTreeMap<&String, serde_json::Value> =
                    m.iter().map(|(k, v)| (k, sort(v))).collect();
                serde_json::to_value(sorted).unwrap_or(serde_json::Value::Null)
            }
            serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    struct Ascii;
    impl serde_json::ser::Formatter for Ascii {
        fn write_string_fragment<W: ?Sized + io::Write>(
            &mut self,
            w: &mut W,
            fragment: &str,
        ) -> io::Result<()> {
            let mut buf = [0u16; 2];
            for ch in fragment.chars() {
                if (ch as u32) < 0x7f {
                    let mut b = [0u8; 4];
                    w.write_all(ch.encode_utf8(&mut b).as_bytes())?;
                } else {
                    for unit in ch.encode_utf16(&mut buf) {
                        write!(w, "\\u{unit:04x}")?;
                    }
                }
            }
            Ok(())
        }
    }
    // With `preserve_order` a Map keeps insertion order, so serialize through
    // a BTreeMap to get sorted keys either way.
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Ascii);
    let _ = serde::Serialize::serialize(&sort(v), &mut ser);
    String::from_utf8(out).unwrap_or_default()
}

/// `recipe-fingerprint`: sha256 hex of the canonical row without `conc`,
/// `exp-name` and `recipe-fingerprint`.
pub(crate) fn recipe_fingerprint(row: &serde_json::Value) -> String {
    let mut m = row.as_object().cloned().unwrap_or_default();
    for k in ["conc", "exp-name", "recipe-fingerprint"] {
        m.remove(k);
    }
    hex::encode(Sha256::digest(
        canonical(&serde_json::Value::Object(m)).as_bytes(),
    ))
}

fn bucket_name(r: &serde_json::Value) -> String {
    if r.get("scenario-type").and_then(serde_json::Value::as_str) == Some("agentic-coding") {
        return "agentic".to_string();
    }
    let isl = r
        .get("isl")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(0);
    let osl = r
        .get("osl")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(0);
    super::generate::seq_name(isl, osl)
}

/// The job list for the appended changelog entries.
pub fn jobs_for_entries(
    inputs: &Inputs,
    entries: &[EntryFlags],
    labels: LabelFlags,
) -> Result<JobList, MatrixError> {
    if entries.iter().any(|e| e.append_only) {
        // The append-only job list is a difference against the base
        // revision's own matrix, which needs that revision's files.
        return Err(MatrixError::Crash(
            "append-only entries need the base revision's matrix; use the append-only path".into(),
        ));
    }
    // Entries with `all-evals` first (stable otherwise).
    let mut order: Vec<&EntryFlags> = entries.iter().filter(|e| e.all_evals).collect();
    order.extend(entries.iter().filter(|e| !e.all_evals));

    let mut produced: HashSet<(String, ScenarioType)> = HashSet::new();
    let mut throughput: Vec<serde_json::Value> = Vec::new();
    let mut out = JobList::default();
    for e in order {
        let keys = resolve(inputs, &e.config_keys)?;
        let scenarios = scenario_list(e);
        if !(labels.evals_only || e.evals_only || e.all_evals) {
            for s in &scenarios {
                let fresh: Vec<String> = keys
                    .iter()
                    .filter(|k| produced.insert(((*k).clone(), *s)))
                    .cloned()
                    .collect();
                for r in rows_for(inputs, fresh, vec![*s], EvalMode::NoEvals)? {
                    throughput.push(r.to_value());
                }
            }
        }
        let mode = if e.all_evals || labels.all_evals {
            EvalMode::AllEvals
        } else {
            EvalMode::EvalsOnly
        };
        for r in rows_for(inputs, keys, scenarios, mode)? {
            let below_min = match (&r, e.eval_min_prefill_ep) {
                (Row::MnFixed(m), Some(min)) => m.prefill.ep.value < min,
                (Row::MnAgentic(m), Some(min)) => m.prefill.ep.value < min,
                _ => false,
            };
            if below_min {
                continue;
            }
            let v = r.to_value();
            match r {
                Row::SnFixed(_) => out.evals.push(v),
                Row::SnAgentic(_) => out.agentic_evals.push(v),
                Row::MnFixed(_) => out.multinode_evals.push(v),
                Row::MnAgentic(_) => out.multinode_agentic_evals.push(v),
            }
        }
    }
    if labels.trim_conc {
        throughput = trim(throughput);
    }
    for mut r in throughput {
        let fp = recipe_fingerprint(&r);
        let multi = r.get("prefill").is_some();
        let name = bucket_name(&r);
        if let Some(m) = r.as_object_mut() {
            m.insert("recipe-fingerprint".into(), serde_json::Value::String(fp));
        }
        let target = if multi {
            &mut out.multi_node
        } else {
            &mut out.single_node
        };
        target.entry(name).or_default().push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_only_wildcards() {
        assert!(star_match("dsr1-*", "dsr1-fp4"));
        assert!(star_match("*-mtp", "a-b-mtp"));
        assert!(star_match("a*b*c", "aXbYc"));
        assert!(!star_match("a*b*c", "aXc"));
        assert!(!star_match("ab*ba", "aba"));
    }

    #[test]
    fn canonical_sorted_compact_ascii() {
        let v = serde_json::json!({"b": 1, "a": {"d": [1, "é"], "c": true}});
        assert_eq!(canonical(&v), r#"{"a":{"c":true,"d":[1,"\u00e9"]},"b":1}"#);
    }

    #[test]
    fn trim_keeps_lowest_conc() {
        let rows = vec![
            serde_json::json!({"tp": 4, "conc": 8, "exp-name": "x"}),
            serde_json::json!({"tp": 4, "conc": 2, "exp-name": "x"}),
            serde_json::json!({"tp": 8, "conc": 4, "exp-name": "x"}),
            serde_json::json!({"prefill": {}, "conc": [32, 4, 16]}),
        ];
        let t = trim(rows);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0]["conc"], 2);
        assert_eq!(t[1]["conc"], 4);
        assert_eq!(t[2]["conc"], serde_json::json!([4]));
    }
}
