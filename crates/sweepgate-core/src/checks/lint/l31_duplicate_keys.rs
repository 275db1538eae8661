//! L31 (W): a key repeated in one YAML mapping (issue 17 item 6). The one
//! YAML layer reads every file as PyYAML does, the reference tools'
//! reader: the last value wins and the earlier one is silently ignored, so
//! the repeat is reported where it is written.

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::files::FileStatus;
use crate::recipe::yaml::parse_with_duplicates;

pub(crate) const RULE: Rule = Rule {
    id: "L31",
    name: "duplicate-key",
    description: "A YAML mapping must not repeat a key: PyYAML keeps the last value and silently drops the earlier one.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &ctx.input.changed {
        if c.status == FileStatus::Removed
            || !(c.path.ends_with(".yaml") || c.path.ends_with(".yml"))
        {
            continue;
        }
        let Some(bytes) = ctx.input.head(&c.path) else {
            continue;
        };
        // A file that is not YAML at all is reported by the rules that read it.
        let Ok((_, dups)) = parse_with_duplicates(&c.path, bytes) else {
            continue;
        };
        for d in dups {
            out.push(
                Finding::new(
                    "L31",
                    Severity::Warning,
                    &c.path,
                    d.line,
                    format!(
                        "key `{}` is repeated in this mapping (first at line {}); PyYAML keeps this value and silently drops the first",
                        d.key, d.first_line
                    ),
                )
                .subject(d.key.clone())
                .fix(format!("keep one `{}`", d.key)),
            );
        }
    }
    out
}
