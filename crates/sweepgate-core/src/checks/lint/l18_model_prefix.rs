//! L18 (E): the model prefix is registered (docs/rules.md §3 L18): the
//! key's first token equals `model-prefix`, which is in the MODELS.md
//! support matrix.

use super::context::Context;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L18",
    name: "model-prefix",
    description: "A config key starts with its model-prefix, and the prefix is registered in MODELS.md.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let models_path = &ctx.input.config.paths.models_policy;
    for e in ctx.direct_keys() {
        let first = e.key.split('-').next().unwrap_or("");
        let prefix = e.model_prefix.value.as_str();
        if first != prefix {
            out.push(
                Finding::new(
                    "L18",
                    Severity::Error,
                    &e.file,
                    e.pos.line as usize,
                    format!(
                        "key `{}` starts with `{first}`, but its model-prefix is `{prefix}`",
                        e.key
                    ),
                )
                .subject(e.key.clone())
                .fix(format!("start the key with `{prefix}-`")),
            );
        }
        if let Some(m) = &ctx.models
            && m.model(prefix).is_none()
        {
            out.push(
                Finding::new(
                    "L18",
                    Severity::Error,
                    &e.file,
                    e.model_prefix.pos.line as usize,
                    format!("model prefix `{prefix}` of `{}` is not in the {models_path} support matrix", e.key),
                )
                .subject(prefix.to_string())
                .fix(format!("add a `{prefix}` row to the {models_path} model support matrix, or use a registered prefix")),
            );
        }
    }
    out
}
