//! L25 (E / W): a speculative-decoding benchmark uses the chat template
//! (docs/rules.md §3 L25, Check 9; seed 001: `--dsv4` implies it).

use super::context::Context;
use super::spec::{recipe_uses_spec, spec_line};
use super::{Finding, Rule, Severity};
use crate::recipe::script::{ChatUse, chat_use};

pub(crate) const RULE: Rule = Rule {
    id: "L25",
    name: "chat-template",
    description: "Speculative-decoding benchmarks send chat-formatted prompts.",
    check,
};

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        if !f.is_recipe() || spec_line(&s.text).is_none() {
            continue;
        }
        // A non-`_mtp` script with spec flags that no spec config runs is
        // L08's defect (one root cause, one finding).
        let spec_key = ctx.keys_running_script(&f.path).iter().any(|e| {
            e.search_entries()
                .any(|s| s.spec_decoding().as_str() != "none")
        });
        if !super::spec::named_mtp(&f.path) && !spec_key {
            continue;
        }
        // The detection Check 9 uses (`recipe::script::chat_use`).
        match chat_use(f, &s.text, ctx.is_agentic_script(&f.path)) {
            ChatUse::RawAgentic => out.push(
                Finding::new("L25", Severity::Error, &f.path, 1, "agentic spec-decode script drives raw completions: no build_replay_cmd and no chat endpoint")
                    .subject("chat endpoint")
                    .fix("use build_replay_cmd, or send requests to /v1/chat/completions"),
            ),
            ChatUse::RawCalls(lines) => {
                for line in lines {
                    out.push(
                        Finding::new("L25", Severity::Error, &f.path, line, "run_benchmark_serving sends raw random tokens to a speculative-decoding server; acceptance is not representative")
                            .subject("--use-chat-template")
                            .fix("add --use-chat-template (or --dsv4 for DeepSeek-V4)"),
                    );
                }
            }
            ChatUse::ChatEndpoint | ChatUse::ChatTemplate(_) | ChatUse::NoClient => {}
        }
    }
    for r in ctx.recipes_in_scope() {
        if !recipe_uses_spec(r, ctx.input.head_text(&r.path)) {
            continue;
        }
        let b = &r.benchmark;
        let custom_agentic = b
            .kind
            .as_ref()
            .is_some_and(|k| k.value == "custom" || k.value == "agentx")
            && b.command
                .as_ref()
                .is_none_or(|c| c.value.contains("agentic"));
        if custom_agentic {
            continue;
        }
        match &b.use_chat_template {
            Some(u) if u.value => {}
            Some(u) => out.push(
                Finding::new("L25", Severity::Error, &r.path, u.line, "benchmark.use_chat_template is false on a speculative-decoding recipe")
                    .subject("benchmark.use_chat_template")
                    .fix("use_chat_template: true"),
            ),
            None if b.kind.as_ref().is_some_and(|k| k.value == "sa-bench") => out.push(
                Finding::new(
                    "L25",
                    Severity::Warning,
                    &r.path,
                    b.line.unwrap_or(1),
                    "sa-bench on a speculative-decoding recipe without benchmark.use_chat_template; the srt-slurm default is not known here",
                )
                .subject("benchmark.use_chat_template")
                .fix("set benchmark.use_chat_template: true"),
            ),
            None => {}
        }
    }
    out
}
