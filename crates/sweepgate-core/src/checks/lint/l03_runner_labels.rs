//! L03 (W): runner labels and launchers are consistent (docs/rules.md §3
//! L03): a config's `runner:` is a label of `configs/runners.yaml` (or a
//! known direct label), and every node prefix has `runners/launch_<prefix>.sh`.

use std::collections::BTreeSet;

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::launcher::launcher_of_runner;

pub(crate) const RULE: Rule = Rule {
    id: "L03",
    name: "runner-labels",
    description: "A config's runner label must be declared in runners.yaml, and every node prefix needs a launcher script.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(runners) = &ctx.runners else {
        return out;
    };
    let data = &ctx.input.data;
    let runners_path = ctx.input.config.paths.runners.clone();
    let mut nodes: BTreeSet<(String, usize)> = BTreeSet::new();
    for e in ctx.direct_keys() {
        let label = &e.runner.value;
        match runners.label(label) {
            Some(l) => {
                for n in &l.runners {
                    nodes.insert((n.value.clone(), n.pos.line as usize));
                }
            }
            None if data.direct_labels.iter().any(|d| d == label) => {}
            None => out.push(
                Finding::new(
                    "L03",
                    Severity::Warning,
                    &e.file,
                    e.runner.pos.line as usize,
                    format!(
                        "runner label `{label}` of `{}` is not declared in {runners_path}; it goes to `runs-on` unchanged",
                        e.key
                    ),
                )
                .fix(format!("declare `{label}` under `labels:` in {runners_path}, or use a declared label")),
            ),
        }
    }
    // Nodes the PR adds to runners.yaml.
    let before: BTreeSet<String> = ctx
        .base_runners
        .as_ref()
        .map(|b| {
            b.labels
                .iter()
                .flat_map(|l| l.runners.iter().map(|n| n.value.clone()))
                .collect()
        })
        .unwrap_or_default();
    if ctx.input.is_changed(&runners_path) {
        for l in &runners.labels {
            for n in &l.runners {
                if !before.contains(&n.value) {
                    nodes.insert((n.value.clone(), n.pos.line as usize));
                }
            }
        }
    }
    let mut reported = BTreeSet::new();
    for (node, line) in nodes {
        let prefix = launcher_of_runner(&node).to_string();
        let path = ctx
            .launchers
            .layout
            .launcher_pattern
            .replace("{name}", &prefix);
        if !ctx.input.head_tree.contains(&path) && reported.insert(prefix.clone()) {
            out.push(
                Finding::new(
                    "L03",
                    Severity::Warning,
                    &runners_path,
                    line,
                    format!("runner `{node}` has no launcher: `{path}` does not exist, so jobs on it cannot start"),
                )
                .fix(format!("add `{path}` or remove the `{prefix}_*` nodes")),
            );
        }
    }
    out
}
