//! Check 16 — NVIDIA overview (`docs/rules.md` §2 Check 16,
//! information only): one summary per changed NVIDIA key. It never blocks:
//! the row is PASS with the summary or N/A.
use super::c06_image::short_image;
use super::{CheckResult, Snapshot};
use crate::config::RepoConfig;

const N: u8 = 16;

/// NVIDIA SKUs.
pub(crate) const NVIDIA_SKUS: [&str; 7] = [
    "h100",
    "h200",
    "b200",
    "b300",
    "gb200",
    "gb300",
    "rtx6000pro",
];

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let keys: Vec<_> = facts
        .changed
        .iter()
        .filter(|k| {
            k.entry.file.contains("nvidia") || NVIDIA_SKUS.contains(&k.entry.sku().as_str())
        })
        .collect();
    let mut r = if keys.is_empty() {
        CheckResult::na(N, "no NVIDIA configs changed.")
    } else {
        let lines: Vec<String> = keys
            .iter()
            .map(|k| {
                let e = &k.entry;
                let rows = e.rows();
                let scen: Vec<&str> = [
                    e.has_agentic().then_some("agentic-coding"),
                    e.has_fixed().then_some("fixed-seq-len"),
                ]
                .into_iter()
                .flatten()
                .collect();
                let mut spec: Vec<String> = rows.iter().map(|r| r.spec.clone()).collect();
                spec.sort();
                spec.dedup();
                let tps: Vec<i64> = rows.iter().filter_map(|r| r.tp).collect();
                let concs: Vec<i64> = rows.iter().flat_map(|r| r.conc.iter().copied()).collect();
                let range = |v: &[i64]| match (v.iter().min(), v.iter().max()) {
                    (Some(a), Some(b)) if a == b => a.to_string(),
                    (Some(a), Some(b)) => format!("{a}–{b}"),
                    _ => "?".to_owned(),
                };
                format!(
                    "{} ({} {}, {}, {}, {}, spec {}, TP {}, conc {})",
                    k.key,
                    e.sku(),
                    e.framework(),
                    short_image(e.image()),
                    e.precision(),
                    scen.join("+"),
                    spec.join("/"),
                    range(&tps),
                    range(&concs)
                )
            })
            .collect();
        CheckResult::pass(
            N,
            format!(
                "{} NVIDIA config{}: {}.",
                keys.len(),
                if keys.len() == 1 { "" } else { "s" },
                lines.join("; ")
            ),
        )
    };
    r.advisory = true;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::ChangedFile;

    #[test]
    fn summarises_nvidia_keys_and_never_blocks() {
        let mut s = Snapshot::default();
        s.head_files.insert(
            "configs/nvidia-master.yaml".into(),
            "m-fp4-b200-sglang:\n  image: lmsysorg/sglang:v1\n  model-prefix: m\n  precision: fp4\n  framework: sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4, 64] }\n".into(),
        );
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass);
        assert_eq!(
            r.reason,
            "1 NVIDIA config: m-fp4-b200-sglang (b200 sglang, lmsysorg/sglang:v1, fp4, fixed-seq-len, spec none, TP 8, conc 4–64)."
        );
        assert!(!r.is_blocking());
        let r = check(&Snapshot::default(), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::NotApplicable);
    }
}
