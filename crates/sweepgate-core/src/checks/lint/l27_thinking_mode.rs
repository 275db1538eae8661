//! L27 (W): the thinking mode agrees with the golden row (docs/rules.md
//! §3 L27): a launch with thinking off pins the `thinking_off` AL, or that
//! row is missing (→ Check 11).

use super::context::Context;
use super::l19_golden_al::{lookup, pairs};
use super::{Finding, Rule, Severity};
use crate::recipe::golden::{Lookup, ThinkingMode};

pub(crate) const RULE: Rule = Rule {
    id: "L27",
    name: "thinking-mode",
    description: "A launch with thinking off pins the AL of the golden thinking_off row.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in pairs(ctx) {
        if p.mode != Some(ThinkingMode::Off) {
            continue;
        }
        match lookup(ctx, &p, ThinkingMode::Off) {
            Lookup::Found { curve, cell } => {
                let on = lookup(ctx, &p, ThinkingMode::On).al();
                if (p.al - cell.al).abs() >= p.tolerance && on.is_some_and(|v| (p.al - v).abs() < p.tolerance) {
                    out.push(
                        Finding::new(
                            "L27",
                            Severity::Warning,
                            &p.file,
                            p.line,
                            format!("`{}` runs with thinking off but pins {} (thinking_on at K={}); {} thinking_off K={} is {}", p.key, p.al, p.k, curve.file, p.k, cell.al),
                        )
                        .fix(format!("pin {} or turn thinking on", cell.al)),
                    );
                }
            }
            Lookup::NoCell { curve, .. } => out.push(Finding::new(
                "L27",
                Severity::Warning,
                &p.file,
                p.line,
                format!("`{}` runs with thinking off, but {} has no thinking_off value at K={}; state where AL {} comes from", p.key, curve.file, p.k, p.al),
            )),
            Lookup::NoCurve(_) => {}
        }
    }
    out
}
