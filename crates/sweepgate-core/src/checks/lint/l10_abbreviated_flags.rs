//! L10 (W): no abbreviated engine flags (docs/rules.md §3 L10; seed 003):
//! a flag or recipe key that is a strict prefix of a canonical flag of its
//! engine but not canonical itself (`--speculative-algo`).

use super::context::Context;
use super::data::EngineData;
use super::{Finding, Rule, Severity};
use crate::recipe::script::Engine;

pub(crate) const RULE: Rule = Rule {
    id: "L10",
    name: "abbreviated-flag",
    description: "Engine flags are written in full: argparse accepts unique prefixes, grep-based tooling does not.",
    check,
};

/// The canonical flag `key` abbreviates, if it is an abbreviation.
fn expands(data: &EngineData, key: &str) -> Option<String> {
    if key.contains('.') || key.len() < 3 || data.canonical_flags.iter().any(|c| c == key) {
        return None;
    }
    let alt = key.replace('_', "-");
    if data.canonical_flags.contains(&alt) {
        return None;
    }
    let mut hits: Vec<&String> = data
        .canonical_flags
        .iter()
        .filter(|c| c.len() > key.len() && (c.starts_with(key) || c.starts_with(&alt)))
        .collect();
    hits.sort();
    hits.first().map(|s| s.to_string())
}

pub(crate) fn engine_data<'d>(ctx: &'d Context<'_>, engine: Engine) -> Option<&'d EngineData> {
    let d = &ctx.input.data;
    match engine {
        Engine::Vllm => Some(&d.vllm),
        Engine::Sglang => Some(&d.sglang),
        Engine::Trtllm => Some(&d.trtllm),
        Engine::Atom => Some(&d.atom),
        Engine::Dynamo(b) => match b {
            crate::recipe::script::DynamoBackend::Vllm => Some(&d.vllm),
            crate::recipe::script::DynamoBackend::Sglang => Some(&d.sglang),
            crate::recipe::script::DynamoBackend::Trtllm => Some(&d.trtllm),
            _ => None,
        },
        Engine::SrtSlurm => None,
    }
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        for srv in &s.facts.servers {
            let Some(data) = engine_data(ctx, srv.engine) else {
                continue;
            };
            for rf in s.facts.resolved_server_flags(srv) {
                let fl = &rf.flag;
                if !fl.name.starts_with("--") {
                    continue;
                }
                if let Some(full) = expands(data, fl.key()) {
                    out.push(
                        Finding::new(
                            "L10",
                            Severity::Warning,
                            &s.facts.path,
                            fl.line,
                            format!("`{}` abbreviates `--{full}`; it works only while argparse finds a unique prefix, and grep-based tooling misses it", fl.name),
                        )
                        .fix(format!("--{full}")),
                    );
                }
            }
        }
    }
    for r in ctx.recipes_in_scope() {
        let Some(engine) = r.engine.as_ref().map(|e| e.value.clone()) else {
            continue;
        };
        let Some(data) = ctx.input.data.engine(&engine) else {
            continue;
        };
        for role in &r.roles {
            for a in &role.args {
                if let Some(full) = expands(data, &a.key) {
                    out.push(
                        Finding::new(
                            "L10",
                            Severity::Warning,
                            &r.path,
                            a.line,
                            format!("recipe key `{}` abbreviates `{full}`; grep-based tooling (the SGLang injector's regex) misses it", a.key),
                        )
                        .fix(full),
                    );
                }
            }
        }
    }
    out
}
