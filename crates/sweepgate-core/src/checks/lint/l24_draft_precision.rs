//! L24 (E): no draft-precision override (docs/rules.md §3 L24, Check 13).

use super::context::Context;
use super::spec::{recipe_uses_spec, spec_line};
use super::{Finding, Rule, Severity};
use crate::recipe::golden::served::{self, DraftOverride, draft_overrides};

pub(crate) const RULE: Rule = Rule {
    id: "L24",
    name: "draft-precision",
    description: "Speculative-decoding draft heads are served at the shipped precision.",
    check,
};

fn finding(o: DraftOverride) -> Finding {
    Finding::new("L24", Severity::Error, &o.file, o.line, format!("`{}` re-quantises the draft head; the draft must run at the checkpoint's shipped precision", o.knob))
        .subject(o.knob.clone())
        .fix(format!("remove `{}`", o.knob))
}

/// The detection Check 13 uses (`recipe::golden::served::draft_overrides`).
fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        if spec_line(&s.text).is_none() {
            continue;
        }
        out.extend(
            draft_overrides(&served::script_settings(&s.facts, &s.text))
                .into_iter()
                .map(finding),
        );
    }
    for r in ctx.recipes_in_scope() {
        if !recipe_uses_spec(r, ctx.input.head_text(&r.path)) {
            continue;
        }
        out.extend(
            draft_overrides(&served::recipe_settings_all_roles(r))
                .into_iter()
                .map(finding),
        );
    }
    out
}
