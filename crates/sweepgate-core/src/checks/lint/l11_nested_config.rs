//! L11 (W spelling, E mixing): nested vLLM config flags (docs/rules.md §3
//! L11; seed 000). Dotted flags are written `--<name>_config.<key>`; one
//! config is never passed both as a JSON blob and as dotted keys.

use std::collections::BTreeMap;

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::script::Engine;

pub(crate) const RULE: Rule = Rule {
    id: "L11",
    name: "nested-config-flag",
    description: "Dotted vLLM config flags use the underscore form, and a config is never given both as JSON and as dotted keys.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        for srv in f.servers.iter().filter(|s| {
            matches!(
                s.engine,
                Engine::Vllm | Engine::Dynamo(crate::recipe::script::DynamoBackend::Vllm)
            )
        }) {
            let flags = f.resolved_server_flags(srv);
            // config name (underscore form) → (blob line, dotted lines)
            let mut forms: BTreeMap<String, (Option<usize>, Vec<usize>)> = BTreeMap::new();
            for rf in &flags {
                let fl = &rf.flag;
                if let Some((head, key)) = fl.dotted() {
                    let norm = head.replace('-', "_");
                    if head.contains('-') && norm.ends_with("_config") {
                        out.push(
                            Finding::new(
                                "L11",
                                Severity::Warning,
                                &f.path,
                                fl.line,
                                format!("`{}` spells the nested config with a hyphen; the repository writes `--{norm}.{key}` (the Python attribute name)", fl.name),
                            )
                            .subject(format!("--{norm}"))
                            .fix(format!("--{norm}.{key}")),
                        );
                    }
                    if norm.ends_with("_config") {
                        forms.entry(norm).or_default().1.push(fl.line);
                    }
                } else {
                    let norm = fl.key().replace('-', "_");
                    if norm.ends_with("_config")
                        && fl
                            .value_text()
                            .is_some_and(|v| v.trim_start().starts_with('{'))
                    {
                        forms.entry(norm).or_default().0 = Some(fl.line);
                    }
                }
            }
            for (name, (blob, dotted)) in forms {
                if let (Some(b), Some(d)) = (blob, dotted.first()) {
                    out.push(
                        Finding::new(
                            "L11",
                            Severity::Error,
                            &f.path,
                            *d,
                            format!("`{name}` is passed both as a JSON blob (line {b}) and as dotted keys; one silently overrides the other"),
                        )
                        .subject(name.clone())
                        .fix(format!("merge the dotted keys into the `--{}` JSON", name.replace('_', "-"))),
                    );
                }
            }
        }
    }
    out
}
