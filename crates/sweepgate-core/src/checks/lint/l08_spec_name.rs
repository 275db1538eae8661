//! L08 (E): speculative decoding matches the file name (docs/rules.md §3
//! L08, §0.5; seed 003): a script without `_mtp` has no spec flags, an
//! `_mtp` script has them, and a key's spec-decoding agrees with its script.

use super::context::Context;
use super::spec::{named_mtp, spec_line};
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L08",
    name: "spec-matches-name",
    description: "A script uses speculative decoding exactly when its name ends in _mtp.",
    check,
};

/// Whether a config's spec arm picks this script by name (docs/rules.md
/// §1.8: `SPEC` is `_mtp` only on the single-node routes). SPEED-Bench
/// scripts (`speedbench/`, run through `BENCH_SCRIPT_OVERRIDE`, always
/// speculative) and multi-node helpers (`multi_node/amd_utils/server_atom.sh`,
/// spec chosen by environment) are never picked by `_mtp`: 13 of 14
/// sampled L08 errors were such scripts (`docs/precision.md`).
fn routed_by_name(path: &str, benchmarks: &str) -> bool {
    let root = benchmarks.trim_end_matches('/');
    let Some(rel) = path.strip_prefix(root).and_then(|r| r.strip_prefix('/')) else {
        return false;
    };
    let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
    matches!(
        dir,
        "" | "single_node" | "single_node/fixed_seq_len" | "single_node/agentic"
    )
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let benchmarks = ctx.input.config.paths.benchmarks.as_str();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        if !f.is_recipe() || !routed_by_name(&f.path, benchmarks) {
            continue;
        }
        let file = f.path.rsplit('/').next().unwrap_or(&f.path);
        match (named_mtp(&f.path), spec_line(&s.text)) {
            (false, Some((line, marker))) => out.push(
                Finding::new(
                    "L08",
                    Severity::Error,
                    &f.path,
                    line,
                    format!(
                        "`{file}` has no `_mtp` in its name, so configs without spec decoding run it, but it enables speculative decoding (`{marker}`)"
                    ),
                )
                .subject("spec-decoding flags")
                .fix("remove the speculative-decoding flags from this script (they belong in the `_mtp` script)"),
            ),
            (true, None) => out.push(
                Finding::new(
                    "L08",
                    Severity::Error,
                    &f.path,
                    1,
                    format!("`{file}` is named `_mtp` but passes no speculative-decoding flags"),
                )
                .subject("spec-decoding flags")
                .fix("add the speculative-decoding flags, or drop `_mtp` from the name"),
            ),
            _ => {}
        }
    }
    out
}
