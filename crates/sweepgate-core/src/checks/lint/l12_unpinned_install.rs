//! L12 (E / W): no unpinned pip install (docs/rules.md §3 L12; seed 000).
//! Every requirement is `name==ver`, `git+…@<40-hex>` or an archive URL with
//! a commit. Error when the install runs before the server starts and the
//! package is in the serving stack (or the server command names it);
//! otherwise a warning.

use super::context::Context;
use super::{Finding, Rule, Severity};
use crate::recipe::script::{Arm, RequirementKind, ScriptFacts};

pub(crate) const RULE: Rule = Rule {
    id: "L12",
    name: "unpinned-install",
    description: "pip installs must pin every requirement (==version or a commit).",
    check,
};

fn norm(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

fn hex40(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn checked_out_commit_before(f: &ScriptFacts, line: usize) -> bool {
    f.commands.iter().any(|c| {
        c.line < line
            && c.name == "git"
            && c.args.first().is_some_and(|a| a.text == "checkout")
            && c.args.iter().skip(1).any(|a| hex40(&a.text))
    })
}

/// An `exit` earlier in the same arm (not behind `&&`/`||`, which are arms
/// of their own) ends the script before `line` runs: `61e57fb` (#1571)
/// keeps a disabled `lmcache-mp` arm whose install follows `exit 1`.
fn unreachable(f: &ScriptFacts, line: usize, branch: &[Arm]) -> bool {
    f.commands
        .iter()
        .any(|c| c.name == "exit" && c.line < line && c.branch == branch)
}

fn server_names(f: &ScriptFacts, pkg: &str) -> bool {
    let n = norm(pkg);
    f.servers.iter().any(|s| {
        f.resolved_server_flags(s)
            .iter()
            .any(|rf| rf.flag.value_text().is_some_and(|v| norm(v) == n))
    })
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let data = &ctx.input.data;
    let mut out = Vec::new();
    for s in ctx.scripts_in_scope() {
        let f = &s.facts;
        let first_server = f.first_server_line();
        for inst in &f.installs {
            if unreachable(f, inst.line, &inst.branch) {
                continue;
            }
            let before_server = first_server.is_some_and(|l| inst.line < l);
            for req in &inst.requirements {
                let unpinned = match req.kind {
                    RequirementKind::Unpinned => true,
                    RequirementKind::Editable => !checked_out_commit_before(f, inst.line),
                    RequirementKind::RequirementsFile => {
                        // Pinned only if the file is (and it is in the repository).
                        let path = req.spec.trim_start_matches("-r").trim();
                        match ctx.input.head_text(path) {
                            Some(t) => t.lines().map(str::trim).any(|l| {
                                !l.is_empty()
                                    && !l.starts_with('#')
                                    && !l.starts_with('-')
                                    && !l.contains("==")
                                    && !l.contains('@')
                            }),
                            None => true,
                        }
                    }
                    _ => false,
                };
                if !unpinned {
                    continue;
                }
                let name = req.name.clone().unwrap_or_else(|| req.spec.clone());
                let serving = data.serving_packages.iter().any(|p| norm(p) == norm(&name))
                    || server_names(f, &name);
                let sev = if before_server && serving {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                let why = if sev == Severity::Error {
                    "before the server starts, into the serving process, so every run may serve with a different version"
                } else {
                    "so every run may get a different version"
                };
                let fix = match req.kind {
                    RequirementKind::Editable => {
                        "`git checkout <40-hex commit>` before the editable install".to_string()
                    }
                    RequirementKind::RequirementsFile => {
                        format!("pin every line of `{}` with ==", req.spec)
                    }
                    _ => format!("pin it: `{name}==<version>` (or `git+…@<commit>`)"),
                };
                out.push(
                    Finding::new(
                        "L12",
                        sev,
                        &f.path,
                        req.line,
                        format!("`{}` is installed unpinned {why}", req.spec),
                    )
                    .subject(req.spec.clone())
                    .fix(fix),
                );
            }
        }
    }
    out
}
