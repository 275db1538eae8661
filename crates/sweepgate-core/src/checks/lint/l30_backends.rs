//! L30 (E): a backend value unknown to the pinned engine (attention, MoE,
//! all-reduce backends; the known values are data per engine and version,
//! `lint-data/engines.toml`; seed 000: `TOKENSPEED_MLA` on vLLM v0.21.0).

use std::collections::BTreeMap;

use super::context::Context;
use super::data::{EngineData, parse_version};
use super::image::ImageRef;
use super::l10_abbreviated_flags::engine_data;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L30",
    name: "unknown-backend",
    description: "Attention, MoE and all-reduce backends must be values the pinned engine version knows.",
    check,
};

/// Engine version from an image tag (`vllm/vllm-openai:v0.21.0` → 0.21.0).
fn image_version(image: &str) -> Option<(u64, u64, u64)> {
    let i = ImageRef::parse(image);
    let tag = i.tag?;
    // `sglang-0.5.9-rocm…` / `v0.5.16-cu130`
    tag.split(['-', '_']).find_map(|part| {
        parse_version(part).filter(|_| {
            part.trim_start_matches('v')
                .starts_with(|c: char| c.is_ascii_digit())
        })
    })
}

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

fn judge(
    data: &EngineData,
    engine: &str,
    image: Option<&str>,
    uses: Vec<Use>,
    out: &mut Vec<Finding>,
) {
    let version = image.and_then(image_version);
    // One finding per (file, value): a value given to several flags of one
    // command is one mistake.
    let mut grouped: BTreeMap<(String, String), Vec<Use>> = BTreeMap::new();
    for u in uses {
        let Some(known) = data.known(&u.kind, version) else {
            continue;
        };
        if u.value.contains('$')
            || u.value.is_empty()
            || known.iter().any(|k| k.eq_ignore_ascii_case(&u.value))
        {
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
        let ver = version.map_or_else(
            || "any known version".to_string(),
            |(a, b, c)| format!("{a}.{b}.{c}"),
        );
        let known = data.known(&first.kind, version).unwrap_or_default();
        let mut sample: Vec<&str> = known.iter().map(String::as_str).take(8).collect();
        if known.len() > 8 {
            sample.push("…");
        }
        out.push(
            Finding::new(
                "L30",
                Severity::Error,
                &file,
                first.line,
                format!(
                    "{} backend `{}` is not known to {engine} {ver} (given to {}); the server fails at startup",
                    first.kind,
                    first.value,
                    flags.join(", ")
                ),
            )
            .fix(format!("use a {} backend {engine} {ver} provides: {}", first.kind, sample.join(", "))),
        );
    }
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
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
            judge(data, &engine, image.as_deref(), uses, &mut out);
        }
    }
    for r in ctx.recipes_in_scope() {
        let Some(engine) = r.engine.as_ref().map(|e| e.value.clone()) else {
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
        judge(data, &engine, image.as_deref(), uses, &mut out);
    }
    out
}
