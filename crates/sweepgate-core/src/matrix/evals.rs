//! Eval selection (matrix spec §8): `mark`, `expand_all` and the eval-only filter.

use std::collections::HashMap;

use super::rows::{Common, Row};

/// Minimum concurrency for a fixed or multi-node agentic eval.
pub(crate) const MIN_EVAL_CONC: i64 = 16;
const TARGET: (i64, i64) = (8192, 1024);

/// Which eval steps run after generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EvalMode {
    NoEvals,
    Default,
    EvalsOnly,
    AllEvals,
}

impl EvalMode {
    pub(crate) fn from_flags(no_evals: bool, evals_only: bool, all_evals: bool) -> Self {
        if all_evals {
            EvalMode::AllEvals
        } else if evals_only {
            EvalMode::EvalsOnly
        } else if no_evals {
            EvalMode::NoEvals
        } else {
            EvalMode::Default
        }
    }
}

/// The multi-node "parallelism key": every field except conc, exp-name and
/// the eval fields. Workers and mappings compare regardless of key order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct MnKey<'a> {
    common: Common<'a>,
    fixed: Option<(i64, i64)>,
    spec: &'static str,
    prefill: &'a str,
    decode: &'a str,
    disagg: bool,
    router: Option<&'a str>,
    kv_p2p: Option<&'a str>,
    agentic: Option<(&'static str, i64, Option<&'a str>)>,
}

/// The parallelism key of a multi-node row (`None` for single-node rows).
pub(crate) fn mn_key<'a>(row: &Row<'a>) -> Option<MnKey<'a>> {
    match row {
        Row::MnFixed(r) => Some(MnKey {
            common: r.common,
            fixed: Some((r.isl, r.osl)),
            spec: r.spec_decoding,
            prefill: &r.prefill.normalized.canonical,
            decode: &r.decode.normalized.canonical,
            disagg: r.disagg,
            router: r.router.map(|m| m.canonical.as_str()),
            kv_p2p: r.kv_p2p_transfer,
            agentic: None,
        }),
        Row::MnAgentic(r) => Some(MnKey {
            common: r.common,
            fixed: None,
            spec: r.spec_decoding,
            prefill: &r.prefill.normalized.canonical,
            decode: &r.decode.normalized.canonical,
            disagg: r.disagg,
            router: r.router.map(|m| m.canonical.as_str()),
            kv_p2p: r.kv_p2p_transfer,
            agentic: Some((
                r.kv_offloading,
                r.total_cpu_dram_gb,
                r.kv_offload_backend.map(|m| m.canonical.as_str()),
            )),
        }),
        _ => None,
    }
}

/// `mark(rows, include_agentic)`: sets `run-eval` on every row and
/// `eval-conc` on the chosen multi-node rows.
pub(crate) fn mark<'a>(rows: &mut [Row<'a>], include_agentic: bool) {
    let n = rows.len();
    let mut marked = vec![false; n];
    let mut eval_conc: Vec<Option<i64>> = vec![None; n];

    // (a) single-node fixed 8k1k, conc >= 16.
    type SnKey<'k> = (&'k str, &'k str, &'k str, &'k str, &'static str, bool);
    let mut groups: HashMap<SnKey, Vec<usize>> = HashMap::new();
    // (b)/(c) best row per multi-node topology: (index, score).
    let mut best_mn: HashMap<MnKey<'a>, (usize, i64)> = HashMap::new();
    let mut best_sn_agentic: HashMap<(&str, &str, &str, &str), (usize, i64)> = HashMap::new();
    // Keys borrow from the configs, not from `rows`, so collect them first.
    let mut mn_keys: Vec<(usize, MnKey<'a>, Vec<i64>)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        match row {
            Row::SnFixed(r) if (r.isl, r.osl) == TARGET && r.conc >= MIN_EVAL_CONC => {
                let c = &r.common;
                groups
                    .entry((
                        c.model,
                        c.runner,
                        c.framework,
                        c.precision,
                        r.spec_decoding,
                        r.dp_attn,
                    ))
                    .or_default()
                    .push(i);
            }
            Row::MnFixed(r) if (r.isl, r.osl) == TARGET => {
                if let Some(k) = mn_key(row) {
                    mn_keys.push((i, k, r.conc.clone()));
                }
            }
            Row::MnAgentic(r) if include_agentic => {
                if let Some(k) = mn_key(row) {
                    mn_keys.push((i, k, r.conc.clone()));
                }
            }
            Row::SnAgentic(r) if include_agentic => {
                let c = &r.common;
                let key = (c.model, c.runner, c.framework, c.precision);
                match best_sn_agentic.get_mut(&key) {
                    Some(b) if r.conc > b.1 => *b = (i, r.conc),
                    Some(_) => {}
                    None => {
                        best_sn_agentic.insert(key, (i, r.conc));
                    }
                }
            }
            _ => {}
        }
    }
    for idxs in groups.values() {
        let mut v: Vec<i64> = idxs
            .iter()
            .filter_map(|&i| match &rows[i] {
                Row::SnFixed(r) => Some(r.conc),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        let (Some(&median), Some(&max)) = (v.get(v.len() / 2), v.last()) else {
            continue;
        };
        for &i in idxs {
            if let Row::SnFixed(r) = &rows[i]
                && (r.conc == median || r.conc == max)
            {
                marked[i] = true;
            }
        }
    }
    for (i, key, concs) in mn_keys {
        let Some(score) = concs.iter().copied().filter(|&c| c >= MIN_EVAL_CONC).max() else {
            continue;
        };
        // Highest score wins; the earliest row on ties.
        match best_mn.get_mut(&key) {
            Some(b) if score > b.1 => *b = (i, score),
            Some(_) => {}
            None => {
                best_mn.insert(key, (i, score));
            }
        }
    }
    for (i, score) in best_mn.into_values() {
        marked[i] = true;
        eval_conc[i] = Some(score);
    }
    for (i, _) in best_sn_agentic.into_values() {
        marked[i] = true;
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let ev = row.eval_mut();
        ev.run_eval = Some(marked[i]);
        if let Some(c) = eval_conc[i] {
            ev.eval_conc = Some(c);
        }
    }
}

fn sorted_distinct(v: &mut Vec<i64>) {
    v.sort_unstable();
    v.dedup();
}

/// `expand_all` (`--all-evals`, §8.4).
pub(crate) fn expand_all<'a>(rows: Vec<Row<'a>>) -> Vec<Row<'a>> {
    let mut out: Vec<Row<'a>> = Vec::with_capacity(rows.len());
    let mut seen: HashMap<MnKey<'a>, usize> = HashMap::new();
    for mut row in rows {
        let key = mn_key(&row);
        match &mut row {
            Row::SnAgentic(r) => r.eval.run_eval = Some(true),
            Row::SnFixed(r) if (r.isl, r.osl) == TARGET => r.eval.run_eval = Some(true),
            Row::SnFixed(_) => {}
            Row::MnFixed(r) if (r.isl, r.osl) != TARGET => {}
            Row::MnFixed(r) => {
                let Some(key) = key else { continue };
                if let Some(&j) = seen.get(&key) {
                    if let Row::MnFixed(first) = &mut out[j] {
                        first.conc.extend_from_slice(&r.conc);
                        sorted_distinct(&mut first.conc);
                    }
                    continue;
                }
                sorted_distinct(&mut r.conc);
                r.eval.run_eval = Some(true);
                r.eval.eval_all_concs = Some(true);
                r.eval.eval_conc = None;
                seen.insert(key, out.len());
            }
            Row::MnAgentic(r) => {
                let Some(key) = key else { continue };
                if let Some(&j) = seen.get(&key) {
                    if let Row::MnAgentic(first) = &mut out[j] {
                        first.conc.extend_from_slice(&r.conc);
                        sorted_distinct(&mut first.conc);
                        first.eval.eval_conc = first.conc.last().copied();
                    }
                    continue;
                }
                sorted_distinct(&mut r.conc);
                r.eval.run_eval = Some(true);
                r.eval.eval_conc = r.conc.last().copied();
                seen.insert(key, out.len());
            }
        }
        out.push(row);
    }
    out
}

/// Keeps rows with `run-eval: true` and sets `eval-only: true`.
pub(crate) fn keep_eval_rows(rows: &mut Vec<Row>) {
    rows.retain(|r| r.eval().run_eval == Some(true));
    for r in rows.iter_mut() {
        r.eval_mut().eval_only = Some(true);
    }
}

/// Applies the eval steps of a mode (§8.1).
pub(crate) fn apply<'a>(mut rows: Vec<Row<'a>>, mode: EvalMode) -> Vec<Row<'a>> {
    match mode {
        EvalMode::NoEvals => rows,
        EvalMode::Default => {
            mark(&mut rows, false);
            rows
        }
        EvalMode::EvalsOnly => {
            mark(&mut rows, true);
            keep_eval_rows(&mut rows);
            rows
        }
        EvalMode::AllEvals => {
            mark(&mut rows, true);
            let mut rows = expand_all(rows);
            keep_eval_rows(&mut rows);
            rows
        }
    }
}
