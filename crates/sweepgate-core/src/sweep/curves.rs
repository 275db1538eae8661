//! The curves a sweep run measured, for the staging reply: one per appended
//! changelog key and scenario, named as the results site names them.
use crate::recipe::changelog::{Entry, ScenarioType, key_matches};
use crate::recipe::master::MasterConfig;

/// `8192` → `8k`, `1024` → `1k`; other lengths as written.
pub(crate) fn seq_len_name(n: i64) -> String {
    if n > 0 && n % 1024 == 0 {
        format!("{}k", n / 1024)
    } else {
        n.to_string()
    }
}

/// The SKU of a runner label: `cluster:b300-nv` → `b300`, `h200` → `h200`.
pub(crate) fn sku_of(runner: &str) -> &str {
    let r = runner.strip_prefix("cluster:").unwrap_or(runner);
    r.split(['-', '_']).next().unwrap_or(r)
}

/// `<model> · <scenario> · <PRECISION> · <sku>_<framework> · <date>` for
/// every curve of the appended entries, in changelog and master order,
/// without repeats.
pub fn bullets(appended: &[Entry], master: &MasterConfig, date: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for entry in appended {
        for pattern in &entry.config_keys {
            for e in master
                .entries
                .iter()
                .filter(|e| key_matches(&pattern.value, &e.key))
            {
                let allowed = |t: ScenarioType| {
                    entry
                        .scenario_type
                        .as_ref()
                        .is_none_or(|types| types.contains(&t))
                };
                let model = e.model.value.rsplit('/').next().unwrap_or(&e.model.value);
                let mut scenarios: Vec<String> = Vec::new();
                if allowed(ScenarioType::FixedSeqLen) {
                    for b in e.scenarios.fixed_seq_len.items() {
                        scenarios.push(format!(
                            "{}{}",
                            seq_len_name(b.isl.value),
                            seq_len_name(b.osl.value)
                        ));
                    }
                }
                if allowed(ScenarioType::AgenticCoding)
                    && !e.scenarios.agentic_coding.items().is_empty()
                {
                    scenarios.push("agentic-traces".into());
                }
                for s in scenarios {
                    let line = format!(
                        "{model} · {s} · {} · {}_{} · {date}",
                        e.precision.value.to_ascii_uppercase(),
                        sku_of(&e.runner.value),
                        e.framework.value
                    );
                    if !out.contains(&line) {
                        out.push(line);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(seq_len_name(8192), "8k");
        assert_eq!(seq_len_name(1024), "1k");
        assert_eq!(seq_len_name(1000), "1000");
        assert_eq!(sku_of("cluster:b300-nv"), "b300");
        assert_eq!(sku_of("gb300"), "gb300");
        assert_eq!(sku_of("h200-cw_0"), "h200");
    }

    #[test]
    fn seed_002_curve() {
        // seed 002: dsv41flash-fp4-gb300-sglang-agentic-dspark, staged as
        // "DeepSeek-V4.1-Flash · agentic-traces · FP4 · gb300_sglang · 2026-10-14".
        let master = b"dsv41flash-fp4-gb300-sglang-agentic-dspark:
  image: lmsysorg/sglang:nightly-dev-cu13-20261014-684fea8a
  model: deepseek-ai/DeepSeek-V4.1-Flash
  model-prefix: dsv41flash
  runner: cluster:gb300-nv
  precision: fp4
  framework: sglang
  multinode: false
  scenarios:
    agentic-coding:
    - search-space:
      - { tp: 4, kv-offloading: none, conc-list: [1, 4, 16] }
";
        let m = crate::recipe::master::parse("configs/nvidia-master.yaml", master).unwrap();
        let base = b"- config-keys:\n    - a\n  description:\n    - x\n  pr-link: https://github.com/o/r/pull/1\n";
        let head = b"- config-keys:\n    - a\n  description:\n    - x\n  pr-link: https://github.com/o/r/pull/1\n- config-keys:\n    - dsv41flash-fp4-gb300-sglang-agentic-dspark\n  description:\n    - Add the AgentX config\n  pr-link: https://github.com/o/r/pull/2\n";
        let report = crate::recipe::changelog::pr_gate(
            "perf-changelog.yaml",
            base,
            head,
            &Default::default(),
        );
        assert_eq!(report.appended.len(), 1, "{:?}", report.violations);
        assert_eq!(
            bullets(&report.appended, &m, "2026-10-14"),
            vec!["DeepSeek-V4.1-Flash · agentic-traces · FP4 · gb300_sglang · 2026-10-14"]
        );
    }
}
