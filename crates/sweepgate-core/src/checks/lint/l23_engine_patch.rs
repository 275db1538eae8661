//! L23 (E): engine-source patching (docs/rules.md §3 L23, Check 10
//! detection): `sed -i`/`perl -pi`/heredocs/copies into engine paths,
//! `patch`/`git apply`, `apply_*patch*.sh`, or installing an engine wheel
//! before the server, without a waiver naming the script.

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::script::{RewriteKind, ScriptFacts, SourceRewrite, is_engine_path};

pub(crate) const RULE: Rule = Rule {
    id: "L23",
    name: "engine-patch",
    description: "Benchmark scripts must not patch the inference engine (without a waiver).",
    check,
};

/// A target variable assigned from an engine path or a module's `__file__`.
fn target_is_engine(f: &ScriptFacts, r: &SourceRewrite) -> bool {
    r.touches_engine_path()
        || r.targets.iter().any(|t| {
            t.vars.iter().any(|v| {
                f.assignments.iter().filter(|a| &a.name == v).any(|a| {
                    let t = a.value_text();
                    is_engine_path(&t) || t.contains("__file__") || t.contains("find_spec")
                })
            })
        })
}

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
        let mut hits: Vec<(usize, String)> = Vec::new();
        for r in &f.rewrites {
            let engine = match r.kind {
                RewriteKind::Patch | RewriteKind::GitApply => true,
                _ => target_is_engine(f, r),
            };
            if engine {
                let target = r
                    .targets
                    .first()
                    .map_or_else(|| r.detail.clone(), |t| t.text.clone());
                hits.push((r.line, format!("patches `{target}`")));
            }
        }
        for c in &f.commands {
            if matches!(c.name.as_str(), "bash" | "sh" | "source" | ".")
                && let Some(a) = c.args.first()
            {
                let base = a.text.rsplit('/').next().unwrap_or(&a.text);
                if base.starts_with("apply_") && base.contains("patch") {
                    hits.push((c.line, format!("runs the patch script `{}`", a.text)));
                }
            }
        }
        let first_server = f.first_server_line();
        for inst in &f.installs {
            if first_server.is_some_and(|l| inst.line < l) {
                for r in &inst.requirements {
                    if let Some(n) = &r.name
                        && d.engine_wheels.iter().any(|w| w.eq_ignore_ascii_case(n))
                    {
                        hits.push((
                            r.line,
                            format!(
                                "installs the engine wheel `{}` before the server starts",
                                r.spec
                            ),
                        ));
                    }
                }
            }
        }
        for (line, what) in hits {
            out.push(
                Finding::new("L23", Severity::Error, &f.path, line, format!("this script {what}: the benchmark would not measure the unmodified upstream engine"))
                    .fix(format!("use an image that needs no patch, or add the waiver `{waiver}` naming this script")),
            );
        }
    }
    out
}
