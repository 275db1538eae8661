//! L26 (E): `run_benchmark_serving` only gets the flags it accepts
//! (docs/rules.md §3 L26, §1.9): any other prints "Unknown parameter"
//! and the run returns 1.

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::script::ClientKind;

pub(crate) const RULE: Rule = Rule {
    id: "L26",
    name: "benchmark-flags",
    description: "run_benchmark_serving accepts only the flags benchmark_lib.sh knows.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let accepted = &ctx.input.data.benchmark_serving_flags;
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        for c in f
            .clients
            .iter()
            .filter(|c| c.kind == ClientKind::BenchmarkServing)
        {
            for rf in f.resolved_client_flags(c) {
                let n = &rf.flag.name;
                if n.starts_with("--") && !accepted.iter().any(|a| a == n) {
                    let close = accepted
                        .iter()
                        .find(|a| a.starts_with(n.as_str()) || n.starts_with(a.as_str()));
                    let mut fnd = Finding::new(
                        "L26",
                        Severity::Error,
                        &f.path,
                        rf.flag.line,
                        format!(
                            "run_benchmark_serving does not accept `{n}`: it prints \"Unknown parameter\" and the run fails"
                        ),
                    )
                    .subject(n.clone());
                    fnd = match close {
                        Some(a) => fnd.fix(format!("use `{a}`")),
                        None => fnd.fix(format!("remove `{n}`")),
                    };
                    out.push(fnd);
                }
            }
        }
    }
    out
}
