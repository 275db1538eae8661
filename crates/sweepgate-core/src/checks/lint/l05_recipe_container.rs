//! L05 (E): an srt-slurm recipe's `model.container` equals the master
//! config's `image` when it is an image reference (docs/rules.md §3 L05).

use super::context::Context;
use super::image::ImageRef;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L05",
    name: "recipe-container",
    description: "A recipe's model.container must equal the master config's image.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for r in ctx.recipes_in_scope() {
        let Some(c) = &r.container else { continue };
        if !c.value.contains('/') {
            continue;
        }
        let ci = ImageRef::parse(&c.value);
        for e in ctx.keys_running_recipe(&r.path) {
            let ei = ImageRef::parse(&e.image.value);
            if ci.text != ei.text {
                out.push(
                    Finding::new(
                        "L05",
                        Severity::Error,
                        &r.path,
                        c.line,
                        format!(
                            "model.container `{}` differs from the image `{}` of `{}`",
                            c.value, e.image.value, e.key
                        ),
                    )
                    .subject(e.key.clone())
                    .fix(format!("set model.container to `{}`", e.image.value)),
                );
            }
        }
    }
    out
}
