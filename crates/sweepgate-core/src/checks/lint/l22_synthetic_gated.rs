//! L22 (E): synthetic-acceptance knobs are gated by `EVAL_ONLY` (verifier-
//! checks §3 L22, §1.4): every SIMULATE / synthetic / TLLM-force / ATOM
//! acceptance setting sits in an `EVAL_ONLY != true` branch (or the `else`
//! of `EVAL_ONLY == true`), since it would drive eval scores to about 0.

use super::context::Context;
use super::spec::gated_by_not_eval;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L22",
    name: "synthetic-gated",
    description: "Synthetic-acceptance knobs must be set only when EVAL_ONLY is not true.",
    check,
};

const ENV_KNOBS: [&str; 4] = [
    "SGLANG_SIMULATE_ACC_LEN",
    "SGLANG_SIMULATE_ACC_METHOD",
    "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
    "SYNTHETIC_ACCEPTANCE",
];
const FLAG_KNOBS: [&str; 2] = [
    "--spec-decode-acceptance-length",
    "--spec-decode-acceptance-rate",
];

fn finding(path: &str, line: usize, what: &str) -> Finding {
    Finding::new(
        "L22",
        Severity::Error,
        path,
        line,
        format!("{what} is set even when EVAL_ONLY=true; simulated acceptance would drive the eval score to about 0"),
    )
    .subject(what.to_string())
    .fix("set it only inside `if [ \"${EVAL_ONLY}\" != \"true\" ]; then … fi`")
}

/// Routines of `benchmark_lib.sh` that run an eval (`run_benchmark_serving`
/// runs it instead of the benchmark under `EVAL_ONLY=true`).
const EVAL_ROUTINES: [&str; 3] = ["run_eval", "run_lm_eval", "run_benchmark_serving"];

/// The script can run an eval: it reads `EVAL_ONLY` or `RUN_EVAL`, or calls
/// a routine that runs one. An agentic script of `6bcb03c` (#2158) did
/// neither (it ends in `run_agentic_replay_and_write_outputs`), and the
/// generator kept agentic entries out of evals until `f83d943` (#1947):
/// its synthetic knob could never meet an eval.
fn can_run_eval(f: &crate::recipe::script::ScriptFacts, text: &str) -> bool {
    let code = crate::checks::strip_shell_comments(text);
    code.contains("EVAL_ONLY")
        || code.contains("RUN_EVAL")
        || f.commands
            .iter()
            .any(|c| EVAL_ROUTINES.contains(&c.name.as_str()))
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        if !can_run_eval(f, &s.text) {
            continue;
        }
        for v in &f.env {
            if ENV_KNOBS.contains(&v.name.as_str()) && !gated_by_not_eval(&v.branch) {
                out.push(finding(&f.path, v.line, &format!("`{}`", v.name)));
            }
        }
        for a in &f.assignments {
            let t = a.value_text();
            let synthetic = t.contains("synthetic_acceptance_length")
                || (ENV_KNOBS.contains(&a.name.as_str()) && !a.exported);
            if synthetic && !gated_by_not_eval(&a.branch) && !f.env.iter().any(|v| v.line == a.line)
            {
                out.push(finding(
                    &f.path,
                    a.line,
                    &format!("`{}` (synthetic acceptance)", a.name),
                ));
            }
        }
        for srv in &f.servers {
            for rf in f.resolved_server_flags(srv) {
                let inline = rf.via.is_empty();
                let branch = if inline { &srv.branch } else { &rf.branch };
                let knob = FLAG_KNOBS.contains(&rf.flag.name.as_str())
                    || (inline
                        && rf
                            .flag
                            .value_text()
                            .is_some_and(|v| v.contains("synthetic_acceptance_length")));
                if knob && !gated_by_not_eval(branch) && !gated_by_not_eval(&srv.branch) {
                    out.push(finding(
                        &f.path,
                        rf.flag.line,
                        &format!("`{}`", rf.flag.name),
                    ));
                }
            }
        }
    }
    out.dedup();
    out
}
