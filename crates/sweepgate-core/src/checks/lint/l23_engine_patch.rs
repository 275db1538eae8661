//! L23 (E): engine-source patching (docs/rules.md §3 L23, Check 10
//! detection): `sed -i`/`perl -pi`/heredocs/copies into engine paths,
//! `patch`/`git apply`, `apply_*patch*.sh`, or installing an engine wheel
//! before the server, without a waiver naming the script.

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::script::{PATCH_IDENTITY, engine_patches};

pub(crate) const RULE: Rule = Rule {
    id: "L23",
    name: "engine-patch",
    description: "Benchmark scripts must not patch the inference engine (without a waiver).",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let cfg = &ctx.input.config;
    let d = &ctx.input.data;
    let mut out = Vec::new();
    let waivers: Vec<(&String, String)> = ctx
        .input
        .head_files
        .iter()
        .filter(|(p, _)| p.starts_with(&cfg.paths.waivers_dir) && p.ends_with(".md"))
        .map(|(p, b)| (p, String::from_utf8_lossy(b).into_owned()))
        .collect();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        let waived = waivers
            .iter()
            .any(|(_, t)| t.contains(&f.path) || t.contains(name));
        if waived {
            continue;
        }
        let waiver = ctx.input.pr.map_or_else(
            || format!("{}<PR>.md", cfg.paths.waivers_dir),
            |n| format!("{}{n}.md", cfg.paths.waivers_dir),
        );
        let hits = engine_patches(f, &d.engine_wheels);
        for h in hits {
            out.push(
                Finding::new("L23", Severity::Error, &f.path, h.line, format!("this script {}: the benchmark would not measure the unmodified upstream engine", h.what))
                    .subject(h.subject)
                    .identity(PATCH_IDENTITY)
                    .fix(format!("use an image that needs no patch, or add the waiver `{waiver}` naming this script")),
            );
        }
    }
    out
}
