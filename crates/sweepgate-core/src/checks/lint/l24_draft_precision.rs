//! L24 (E): no draft-precision override (docs/rules.md §3 L24, Check 13).

use super::context::Context;
use super::spec::{recipe_uses_spec, spec_line};
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L24",
    name: "draft-precision",
    description: "Speculative-decoding draft heads are served at the shipped precision.",
    check,
};

fn truthy(v: &str) -> bool {
    matches!(
        v.trim()
            .trim_matches(['"', '\''])
            .to_ascii_lowercase()
            .as_str(),
        "1" | "true" | "yes" | "on"
    )
}

fn finding(path: &str, line: usize, knob: &str) -> Finding {
    Finding::new("L24", Severity::Error, path, line, format!("`{knob}` re-quantises the draft head; the draft must run at the checkpoint's shipped precision"))
        .fix(format!("remove `{knob}`"))
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        if spec_line(&s.text).is_none() {
            continue;
        }
        let f = &s.facts;
        for v in &f.env {
            if v.name == "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"
                && v.value.as_ref().is_some_and(|w| truthy(&w.text))
            {
                out.push(finding(&f.path, v.line, &v.name));
            }
        }
        for srv in &f.servers {
            for rf in f.resolved_server_flags(srv) {
                if rf.flag.name == "--speculative-draft-model-quantization" {
                    out.push(finding(&f.path, rf.flag.line, &rf.flag.name));
                }
                if rf.flag.name == "--speculative-config"
                    && let Some(v) = rf.flag.value_text()
                    && serde_json::from_str::<serde_json::Value>(v)
                        .ok()
                        .is_some_and(|j| j.get("quantization").is_some())
                {
                    out.push(finding(
                        &f.path,
                        rf.flag.line,
                        "--speculative-config quantization",
                    ));
                }
            }
        }
    }
    for r in ctx.recipes_in_scope() {
        if !recipe_uses_spec(r, ctx.input.head_text(&r.path)) {
            continue;
        }
        for role in &r.roles {
            for e in &role.env {
                if e.key == "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE" && truthy(&e.text()) {
                    out.push(finding(&r.path, e.line, &e.key));
                }
            }
            for a in &role.args {
                if a.key == "speculative-draft-model-quantization" {
                    out.push(finding(&r.path, a.line, &a.key));
                }
                if a.key == "speculative-config"
                    && serde_json::from_str::<serde_json::Value>(&a.text())
                        .ok()
                        .is_some_and(|j| j.get("quantization").is_some())
                {
                    out.push(finding(&r.path, a.line, "speculative-config quantization"));
                }
            }
        }
    }
    out
}
