//! Check 14 — Pareto coverage (`docs/rules.md` §2 Check 14,
//! `docs/contracts.md` §6): each curve of the run that belongs to a changed key
//! has enough points on its throughput/latency Pareto frontier. x is P90
//! (and P75) end-to-end latency for agentic curves, P90 latency for fixed
//! length; y is total token throughput per GPU. Five or more frontier
//! points pass, one to four is REVIEW, a changed key with no valid point
//! fails.
use std::collections::BTreeMap;

use serde_json::Value;

use super::c02_evals::{b_field, hw_sku, i_field, row_matches, s_field, topology};
use super::{CheckResult, Evidence, Snapshot, join_list};
use crate::config::RepoConfig;

const N: u8 = 14;

/// One measured point.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

/// Indices of the points on the frontier: no other point has x' ≤ x and
/// y' ≥ y with one strict. Sorted by x ascending (ties: y descending), a
/// point is kept when its y exceeds the running maximum.
pub fn frontier(points: &[Point]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..points.len()).collect();
    idx.sort_by(|&a, &b| {
        points[a]
            .x
            .total_cmp(&points[b].x)
            .then(points[b].y.total_cmp(&points[a].y))
    });
    let mut best = f64::NEG_INFINITY;
    let mut out = Vec::new();
    for i in idx {
        if points[i].y > best {
            best = points[i].y;
            out.push(i);
        }
    }
    out
}

fn path<'a>(v: &'a Value, p: &[&str]) -> Option<&'a Value> {
    p.iter().try_fold(v, |acc, k| acc.get(k))
}

fn is_agentic(v: &Value) -> bool {
    s_field(v, "scenario_type") == Some("agentic-coding") || v.get("request_metrics").is_some()
}

/// Curve identity of a result row (the visual-series key).
fn curve_key(v: &Value) -> String {
    let f = |k: &str| s_field(v, k).unwrap_or("").to_owned();
    let mut parts = vec![
        f("model"),
        f("infmax_model_prefix"),
        f("precision"),
        f("framework"),
        hw_sku(&f("hw")),
        b_field(v, "disagg").to_string(),
        f("prefill_hw"),
        f("decode_hw"),
        f("image"),
    ];
    if is_agentic(v) {
        parts.push("agentic-coding".into());
        let off = s_field(v, "kv_offloading").is_some_and(|k| k != "none" && !k.is_empty());
        parts.push(format!("offload={off}"));
    } else {
        parts.push(format!(
            "{}/{}",
            i_field(v, "isl").unwrap_or(0),
            i_field(v, "osl").unwrap_or(0)
        ));
        parts.push(f("spec_decoding"));
    }
    parts.join("|")
}

fn scenario_label(v: &Value) -> String {
    if is_agentic(v) {
        return "agentic-coding".into();
    }
    let k = |n: i64| {
        if n % 1024 == 0 {
            format!("{}k", n / 1024)
        } else {
            n.to_string()
        }
    };
    format!(
        "{}{}",
        k(i_field(v, "isl").unwrap_or(0)),
        k(i_field(v, "osl").unwrap_or(0))
    )
}

fn point(v: &Value, pct: &str) -> Option<Point> {
    if v.get("num_requests_successful").and_then(Value::as_f64) == Some(0.0) {
        return None;
    }
    let (x, y) = if is_agentic(v) {
        (
            path(v, &["request_metrics", "latency", "e2el", pct])?.as_f64()?,
            path(
                v,
                &["request_metrics", "throughput", "per_gpu", "total_tput_tps"],
            )?
            .as_f64()?,
        )
    } else {
        (
            v.get(format!("{pct}_e2el"))?.as_f64()?,
            v.get("tput_per_gpu")?.as_f64()?,
        )
    };
    (x.is_finite() && y.is_finite()).then(|| Point {
        x,
        y,
        label: topology(v),
    })
}

/// One curve under one latency percentile, as Check 14 assessed it (the
/// dashboard plots these).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Series {
    /// `<model>/<scenario>/<sku>_<framework>/<precision>/run<id>`.
    pub label: String,
    /// `P90 E2EL`, `P75 E2EL`, ...
    pub percentile: String,
    pub points: Vec<Point>,
    /// Indices into `points`, by ascending latency.
    pub frontier: Vec<usize>,
}

/// The result rows of the changed keys, grouped by curve; a changed key
/// without a valid point is Check 14's failure.
fn curves<'a>(
    s: &'a Snapshot,
    cfg: &RepoConfig,
    art: &'a crate::checks::snapshot::RunArtifacts,
    run_txt: &str,
) -> Result<BTreeMap<String, Vec<&'a Value>>, Box<CheckResult>> {
    let facts = s.facts(cfg);
    let agentic_src: Vec<&Value> = if art.agentic_rows.is_empty() {
        art.bmk_rows.iter().filter(|v| is_agentic(v)).collect()
    } else {
        art.agentic_rows.iter().collect()
    };
    let rows: Vec<&Value> = agentic_src
        .into_iter()
        .chain(art.bmk_rows.iter().filter(|v| !is_agentic(v)))
        .collect();
    let mut curves: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for k in &facts.changed {
        let mine: Vec<&Value> = rows
            .iter()
            .copied()
            .filter(|v| row_matches(v, &k.entry))
            .collect();
        let valid = mine.iter().any(|v| point(v, "p90").is_some());
        if !valid {
            return Err(Box::new(CheckResult::fail(
                N,
                format!("no benchmark points for {} in {run_txt}.", k.key),
            )));
        }
        for v in mine {
            let e = curves.entry(curve_key(v)).or_default();
            if !e.contains(&v) {
                e.push(v);
            }
        }
    }
    Ok(curves)
}

fn curve_label(first: &Value, run: Option<u64>) -> String {
    format!(
        "{}/{}/{}_{}/{}/{}",
        s_field(first, "infmax_model_prefix")
            .or_else(|| s_field(first, "model_prefix"))
            .unwrap_or(""),
        scenario_label(first),
        hw_sku(s_field(first, "hw").unwrap_or("")),
        s_field(first, "framework").unwrap_or(""),
        s_field(first, "precision").unwrap_or(""),
        run.map_or("run".to_owned(), |id| format!("run{id}"))
    )
}

/// Each curve's series per latency percentile, with its frontier.
fn curve_series(s: &Snapshot, rows: &[&Value], run: Option<u64>) -> Vec<Series> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let label = curve_label(first, run);
    let pcts: Vec<String> = if is_agentic(first) {
        s.settings.agentic_latency_percentiles.clone()
    } else {
        vec!["p90".into()]
    };
    pcts.iter()
        .map(|pct| {
            let points: Vec<Point> = rows.iter().filter_map(|v| point(v, pct)).collect();
            let frontier = frontier(&points);
            Series {
                label: label.clone(),
                percentile: format!("{} E2EL", pct.to_ascii_uppercase()),
                points,
                frontier,
            }
        })
        .collect()
}

/// Every series Check 14 assesses on the snapshot (empty when it has
/// nothing to plot).
pub fn series(s: &Snapshot, cfg: &RepoConfig) -> Vec<Series> {
    let Some(art) = &s.artifacts else {
        return Vec::new();
    };
    let run = s.pinned_run.as_ref().map(|r| r.id);
    match curves(s, cfg, art, "the run") {
        Ok(c) => c
            .values()
            .flat_map(|rows| curve_series(s, rows, run))
            .collect(),
        Err(_) => Vec::new(),
    }
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let evals_only =
        !facts.new_entries.is_empty() && facts.new_entries.iter().all(|e| e.is_evals_only());
    if facts.changed.is_empty() || evals_only {
        return CheckResult::na(N, "no benchmark configs changed.");
    }
    let Some(art) = &s.artifacts else {
        return CheckResult::review(
            N,
            "run artifacts were not provided; frontier points cannot be counted.",
        );
    };
    let run = s.pinned_run.as_ref().map(|r| r.id);
    let run_txt = run.map_or("the run".to_owned(), |id| format!("run {id}"));
    let curves = match curves(s, cfg, art, &run_txt) {
        Ok(c) => c,
        Err(fail) => return *fail,
    };
    let min = s.settings.pareto_min_points;
    let mut pass_parts: Vec<String> = Vec::new();
    let mut low: Vec<String> = Vec::new();
    let mut dominated_all: Vec<String> = Vec::new();
    let mut n_pcts = 1usize;
    for rows in curves.values() {
        let all = curve_series(s, rows, run);
        let Some(label) = all.first().map(|x| x.label.clone()) else {
            continue;
        };
        n_pcts = n_pcts.max(all.len());
        let mut counts: Vec<String> = Vec::new();
        let mut dominated_per: Vec<Vec<String>> = Vec::new();
        for sr in &all {
            let (pts, f, name) = (&sr.points, &sr.frontier, &sr.percentile);
            counts.push(format!(
                "{name} has {}/{} frontier points",
                f.len(),
                pts.len()
            ));
            dominated_per.push(
                (0..pts.len())
                    .filter(|i| !f.contains(i))
                    .map(|i| pts[i].label.clone())
                    .collect(),
            );
            if f.len() < min {
                low.push(format!(
                    "{label} has {} {name} frontier points (<{min})",
                    f.len()
                ));
            }
        }
        // Points dominated under every percentile.
        if let Some(first_d) = dominated_per.first() {
            for d in first_d {
                if dominated_per.iter().all(|ds| ds.contains(d)) && !dominated_all.contains(d) {
                    dominated_all.push(d.clone());
                }
            }
        }
        pass_parts.push(format!("{label}: {}", join_list(&counts)));
    }
    let ev: Vec<Evidence> = run.map(|id| Evidence::Run { id }).into_iter().collect();
    if facts.new_entries.iter().any(|e| e.is_append_only()) {
        return CheckResult::review(
            N,
            format!(
                "append-only: {run_txt} holds only the appended points ({}); the prior curve's points are needed — maintainer review.",
                pass_parts.join("; ")
            ),
        )
        .with_all(ev);
    }
    if !low.is_empty() {
        return CheckResult::review(N, format!("{} — maintainer review.", low.join("; ")))
            .with_all(ev);
    }
    let n = curves.len();
    let count = if n == 1 {
        "one curve".to_owned()
    } else {
        format!("{n} curves")
    };
    let dominated = match dominated_all.as_slice() {
        [] => String::new(),
        [one] if n_pcts == 2 => format!(" {one} is dominated in both."),
        [one] if n_pcts > 2 => format!(" {one} is dominated in all."),
        [one] => format!(" {one} is dominated."),
        many => format!(" {} are dominated.", join_list(many)),
    };
    CheckResult::pass(
        N,
        format!("{count}, {} (≥{min}).{dominated}", pass_parts.join("; ")),
    )
    .with_all(ev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::{ChangedFile, RunArtifacts};
    use serde_json::json;

    #[test]
    fn frontier_of_the_reference_fixture_has_five_points() {
        // docs/rules.md Check 14 fixture shape: conc 48 is dominated by 32.
        let pts: Vec<Point> = [
            (1.0, 10.0),
            (1.5, 20.0),
            (2.0, 30.0),
            (3.0, 40.0),
            (3.5, 39.0),
            (4.0, 50.0),
        ]
        .iter()
        .map(|(x, y)| Point {
            x: *x,
            y: *y,
            label: String::new(),
        })
        .collect();
        assert_eq!(frontier(&pts), vec![0, 1, 2, 3, 5]);
    }

    fn snap(points: &[(f64, f64)]) -> Snapshot {
        let mut s = Snapshot::default();
        s.head_files.insert(
            "configs/nvidia-master.yaml".into(),
            "m-fp4-b200-sglang:\n  image: i\n  model-prefix: m\n  precision: fp4\n  framework: sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4] }\n".into(),
        );
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s.artifacts = Some(RunArtifacts {
            bmk_rows: points
                .iter()
                .enumerate()
                .map(|(i, (x, y))| json!({"infmax_model_prefix": "m", "precision": "fp4", "framework": "sglang", "hw": "b200", "image": "i", "isl": 8192, "osl": 1024, "tp": 8, "conc": i + 1, "p90_e2el": x, "tput_per_gpu": y}))
                .collect(),
            ..Default::default()
        });
        s
    }

    #[test]
    fn five_frontier_points_pass_four_review_none_fail() {
        let five = [
            (1.0, 1.0),
            (2.0, 2.0),
            (3.0, 3.0),
            (4.0, 4.0),
            (5.0, 5.0),
            (6.0, 4.5),
        ];
        let r = check(&snap(&five), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "one curve, m/8k1k/b200_sglang/fp4/run: P90 E2EL has 5/6 frontier points (≥5). TP8 C6 is dominated."
        );
        let r = check(&snap(&five[..4]), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Review);
        assert_eq!(
            r.reason,
            "m/8k1k/b200_sglang/fp4/run has 4 P90 E2EL frontier points (<5) — maintainer review."
        );
        let r = check(&snap(&[]), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "no benchmark points for m-fp4-b200-sglang in the run."
        );
    }
}
