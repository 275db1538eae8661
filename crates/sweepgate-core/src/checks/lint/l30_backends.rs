//! L30: a backend value unknown to the pinned engine (attention, MLA
//! prefill, MoE and all-to-all backends). Only an option table generated
//! from the pinned released version's own source (`lint-data/
//! engine-tables.toml`, `cargo xtask engine-tables`) can make it an error,
//! and only then may the finding say the server fails at startup
//! (docs/contracts.md §7, seed 000: `TOKENSPEED_MLA` on vLLM v0.21.0 is
//! known). A release without a generated table is judged on the
//! hand-written lists of `lint-data/engines.toml` (warning at most);
//! nightly, dev, custom, vendor and digest-only images get info at most.

use std::collections::BTreeMap;

use super::context::Context;
use super::data::{EngineData, LintData};
use super::image::{Release, release_of};
use super::l10_abbreviated_flags::engine_data;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L30",
    name: "unknown-backend",
    description: "Attention, MoE and all-to-all backends must be values the pinned engine version knows (an error only against the release's generated option table).",
    check,
};

fn norm_key(key: &str) -> String {
    match key.split_once('.') {
        Some((h, t)) => format!("{}.{t}", h.replace('_', "-")),
        None => key.replace('_', "-"),
    }
}

struct Use {
    file: String,
    line: usize,
    flag: String,
    kind: String,
    value: String,
}

/// Every value sweepgate knows for a kind: all generated tables of the
/// engine and every hand-written list.
fn known_anywhere(lint: &LintData, data: &EngineData, engine: &str, kind: &str) -> Vec<String> {
    let mut out: Vec<String> = data.known(kind, None).unwrap_or_default();
    for t in lint.engine_tables.iter().filter(|t| t.engine == engine) {
        if let Some(k) = t.kinds.get(kind) {
            out.extend(k.values.iter().cloned());
        }
    }
    out
}

fn has(list: &[String], v: &str) -> bool {
    list.iter().any(|k| k.eq_ignore_ascii_case(v))
}

fn judge(
    lint: &LintData,
    data: &EngineData,
    engine: &str,
    image: Option<&str>,
    uses: Vec<Use>,
    out: &mut Vec<Finding>,
) {
    let release = image.map_or(Release::Unreleased("no image"), |i| release_of(engine, i));
    // One finding per (file, value): a value given to several flags of one
    // command is one mistake.
    let mut grouped: BTreeMap<(String, String), Vec<Use>> = BTreeMap::new();
    for u in uses {
        if u.value.contains('$') || u.value.is_empty() {
            continue;
        }
        grouped
            .entry((u.file.clone(), u.value.to_ascii_lowercase()))
            .or_default()
            .push(u);
    }
    for ((file, _), us) in grouped {
        let Some(first) = us.iter().min_by_key(|u| u.line) else {
            continue;
        };
        let flags: Vec<String> = us
            .iter()
            .map(|u| format!("`{}` (line {})", u.flag, u.line))
            .collect();
        let anywhere = known_anywhere(lint, data, engine, &first.kind);
        let table = match &release {
            Release::Version(v) => lint
                .table(engine, v)
                .and_then(|t| t.kinds.get(&first.kind).map(|k| (v, t, k))),
            Release::Unreleased(_) => None,
        };
        let (severity, message, fix) = match (&release, table) {
            (_, Some((v, t, k))) => {
                if has(&k.values, &first.value) {
                    continue;
                }
                let mut sample: Vec<&str> = k.values.iter().map(String::as_str).take(8).collect();
                if k.values.len() > 8 {
                    sample.push("…");
                }
                (
                    Severity::Error,
                    format!(
                        "{} backend `{}` is not an option of {engine} {v} (given to {}): its own source ({}, in {}) does not list it, so the server fails at startup",
                        first.kind,
                        first.value,
                        flags.join(", "),
                        k.source,
                        t.package
                    ),
                    format!(
                        "use a {} backend {engine} {v} provides: {}",
                        first.kind,
                        sample.join(", ")
                    ),
                )
            }
            (release, None) => {
                if anywhere.is_empty() || has(&anywhere, &first.value) {
                    continue;
                }
                let given = flags.join(", ");
                match release {
                    Release::Version(v) => (
                        Severity::Warning,
                        format!(
                            "{} backend `{}` is not among the values sweepgate knows for {engine} (given to {given}); no option table was generated for {engine} {v}, so this rests on a hand-written list",
                            first.kind, first.value
                        ),
                        format!(
                            "check the value against {engine} {v}, or generate its table (`cargo xtask engine-tables {engine}=={v}`)"
                        ),
                    ),
                    Release::Unreleased(why) => (
                        Severity::Info,
                        format!(
                            "{} backend `{}` is not in any released {engine} option table sweepgate has (given to {given}); the image ({}) is {why}, so its options cannot be checked",
                            first.kind,
                            first.value,
                            image.unwrap_or("none")
                        ),
                        String::new(),
                    ),
                }
            }
        };
        let f = Finding::new("L30", severity, &file, first.line, message)
            .subject(format!("{}={}", first.flag, first.value));
        out.push(if fix.is_empty() { f } else { f.fix(fix) });
    }
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let lint = &ctx.input.data;
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        let image = ctx
            .keys_running_script(&f.path)
            .first()
            .map(|e| e.image.value.clone());
        for srv in &f.servers {
            let Some(data) = engine_data(ctx, srv.engine) else {
                continue;
            };
            let engine = format!("{:?}", srv.engine).to_ascii_lowercase();
            let mut uses = Vec::new();
            for rf in f.resolved_server_flags(srv) {
                let key = norm_key(rf.flag.key());
                if let Some(kind) = data.backend_flags.get(&key)
                    && let Some(v) = rf.flag.value_text()
                {
                    uses.push(Use {
                        file: f.path.clone(),
                        line: rf.flag.line,
                        flag: rf.flag.name.clone(),
                        kind: kind.clone(),
                        value: v.trim().to_string(),
                    });
                }
            }
            for v in f.env.iter().chain(srv.prefix_env.iter()) {
                if let (Some(kind), Some(w)) = (data.backend_env.get(&v.name), &v.value) {
                    uses.push(Use {
                        file: f.path.clone(),
                        line: v.line,
                        flag: v.name.clone(),
                        kind: kind.clone(),
                        value: w.text.trim().to_string(),
                    });
                }
            }
            judge(lint, data, &engine, image.as_deref(), uses, &mut out);
        }
    }
    for r in ctx.recipes_in_scope() {
        let Some(engine) = r.engine.as_ref().map(|e| {
            let e = e.value.to_ascii_lowercase();
            // `dynamo-sglang`, `sglang` → the engine's package name.
            ["sglang", "vllm"]
                .into_iter()
                .find(|n| e.contains(n))
                .map_or(e.clone(), str::to_owned)
        }) else {
            continue;
        };
        let Some(data) = ctx.input.data.engine(&engine) else {
            continue;
        };
        let image = r
            .container
            .as_ref()
            .filter(|c| c.value.contains('/'))
            .map(|c| c.value.clone())
            .or_else(|| {
                ctx.keys_running_recipe(&r.path)
                    .first()
                    .map(|e| e.image.value.clone())
            });
        let mut uses = Vec::new();
        for role in &r.roles {
            for a in &role.args {
                if let Some(kind) = data.backend_flags.get(&norm_key(&a.key)) {
                    uses.push(Use {
                        file: r.path.clone(),
                        line: a.line,
                        flag: a.key.clone(),
                        kind: kind.clone(),
                        value: a.text().trim().to_string(),
                    });
                }
            }
            for e in &role.env {
                if let Some(kind) = data.backend_env.get(&e.key) {
                    uses.push(Use {
                        file: r.path.clone(),
                        line: e.line,
                        flag: e.key.clone(),
                        kind: kind.clone(),
                        value: e.text().trim().to_string(),
                    });
                }
            }
        }
        judge(lint, data, &engine, image.as_deref(), uses, &mut out);
    }
    out
}
