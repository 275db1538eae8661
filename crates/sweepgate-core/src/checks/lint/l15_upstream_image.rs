//! L15 (E): the lint side of Check 6 (docs/rules.md §3 L15, §2 Check 6):
//! (a) vLLM/SGLang family configs on established SKUs use upstream-org
//! images; (b) a key of another framework lands only after a vLLM/SGLang
//! key of the same model and SKU (`checks::engine_first`, shared with the
//! check). Entries of an older schema that fail validation are judged on
//! the fields they have (`UnvalidatedEntry`), so an era's layout does not
//! hide the rule.

use super::context::Context;
use super::image::ImageRef;
use super::{Finding, Rule, Severity};
use crate::checks::engine_first::{self, Landing, Order};

pub(crate) const RULE: Rule = Rule {
    id: "L15",
    name: "upstream-image",
    description: "vLLM and SGLang configs on established SKUs use the upstream project's images; other frameworks land after them.",
    check,
};

/// What L15 reads of a changed key, validated or not.
struct Keyed<'a> {
    file: &'a str,
    key: &'a str,
    line: usize,
    framework: &'a str,
    image: &'a str,
    image_line: usize,
    runner: &'a str,
}

fn keyed<'a>(ctx: &'a Context<'_>) -> Vec<Keyed<'a>> {
    let mut out: Vec<Keyed> = ctx
        .direct_keys()
        .into_iter()
        .map(|e| Keyed {
            file: &e.file,
            key: &e.key,
            line: e.pos.line as usize,
            framework: &e.framework.value,
            image: &e.image.value,
            image_line: e.image.pos.line as usize,
            runner: &e.runner.value,
        })
        .collect();
    for u in ctx.direct_unvalidated() {
        // Without a framework neither part can be judged (the entry's L00
        // finding says why).
        let Some(fw) = &u.framework else { continue };
        out.push(Keyed {
            file: &u.file,
            key: &u.key,
            line: u.pos.line as usize,
            framework: &fw.value,
            image: u.image.as_ref().map_or("", |i| i.value.as_str()),
            image_line: u
                .image
                .as_ref()
                .map_or(u.pos.line as usize, |i| i.pos.line as usize),
            runner: u.runner.as_ref().map_or("", |r| r.value.as_str()),
        });
    }
    out
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let d = &ctx.input.data;
    let mut out = Vec::new();
    // Every entry at head and before the PR, as the ordering rule reads
    // them (entry content, validated or not).
    let head: Vec<Landing> = ctx
        .head_entries
        .iter()
        .map(|(k, v)| Landing::of_json(k, v))
        .collect();
    let before: Vec<Landing> = ctx
        .base_entries
        .iter()
        .map(|(k, v)| Landing::of_json(k, v))
        .collect();
    for e in keyed(ctx) {
        let fw = e.framework;
        let landing = ctx
            .head_entries
            .get(e.key)
            .map(|j| Landing::of_json(e.key, j));
        if let Some(l) = landing
            && engine_first::order(&l, &head, &before) == Order::First
        {
            out.push(
                Finding::new(
                    "L15",
                    Severity::Error,
                    e.file,
                    e.line,
                    format!(
                        "`{}` ({fw}) lands before any vLLM/SGLang `{}` entry on {}",
                        e.key, l.prefix, l.sku
                    ),
                )
                .subject(e.key.to_string())
                .identity(format!("{} lands first", e.key))
                .fix("land a vLLM or SGLang config of the model on this SKU first, or document an exception"),
            );
        }
        let namespaces = if d.vllm_family.iter().any(|f| f == fw) {
            &d.upstream_vllm_namespaces
        } else if d.sglang_family.iter().any(|f| f == fw) {
            &d.upstream_sglang_namespaces
        } else {
            continue;
        };
        let sku = engine_first::key_sku(e.key, e.runner);
        if !d.established_skus.contains(&sku) || e.image.is_empty() {
            continue;
        }
        let ns: Vec<&str> = namespaces.iter().map(String::as_str).collect();
        if ImageRef::parse(e.image).is_upstream(&ns) {
            continue;
        }
        let want = namespaces
            .iter()
            .map(|n| format!("{n}/*"))
            .collect::<Vec<_>>()
            .join(" or ");
        out.push(
            Finding::new(
                "L15",
                Severity::Error,
                e.file,
                e.image_line,
                format!(
                    "`{}` ({fw}) on established SKU {sku} uses the non-upstream image `{}`",
                    e.key, e.image
                ),
            )
            .subject(e.key.to_string())
            // The key off upstream is the problem, whichever build: a bump
            // from one non-upstream build to another keeps the base's
            // (Check 6a, `765e11e` #1568).
            .identity(format!("{} non-upstream", e.key))
            // A sweep the base's workflows ran with this image moved into
            // the master config (`c028a3a`, #145; `b1107b8`, #251).
            .known_at_base(ctx.input.base_legacy_images.contains(e.image))
            .fix(format!(
                "use an upstream image ({want} on Docker Hub), or document a new-hardware exception"
            )),
        );
    }
    out
}
