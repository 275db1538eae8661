//! L14 (E): images must be public (docs/rules.md §3 L14): no local path,
//! no `.sqsh`, and a registry or namespace.

use super::context::Context;
use super::image::ImageRef;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L14",
    name: "public-image",
    description: "Images must be public registry references, not local files or bare names.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for e in ctx.direct_keys() {
        let raw = e.image.value.trim();
        let i = ImageRef::parse(raw);
        let why = if raw.starts_with('/') {
            Some("is a local path")
        } else if raw.ends_with(".sqsh") {
            Some("is a squashfs file")
        } else if !i.text.contains('/') {
            Some("has no registry or namespace")
        } else {
            None
        };
        if let Some(why) = why {
            out.push(
                Finding::new(
                    "L14",
                    Severity::Error,
                    &e.file,
                    e.image.pos.line as usize,
                    format!(
                        "image `{raw}` of `{}` {why}; others cannot pull it to reproduce the run",
                        e.key
                    ),
                )
                .subject(e.key.clone())
                .fix("use a public registry reference (`namespace/name:tag@sha256:…`)"),
            );
        }
    }
    out
}
