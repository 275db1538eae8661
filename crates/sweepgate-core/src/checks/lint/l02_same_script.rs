//! L02 (E): all nodes of one runner label resolve to the same script
//! (docs/rules.md §3 L02). Only paths that exist are compared (seed 004).

use super::context::Context;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L02",
    name: "same-script-per-label",
    description: "Every launcher of a runner label must run the same benchmark script.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for e in ctx.all_changed() {
        let (file, line) = ctx.key_loc(e);
        for r in ctx.routes.get(&e.key).into_iter().flatten() {
            let scripts = r.resolution.distinct_scripts();
            if scripts.len() > 1 {
                let per: Vec<String> = r
                    .resolution
                    .per_launcher
                    .iter()
                    .filter_map(|l| l.script().map(|s| format!("`{}` → `{s}`", l.launcher)))
                    .collect();
                let mut f = Finding::new(
                    "L02",
                    Severity::Error,
                    &file,
                    line,
                    format!(
                        "`{}` (spec-decoding {}) runs different scripts depending on the node of `{}`: {}",
                        e.key,
                        r.spec,
                        e.runner.value,
                        per.join(", ")
                    ),
                )
                .subject(e.key.clone());
                if let Some(want) = r.resolution.accepted_by_all().first() {
                    f = f.fix(format!("keep one script named `{want}`"));
                }
                out.push(f);
            }
        }
    }
    out
}
