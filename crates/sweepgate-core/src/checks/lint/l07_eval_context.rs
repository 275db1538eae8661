//! L07 (W): the eval context reaches the server (docs/rules.md §3 L07,
//! §1.9; seed 003): a script calling `setup_eval_context` must expand
//! `EVAL_CONTEXT_ARGS` or `EVAL_MAX_MODEL_LEN` on the server command.

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::script::{ClientKind, ScriptFacts, ServerLaunch};

pub(crate) const RULE: Rule = Rule {
    id: "L07",
    name: "eval-context",
    description: "The eval context length computed by setup_eval_context must reach the server command.",
    check,
};

const CONTEXT_VARS: [&str; 2] = ["EVAL_CONTEXT_ARGS", "EVAL_MAX_MODEL_LEN"];

/// The variable's value (any assignment) mentions an eval context variable.
fn derives(facts: &ScriptFacts, var: &str, depth: usize) -> bool {
    if CONTEXT_VARS.contains(&var) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    facts.assignments.iter().filter(|a| a.name == var).any(|a| {
        let t = a.value_text();
        CONTEXT_VARS.iter().any(|v| t.contains(v))
            || facts
                .expansions
                .iter()
                .filter(|x| x.line >= a.line && x.line <= a.end_line)
                .any(|x| x.name != var && derives(facts, &x.name, depth - 1))
    })
}

fn server_gets_context(facts: &ScriptFacts, s: &ServerLaunch) -> bool {
    if s.splats.iter().any(|sp| derives(facts, &sp.var, 3)) {
        return true;
    }
    facts.resolved_server_flags(s).iter().any(|rf| {
        rf.flag
            .value
            .as_ref()
            .is_some_and(|w| w.vars.iter().any(|v| derives(facts, v, 3)))
    }) || s.prefix_env.iter().any(|e| {
        e.value
            .as_ref()
            .is_some_and(|w| w.vars.iter().any(|v| derives(facts, v, 3)))
    })
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        let Some(setup) = f
            .clients
            .iter()
            .find(|c| c.kind == ClientKind::SetupEvalContext)
        else {
            continue;
        };
        for srv in &f.servers {
            if server_gets_context(f, srv) {
                continue;
            }
            out.push(
                Finding::new(
                    "L07",
                    Severity::Warning,
                    &f.path,
                    srv.line,
                    format!(
                        "setup_eval_context (line {}) computes the eval context length, but this server command never receives it; only the lm-eval client sees it",
                        setup.line
                    ),
                )
                .fix("append $EVAL_CONTEXT_ARGS to the server command"),
            );
        }
    }
    out
}
