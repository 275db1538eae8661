//! L13 (W / I): pin images by digest, for added or changed keys
//! (docs/rules.md §3 L13). Digest → pass; an immutable-looking tag → I;
//! a moving tag → W.

use super::context::Context;
use super::image::{ImageRef, immutable_tag};
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L13",
    name: "image-digest",
    description: "Images are pinned by digest; a moving tag can change what a rerun measures.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for e in ctx.direct_keys() {
        let i = ImageRef::parse(&e.image.value);
        if i.pinned_by_digest() {
            continue;
        }
        let line = e.image.pos.line as usize;
        let tag = i.tag.clone().unwrap_or_else(|| "latest".into());
        let f = if immutable_tag(&tag) {
            Finding::new(
                "L13",
                Severity::Info,
                &e.file,
                line,
                format!(
                    "`{}` pins image tag `{tag}`, which looks immutable but is not a digest",
                    e.key
                ),
            )
        } else {
            Finding::new(
                "L13",
                Severity::Warning,
                &e.file,
                line,
                format!(
                    "`{}` uses the moving tag `{tag}`; a rerun may measure a different image",
                    e.key
                ),
            )
        };
        out.push(f.fix(format!("pin `{}@sha256:<digest>`", i.text)));
    }
    out
}
