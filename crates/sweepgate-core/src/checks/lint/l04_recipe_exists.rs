//! L04 (E, W if the path may live only upstream): a recipe named by
//! `CONFIG_FILE` exists in the local srt-slurm overlay (docs/rules.md §3 L04).

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::launcher::{RecipeSpelling, Route};

pub(crate) const RULE: Rule = Rule {
    id: "L04",
    name: "recipe-exists",
    description: "A recipe referenced by CONFIG_FILE must exist where the launcher overlays local recipes.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let tree = &ctx.input.head_tree;
    for e in ctx.all_changed() {
        let (file, line) = ctx.key_loc(e);
        let mut seen = std::collections::BTreeSet::new();
        for r in ctx.routes.get(&e.key).into_iter().flatten() {
            for l in &r.resolution.per_launcher {
                let Route::Recipes(refs) = &l.route else {
                    continue;
                };
                for x in refs.iter().filter(|x| !x.exists) {
                    if !seen.insert(x.local_path.clone()) {
                        continue;
                    }
                    let dir = x
                        .local_path
                        .rsplit_once('/')
                        .map(|d| format!("{}/", d.0))
                        .unwrap_or_default();
                    let overlaid = tree.iter().any(|p| p.starts_with(&dir));
                    let was_here = ctx.input.base_tree.contains(&x.local_path);
                    let sev = if x.spelling == RecipeSpelling::Upstream && !overlaid && !was_here {
                        Severity::Warning
                    } else {
                        Severity::Error
                    };
                    let mut msg = format!(
                        "`{}` runs `{}`, but `{}` does not exist",
                        e.key, x.given, x.local_path
                    );
                    if was_here {
                        msg.push_str(" (this PR deletes it)");
                    } else if sev == Severity::Warning {
                        msg.push_str("; it may exist only in the upstream srt-slurm clone");
                    }
                    out.push(
                        Finding::new("L04", sev, &file, line, msg)
                            .subject(x.local_path.clone())
                            .fix(format!(
                                "add `{}` or point CONFIG_FILE at an existing recipe",
                                x.local_path
                            )),
                    );
                }
            }
        }
    }
    out
}
