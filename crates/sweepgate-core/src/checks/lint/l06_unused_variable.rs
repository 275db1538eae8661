//! L06 (W): a flags-holding variable is assigned but never expanded
//! (docs/rules.md §3 L06). Variables read by `benchmark_lib.sh`
//! (`REPLAY_CMD`, `EVAL_*`) and exported ones are allowed (seed 003).

use std::collections::BTreeSet;

use super::context::Context;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L06",
    name: "unused-variable",
    description: "A variable holding flags is assigned but never expanded, so its flags never reach a command.",
    check,
};

fn flags_name(name: &str) -> bool {
    let Some((head, tail)) = name.rsplit_once('_') else {
        return false;
    };
    !head.is_empty()
        && head
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && matches!(tail, "ARGS" | "FLAGS" | "OPTS" | "CONFIG" | "CMD")
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let data = &ctx.input.data;
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        let mut seen = BTreeSet::new();
        for a in s.facts.unused_assignments() {
            let watched = data.watched_variables.iter().any(|w| w == &a.name);
            if (!flags_name(&a.name) && !watched) || data.is_lib_read(&a.name) || a.local {
                continue;
            }
            if !seen.insert(a.name.clone()) {
                continue;
            }
            out.push(
                Finding::new(
                    "L06",
                    Severity::Warning,
                    &s.facts.path,
                    a.line,
                    format!("`{}` is assigned here but never expanded, so its value never reaches a command", a.name),
                )
                .fix(format!("expand `${}` where it belongs (e.g. on the server command), or delete the assignment", a.name)),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn names() {
        assert!(super::flags_name("PREFIX_CACHE_ARGS"));
        assert!(super::flags_name("SPECULATIVE_CONFIG"));
        assert!(!super::flags_name("ARGS"));
        assert!(!super::flags_name("MODEL"));
    }
}
