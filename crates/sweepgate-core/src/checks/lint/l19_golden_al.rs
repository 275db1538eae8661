//! L19 (E): the pinned simulated AL matches the golden curve at the draft
//! length K (docs/rules.md §3 L19, Check 11b, §1.3–§1.4). The launch is
//! read by `recipe::golden::served`, the same reading Check 11 uses: the
//! key's scripts (shell variables and escaped JSON resolved), recipes
//! (serving role) and master `additional-settings` (runner injection).

use super::context::{Context, arms, settings_at};
use super::{Finding, Rule, Severity};
use crate::recipe::golden::served::{self, Judged, Served};
use crate::recipe::golden::{self, ThinkingMode};
use crate::recipe::launcher::Scenario;
use crate::recipe::master::MasterEntry;

pub(crate) const RULE: Rule = Rule {
    id: "L19",
    name: "golden-al",
    description: "The simulated acceptance length pinned for an agentic spec config equals the golden AL at its K.",
    check,
};

/// What every changed agentic key serves.
pub(crate) fn served_keys<'c>(ctx: &'c Context<'_>) -> Vec<(&'c MasterEntry, Served)> {
    let injectors: Vec<golden::Injector> = ctx
        .input
        .data
        .injector_frameworks
        .iter()
        .map(|f| golden::Injector {
            framework: f.clone(),
            length: golden::LengthSource::Explicit,
        })
        .collect();
    let mut out = Vec::new();
    for e in ctx.all_changed() {
        if e.scenarios.agentic_coding.items().is_empty() {
            continue;
        }
        let mut settings = Vec::new();
        for sc in ctx.scripts_of(&e.key) {
            settings.extend(served::script_settings(&sc.facts, &sc.text));
        }
        for r in ctx.recipes_of(&e.key) {
            settings.extend(served::recipe_settings(r));
        }
        let items: Vec<(String, usize)> = arms(e)
            .into_iter()
            .filter(|(sc, _)| *sc == Scenario::AgenticCoding)
            .flat_map(|(_, s)| settings_at(s))
            .collect();
        let master = served::master_settings(e.file.as_ref(), &items);
        out.push((
            e,
            served::served(&settings, &master, &e.framework.value, &injectors),
        ));
    }
    out
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (e, s) in served_keys(ctx) {
        let Ok(mode) = s.thinking else { continue };
        for j in served::judge(&s, &e.model_prefix.value, mode, &ctx.golden) {
            let Judged::Mismatch {
                k,
                written,
                golden_al,
                curve_file,
                ..
            } = j.judged
            else {
                continue;
            };
            // Thinking off pinned with the thinking_on value is L27's.
            if mode == ThinkingMode::Off
                && served::judge(&s, &e.model_prefix.value, ThinkingMode::On, &ctx.golden)
                    .iter()
                    .any(|o| {
                        o.file == j.file
                            && o.line == j.line
                            && matches!(o.judged, Judged::Match { .. })
                    })
            {
                continue;
            }
            out.push(
                Finding::new(
                    "L19",
                    Severity::Error,
                    &j.file,
                    j.line,
                    format!(
                        "`{}` pins AL {written} at K={k}, but the golden {curve_file} {} K={k} is {golden_al}",
                        e.key,
                        mode.key(),
                    ),
                )
                .subject(e.key.clone())
                .fix(format!(
                    "pin {golden_al} (or change K to the one the AL was collected at)"
                )),
            );
        }
    }
    out
}
