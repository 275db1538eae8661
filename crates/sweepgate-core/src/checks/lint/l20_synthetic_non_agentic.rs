//! L20 (E): no synthetic acceptance on non-agentic configs (docs/rules.md
//! §3 L20, Check 11c): it inflates fixed-seq-len numbers.

use super::context::{Context, arms, settings_at};
use super::{Finding, Rule, Severity};
use crate::recipe::launcher::Scenario;

pub(crate) const RULE: Rule = Rule {
    id: "L20",
    name: "synthetic-non-agentic",
    description: "Synthetic (simulated) acceptance is only for agentic configs.",
    check,
};

pub(crate) const SCRIPT_KNOBS: [&str; 6] = [
    "SGLANG_SIMULATE_ACC_LEN",
    "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
    "synthetic_acceptance_length",
    "--spec-decode-acceptance-length",
    "--spec-decode-acceptance-rate",
    "SYNTHETIC_ACCEPTANCE=true",
];

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let d = &ctx.input.data;
    let mut out = Vec::new();
    for e in ctx.all_changed() {
        if d.synthetic_allow.contains(&e.key) {
            continue;
        }
        for (scenario, s) in arms(e) {
            if scenario != Scenario::FixedSeqLen {
                continue;
            }
            for (item, line) in settings_at(s) {
                if item.replace(' ', "") == "SYNTHETIC_ACCEPTANCE=true" {
                    out.push(
                        Finding::new("L20", Severity::Error, &e.file, line, format!("non-agentic `{}` turns on synthetic acceptance; fixed-seq-len numbers must use real acceptance", e.key))
                            .subject(e.key.clone())
                            .fix("remove SYNTHETIC_ACCEPTANCE from this fixed-seq-len config"),
                    );
                }
            }
        }
        let fixed_only = e.scenarios.agentic_coding.items().is_empty();
        if !fixed_only {
            continue;
        }
        for sc in ctx.scripts_of(&e.key) {
            if ctx.is_agentic_script(&sc.facts.path) {
                continue;
            }
            for knob in SCRIPT_KNOBS {
                if let Some(line) = super::spec::find_line(&sc.text, knob) {
                    out.push(
                        Finding::new("L20", Severity::Error, &sc.facts.path, line, format!("`{knob}` simulates acceptance in a fixed-seq-len script (run by `{}`)", e.key))
                            .subject(knob.to_string())
                            .fix("remove the synthetic-acceptance knob"),
                    );
                }
            }
        }
    }
    out
}
