//! L28 (E): the injector opt-in carries an explicit length (docs/rules.md
//! §3 L28, §1.4): `SYNTHETIC_ACCEPTANCE=true` needs
//! `SYNTHETIC_ACCEPTANCE_LENGTH=` in the same `additional-settings`, and the
//! framework must have a registered injector.

use super::context::{Context, arms, settings_at};
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L28",
    name: "injector-length",
    description: "SYNTHETIC_ACCEPTANCE=true needs an explicit SYNTHETIC_ACCEPTANCE_LENGTH and a framework with an injector.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let d = &ctx.input.data;
    let mut out = Vec::new();
    for e in ctx.all_changed() {
        for (_, s) in arms(e) {
            let items = settings_at(s);
            let Some((_, line)) = items
                .iter()
                .find(|(t, _)| t.replace(' ', "") == "SYNTHETIC_ACCEPTANCE=true")
            else {
                continue;
            };
            if !items
                .iter()
                .any(|(t, _)| t.trim_start().starts_with("SYNTHETIC_ACCEPTANCE_LENGTH="))
            {
                out.push(
                    Finding::new("L28", Severity::Error, &e.file, *line, format!("`{}` sets SYNTHETIC_ACCEPTANCE=true without SYNTHETIC_ACCEPTANCE_LENGTH; the injector's fallback reference file does not exist", e.key))
                        .subject(e.key.clone())
                        .fix("add \"SYNTHETIC_ACCEPTANCE_LENGTH=<golden AL>\" to the same additional-settings"),
                );
            }
            if !d.injector_frameworks.contains(&e.framework.value) {
                out.push(
                    Finding::new("L28", Severity::Error, &e.file, *line, format!("framework `{}` of `{}` has no synthetic-acceptance injector (registered: {})", e.framework.value, e.key, d.injector_frameworks.join(", ")))
                        .subject(e.key.clone())
                        .fix("encode the simulated AL in the recipe instead"),
                );
            }
        }
    }
    out
}
