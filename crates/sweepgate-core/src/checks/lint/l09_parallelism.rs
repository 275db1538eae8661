//! L09 (E / W): no hard-coded parallelism (docs/rules.md §3 L09; seed 003).
//! With `TP` required by `check_env_vars`, no literal `--tp`, `--tp-size` or
//! `--tensor-parallel-size` (a literal 1 only beside `--data-parallel-size
//! "$TP"`); `--enable-expert-parallel` sits in an `EP_SIZE`/`DP_ATTENTION`
//! conditional (W).

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::script::Arm;

pub(crate) const RULE: Rule = Rule {
    id: "L09",
    name: "hard-coded-parallelism",
    description: "Parallelism must come from the TP/EP_SIZE/DP_ATTENTION variables, not literals.",
    check,
};

const TP_FLAGS: [&str; 4] = [
    "--tp",
    "--tp-size",
    "--tensor-parallel-size",
    "--tensor_parallel_size",
];
const DP_FLAGS: [&str; 3] = ["--data-parallel-size", "--dp-size", "--dp"];

fn conditional_on_ep(branch: &[Arm]) -> bool {
    branch.iter().any(|a| {
        let c = format!("{} {}", a.condition, a.preceding.join(" "));
        c.contains("EP_SIZE") || c.contains("DP_ATTENTION")
    })
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        let tp_required = f.is_required("TP");
        for srv in &f.servers {
            let flags = f.resolved_server_flags(srv);
            let dp_from_tp = flags.iter().any(|rf| {
                DP_FLAGS.contains(&rf.flag.name.as_str())
                    && rf
                        .flag
                        .value
                        .as_ref()
                        .is_some_and(|w| w.vars.iter().any(|v| v == "TP"))
            });
            for rf in &flags {
                let fl = &rf.flag;
                if tp_required && TP_FLAGS.contains(&fl.name.as_str()) {
                    let Some(w) = &fl.value else { continue };
                    if !(w.is_literal() && w.is_number()) {
                        continue;
                    }
                    if w.text == "1" && dp_from_tp {
                        continue;
                    }
                    out.push(
                        Finding::new(
                            "L09",
                            Severity::Error,
                            &f.path,
                            fl.line,
                            format!(
                                "`{} {}` hard-codes tensor parallelism although the script requires `TP` (check_env_vars); a config with another TP would run with {}",
                                fl.name, w.text, w.text
                            ),
                        )
                        .subject(fl.name.clone())
                        .fix(format!("{} \"$TP\"", fl.name)),
                    );
                }
                if fl.name == "--enable-expert-parallel" {
                    let branch = if rf.via.is_empty() {
                        &srv.branch
                    } else {
                        &rf.branch
                    };
                    if !conditional_on_ep(branch) && !conditional_on_ep(&srv.branch) {
                        out.push(
                            Finding::new(
                                "L09",
                                Severity::Warning,
                                &f.path,
                                fl.line,
                                "`--enable-expert-parallel` is passed unconditionally; configs with ep 1 would still run expert parallel",
                            )
                            .subject("--enable-expert-parallel")
                            .fix("pass it only inside an `EP_SIZE` (or `DP_ATTENTION`) conditional"),
                        );
                    }
                }
            }
        }
    }
    out
}
