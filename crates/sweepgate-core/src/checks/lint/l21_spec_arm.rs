//! L21 (W): the declared spec arm holds at every point (docs/rules.md §3
//! L21): with `spec-decoding: mtp`, no branch of the script sets K to 0 or
//! drops the speculative args for a concurrency in the key's conc list.

use std::collections::BTreeSet;

use super::context::Context;
use super::spec::conc_predicate;
use super::{Finding, Rule, Severity};
use crate::recipe::master::SearchEntry;
use crate::recipe::script::AssignedValue;

pub(crate) const RULE: Rule = Rule {
    id: "L21",
    name: "spec-arm-holds",
    description: "A config declaring spec decoding must not have script branches that turn it off for its concurrencies.",
    check,
};

fn concs(s: &SearchEntry) -> Vec<i64> {
    if let Some(l) = s.nonempty_conc_list() {
        return l.to_vec();
    }
    let (Some(a), Some(b)) = (&s.conc_start, &s.conc_end) else {
        return Vec::new();
    };
    let mut v = Vec::new();
    let mut c = a.value.max(1);
    while c <= b.value && v.len() < 64 {
        v.push(c);
        c *= 2;
    }
    if v.last() != Some(&b.value) {
        v.push(b.value);
    }
    v
}

fn k_var(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    (n.contains("SPEC") || n.contains("MTP") || n.contains("DRAFT"))
        && (n.contains("TOKENS") || n.contains("STEPS") || n.ends_with("_K"))
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for e in ctx.all_changed() {
        let mtp: Vec<&SearchEntry> = e
            .search_entries()
            .filter(|s| s.spec_decoding().as_str() == "mtp")
            .collect();
        if mtp.is_empty() {
            continue;
        }
        let conc: BTreeSet<i64> = mtp.iter().flat_map(|s| concs(s)).collect();
        for sc in ctx.scripts_of(&e.key) {
            for a in &sc.facts.assignments {
                if a.branch.is_empty() {
                    continue;
                }
                let zero_k = k_var(&a.name) && a.literal().as_deref() == Some("0");
                let dropped = a.name.contains("SPEC")
                    && a.name.ends_with("ARGS")
                    && (matches!(a.value, AssignedValue::Empty)
                        || matches!(&a.value, AssignedValue::Array(v) if v.is_empty()));
                if !zero_k && !dropped {
                    continue;
                }
                let hit: Vec<i64> = match a
                    .branch
                    .iter()
                    .rev()
                    .find_map(|arm| conc_predicate(&arm.condition))
                {
                    Some(p) => conc.iter().copied().filter(|c| p(*c)).collect(),
                    None => conc.iter().copied().collect(),
                };
                if hit.is_empty() {
                    continue;
                }
                let what = if zero_k {
                    format!("sets `{}=0`", a.name)
                } else {
                    format!("empties `{}`", a.name)
                };
                out.push(
                    Finding::new(
                        "L21",
                        Severity::Warning,
                        &sc.facts.path,
                        a.line,
                        format!(
                            "`{}` declares spec-decoding mtp, but this branch ({}) {what}, so conc {} run without speculative decoding",
                            e.key,
                            a.branch.last().map_or(String::new(), |b| b.condition.clone()),
                            hit.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                        ),
                    )
                    .fix("keep speculative decoding on for every conc of the key, or split those points into a non-spec config"),
                );
            }
        }
    }
    out
}
