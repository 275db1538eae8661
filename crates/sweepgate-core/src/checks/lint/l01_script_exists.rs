//! L01 (E): the script a config needs must exist under every launcher its
//! runner label reaches (docs/rules.md §3 L01, §1.8; seed 004).

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::launcher::Route;

pub(crate) const RULE: Rule = Rule {
    id: "L01",
    name: "script-exists",
    description: "The benchmark script a config runs must exist under every launcher of its runner label.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for e in ctx.all_changed() {
        let (file, line) = ctx.key_loc(e);
        for r in ctx.routes.get(&e.key).into_iter().flatten() {
            let accepted = r.resolution.accepted_by_all();
            let existing: Vec<&str> = r.resolution.distinct_scripts().into_iter().collect();
            for l in r.resolution.failures() {
                match &l.route {
                    Route::Script {
                        expected,
                        candidates,
                        ..
                    } => {
                        let mut msg = format!(
                            "`{}` (spec-decoding {}) runs `{}` on launcher `{}`, which does not exist",
                            e.key, r.spec, expected, l.launcher
                        );
                        if candidates.len() > 1 {
                            msg.push_str(&format!(
                                " (nor does `{}`)",
                                candidates[..candidates.len() - 1].join("`, `")
                            ));
                        }
                        let f = match (existing.first(), accepted.first()) {
                            (Some(have), Some(want)) => {
                                msg.push_str(&format!(
                                    "; the other launchers of `{}` run `{have}`",
                                    e.runner.value
                                ));
                                Finding::new("L01", Severity::Error, &file, line, msg)
                                    .subject(e.key.clone())
                                    .fix(format!("rename `{have}` to `{want}` (the name every launcher of `{}` accepts)", e.runner.value))
                            }
                            (Some(have), None) => {
                                msg.push_str(&format!(
                                    "; the other launchers of `{}` run `{have}`",
                                    e.runner.value
                                ));
                                Finding::new("L01", Severity::Error, &file, line, msg)
                                    .subject(e.key.clone())
                                    .fix(format!(
                                        "add `{expected}` (or teach `{}` the name `{have}`)",
                                        l.launcher_path
                                    ))
                            }
                            (None, Some(want)) => {
                                Finding::new("L01", Severity::Error, &file, line, msg)
                                    .subject(e.key.clone())
                                    .fix(format!("add `{want}`"))
                            }
                            (None, None) => Finding::new("L01", Severity::Error, &file, line, msg)
                                .subject(e.key.clone())
                                .fix(format!("add `{expected}`")),
                        };
                        out.push(f);
                    }
                    Route::Unsupported(why) => out.push(Finding::new(
                        "L01",
                        Severity::Error,
                        &file,
                        line,
                        format!("`{}` cannot run on launcher `{}`: {why}", e.key, l.launcher),
                    )),
                    // Missing recipes are L04's.
                    Route::Recipes(_) => {}
                }
            }
        }
    }
    out
}
