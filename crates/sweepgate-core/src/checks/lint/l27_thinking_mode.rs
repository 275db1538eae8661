//! L27 (W): the thinking mode agrees with the golden row (docs/rules.md
//! §3 L27): a launch with thinking off pins the `thinking_off` AL, or that
//! row is missing (→ Check 11). Reads the launch as L19 and Check 11 do.

use super::context::Context;
use super::l19_golden_al::served_keys;
use super::{Finding, Rule, Severity};
use crate::recipe::golden::ThinkingMode;
use crate::recipe::golden::served::{self, Judged};

pub(crate) const RULE: Rule = Rule {
    id: "L27",
    name: "thinking-mode",
    description: "A launch with thinking off pins the AL of the golden thinking_off row.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (e, s) in served_keys(ctx) {
        if s.thinking != Ok(ThinkingMode::Off) {
            continue;
        }
        let prefix = &e.model_prefix.value;
        let on = served::judge(&s, prefix, ThinkingMode::On, &ctx.golden);
        for j in served::judge(&s, prefix, ThinkingMode::Off, &ctx.golden) {
            let on_match = on
                .iter()
                .find(|o| o.file == j.file && o.line == j.line)
                .and_then(|o| match &o.judged {
                    Judged::Match { al, k, .. } => Some((*al, *k)),
                    _ => None,
                });
            match (&j.judged, on_match) {
                (
                    Judged::Mismatch {
                        k,
                        written,
                        golden_al,
                        curve_file,
                        ..
                    },
                    Some(_),
                ) => out.push(
                    Finding::new(
                        "L27",
                        Severity::Warning,
                        &j.file,
                        j.line,
                        format!("`{}` runs with thinking off but pins {written} (thinking_on at K={k}); {curve_file} thinking_off K={k} is {golden_al}", e.key),
                    )
                    .subject(e.key.clone())
                    .fix(format!("pin {golden_al} or turn thinking on")),
                ),
                (Judged::NoGolden(why), Some((al, k))) => out.push(
                    Finding::new(
                        "L27",
                        Severity::Warning,
                        &j.file,
                        j.line,
                        format!("`{}` runs with thinking off, but {why} at K={k}; state where AL {al} comes from", e.key),
                    )
                    .subject(e.key.clone()),
                ),
                _ => {}
            }
        }
    }
    out
}
