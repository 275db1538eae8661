//! L15 (E): vLLM/SGLang family configs on established SKUs use upstream-org
//! images (docs/rules.md §3 L15, Check 6a extended mode).

use super::context::Context;
use super::image::ImageRef;
use super::{Finding, Rule, Severity};
use crate::recipe::launcher::sku_of;

pub(crate) const RULE: Rule = Rule {
    id: "L15",
    name: "upstream-image",
    description: "vLLM and SGLang configs on established SKUs use the upstream project's images.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let d = &ctx.input.data;
    let mut out = Vec::new();
    for e in ctx.direct_keys() {
        let fw = e.framework.value.as_str();
        let namespaces = if d.vllm_family.iter().any(|f| f == fw) {
            &d.upstream_vllm_namespaces
        } else if d.sglang_family.iter().any(|f| f == fw) {
            &d.upstream_sglang_namespaces
        } else {
            continue;
        };
        let sku = e
            .key
            .split('-')
            .nth(2)
            .unwrap_or_else(|| sku_of(&e.runner.value))
            .to_string();
        if !d.established_skus.contains(&sku) {
            continue;
        }
        let ns: Vec<&str> = namespaces.iter().map(String::as_str).collect();
        if ImageRef::parse(&e.image.value).is_upstream(&ns) {
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
                &e.file,
                e.image.pos.line as usize,
                format!(
                    "`{}` ({fw}) on established SKU {sku} uses the non-upstream image `{}`",
                    e.key, e.image.value
                ),
            )
            .subject(e.key.clone())
            // The key off upstream is the problem, whichever build: a bump
            // from one non-upstream build to another keeps the base's
            // (Check 6a, `765e11e` #1568).
            .identity(format!("{} non-upstream", e.key))
            .fix(format!(
                "use an upstream image ({want} on Docker Hub), or document a new-hardware exception"
            )),
        );
    }
    out
}
