//! Classifying simple commands: server launches and their engines, client
//! calls, installs, source rewrites and heredocs; the walk's end.

use tree_sitter::Node;

use super::super::args::{flaglike_vars, parse_args, whole_expansion_name};
use super::super::facts::*;
use super::super::install::install_of;
use super::{PendingClient, PendingLaunch, Walker, basename, children, end_line_of, line_of};

impl<'s> Walker<'s> {
    pub(super) fn visit_command(&mut self, n: Node, redirects: &[Node], depth: usize) {
        let cs = children(n);
        let name_node = n.child_by_field_name("name");
        let mut prefix_nodes = Vec::new();
        let mut arg_nodes = Vec::new();
        for (i, c) in cs.iter().enumerate() {
            match n.field_name_for_child(i as u32) {
                Some("argument") => arg_nodes.push(*c),
                Some("name") | Some("redirect") => {}
                _ if c.kind() == "variable_assignment" => prefix_nodes.push(*c),
                _ => {}
            }
        }
        // Uses inside the command (expansions, substitutions).
        for c in &cs {
            if c.kind() == "variable_assignment" {
                if let Some(v) = c.child_by_field_name("value") {
                    self.visit(v, depth + 1);
                }
            } else {
                self.visit(*c, depth + 1);
            }
        }
        let Some(name_node) = name_node else {
            return;
        };
        let inner_name = name_node.child(0).unwrap_or(name_node);
        let name_word = self.word(inner_name);
        let name = name_word.text.clone();
        let line = line_of(n);
        let end_line =
            end_line_of(n).max(redirects.iter().map(|r| end_line_of(*r)).max().unwrap_or(0));
        let prefix_env: Vec<EnvVar> = prefix_nodes
            .iter()
            .map(|p| EnvVar {
                name: p
                    .child_by_field_name("name")
                    .map(|x| self.text(x).to_string())
                    .unwrap_or_default(),
                value: p.child_by_field_name("value").map(|v| self.word(v)),
                kind: EnvKind::Prefix(name.clone()),
                line: line_of(*p),
                branch: self.stack.clone(),
            })
            .collect();
        self.facts.env.extend(prefix_env.iter().cloned());
        let args: Vec<Word> = arg_nodes.iter().map(|a| self.word(*a)).collect();
        self.facts.commands.push(CommandFact {
            name: name.clone(),
            args: args.clone(),
            line,
            end_line,
            branch: self.stack.clone(),
        });
        if name_word.splat.is_some()
            && let Some(var) = whole_expansion_name(&name_word.text)
        {
            self.array_runs.push((var, line));
        }
        let mut all = vec![name_word];
        all.extend(args.iter().cloned());
        self.classify(&name, &all, &args, &prefix_env, line, end_line, redirects);
        self.record_heredocs(n, &name, &args, redirects);
    }

    #[allow(clippy::too_many_arguments)]
    fn classify(
        &mut self,
        name: &str,
        all: &[Word],
        args: &[Word],
        prefix_env: &[EnvVar],
        line: usize,
        end_line: usize,
        redirects: &[Node],
    ) {
        let base = basename(name);
        let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        let branch = self.stack.clone();
        match base {
            "check_env_vars" => {
                self.facts.required.push(RequiredVars {
                    names: texts.iter().map(|t| t.to_string()).collect(),
                    line,
                    branch,
                });
                return;
            }
            "run_benchmark_serving"
            | "build_replay_cmd"
            | "run_agentic_replay_and_write_outputs"
            | "run_eval"
            | "run_lm_eval"
            | "setup_eval_context" => {
                let kind = match base {
                    "run_benchmark_serving" => ClientKind::BenchmarkServing,
                    "build_replay_cmd" => ClientKind::BuildReplay,
                    "run_agentic_replay_and_write_outputs" => ClientKind::AgenticReplay,
                    "setup_eval_context" => ClientKind::SetupEvalContext,
                    _ => ClientKind::Eval,
                };
                self.pending_clients.push(PendingClient {
                    kind,
                    name: base.to_string(),
                    args: args.to_vec(),
                    line,
                    end_line,
                    branch,
                });
                return;
            }
            "sed" => {
                let in_place = texts.iter().any(|t| {
                    *t == "--in-place"
                        || t.starts_with("--in-place=")
                        || (t.starts_with('-') && !t.starts_with("--") && t.contains('i'))
                });
                if in_place {
                    self.sed_rewrite(args, line, end_line);
                }
                return;
            }
            "perl" => {
                if texts
                    .iter()
                    .any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('i'))
                {
                    let (exprs, targets) = split_program_args(args, &["-e", "-E"]);
                    self.push_rewrite(RewriteKind::PerlInPlace, targets, exprs, line, end_line);
                }
                return;
            }
            "patch" => {
                let mut detail = String::new();
                let mut targets = Vec::new();
                let mut i = 0;
                while i < args.len() {
                    let t = args[i].text.as_str();
                    if (t == "-i" || t == "--input") && i + 1 < args.len() {
                        detail = args[i + 1].text.clone();
                        i += 2;
                        continue;
                    }
                    if (t == "-d" || t == "--directory") && i + 1 < args.len() {
                        targets.push(args[i + 1].clone());
                        i += 2;
                        continue;
                    }
                    if let Some(d) = t.strip_prefix("--directory=") {
                        targets.push(Word {
                            text: d.to_string(),
                            ..args[i].clone()
                        });
                    } else if !t.starts_with('-') {
                        targets.push(args[i].clone());
                    }
                    i += 1;
                }
                if detail.is_empty() {
                    detail = self.stdin_file(redirects).unwrap_or_default();
                }
                self.push_rewrite(RewriteKind::Patch, targets, detail, line, end_line);
                return;
            }
            "git" => {
                if let Some(sub) = texts.iter().position(|t| *t == "apply" || *t == "am") {
                    let files: Vec<Word> = args[sub + 1..]
                        .iter()
                        .filter(|a| !a.text.starts_with('-'))
                        .cloned()
                        .collect();
                    let detail = files
                        .iter()
                        .map(|f| f.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    let dir: Vec<Word> = args
                        .windows(2)
                        .filter(|w| w[0].text == "-C" || w[0].text == "--directory")
                        .map(|w| w[1].clone())
                        .collect();
                    self.push_rewrite(RewriteKind::GitApply, dir, detail, line, end_line);
                }
                return;
            }
            "cp" | "mv" | "install" | "rsync" => {
                let operands: Vec<&Word> =
                    args.iter().filter(|a| !a.text.starts_with('-')).collect();
                if operands.len() >= 2
                    && let Some(dst) = operands.last()
                {
                    let detail = operands[..operands.len() - 1]
                        .iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    self.push_rewrite(
                        RewriteKind::Copy,
                        vec![(*dst).clone()],
                        detail,
                        line,
                        end_line,
                    );
                }
                return;
            }
            _ => {}
        }
        if let Some(install) = install_of(base, args) {
            self.facts.installs.push(PackageInstall {
                tool: install.0,
                requirements: install.1,
                options: install.2,
                line,
                end_line,
                branch,
            });
            return;
        }
        if is_external_client(all) {
            self.pending_clients.push(PendingClient {
                kind: ClientKind::External,
                name: all
                    .iter()
                    .take(3)
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                args: args.to_vec(),
                line,
                end_line,
                branch,
            });
            return;
        }
        if NOT_LAUNCHERS.contains(&base) {
            return;
        }
        if let Some((engine, at, len)) = find_engine(all) {
            self.pending_launches.push(PendingLaunch {
                engine,
                entry: all[at..at + len]
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                wrapper: all[..at].iter().map(|w| w.text.clone()).collect(),
                prefix_env: prefix_env.to_vec(),
                args: all[at + len..].to_vec(),
                line,
                end_line,
                branch,
                via_var: None,
            });
        }
    }

    fn stdin_file(&self, redirects: &[Node]) -> Option<String> {
        redirects.iter().find_map(|r| {
            (r.kind() == "file_redirect" && self.text(*r).trim_start().starts_with('<'))
                .then(|| r.child_by_field_name("destination"))
                .flatten()
                .map(|d| self.word(d).text)
        })
    }

    fn sed_rewrite(&mut self, args: &[Word], line: usize, end_line: usize) {
        let mut exprs = Vec::new();
        let mut targets = Vec::new();
        let mut have_e = false;
        let mut i = 0;
        while i < args.len() {
            let t = args[i].text.as_str();
            if (t == "-e" || t == "--expression") && i + 1 < args.len() {
                exprs.push(args[i + 1].text.clone());
                have_e = true;
                i += 2;
                continue;
            }
            if (t == "-f" || t == "--file") && i + 1 < args.len() {
                exprs.push(format!("-f {}", args[i + 1].text));
                have_e = true;
                i += 2;
                continue;
            }
            if t.starts_with('-') {
                i += 1;
                continue;
            }
            if !have_e && exprs.is_empty() {
                exprs.push(t.to_string());
            } else {
                targets.push(args[i].clone());
            }
            i += 1;
        }
        self.push_rewrite(
            RewriteKind::SedInPlace,
            targets,
            exprs.join("; "),
            line,
            end_line,
        );
    }

    fn push_rewrite(
        &mut self,
        kind: RewriteKind,
        targets: Vec<Word>,
        detail: String,
        line: usize,
        end_line: usize,
    ) {
        self.facts.rewrites.push(SourceRewrite {
            kind,
            targets,
            detail,
            line,
            end_line,
            branch: self.stack.clone(),
        });
    }

    pub(super) fn record_heredocs(
        &mut self,
        cmd: Node,
        name: &str,
        args: &[Word],
        redirects: &[Node],
    ) {
        for r in redirects.iter().filter(|r| r.kind() == "heredoc_redirect") {
            let rcs = children(*r);
            let start = rcs.iter().find(|c| c.kind() == "heredoc_start");
            let body = rcs.iter().find(|c| c.kind() == "heredoc_body");
            let end = rcs.iter().find(|c| c.kind() == "heredoc_end");
            let start_text = start.map(|s| self.text(*s)).unwrap_or("");
            let quoted =
                start_text.contains('\'') || start_text.contains('"') || start_text.contains('\\');
            let delimiter = start_text
                .trim_matches(|c| c == '\'' || c == '"' || c == '\\' || c == '-')
                .to_string();
            let body_text = body.map(|b| self.text(*b).to_string()).unwrap_or_default();
            let body_line = body.map(|b| line_of(*b)).unwrap_or_else(|| line_of(*r) + 1);
            // `cat << EOF > file`: the file redirect nests inside the heredoc redirect.
            let nested: Vec<Node> = rcs
                .iter()
                .copied()
                .filter(|c| c.kind() == "file_redirect")
                .chain(
                    redirects
                        .iter()
                        .copied()
                        .filter(|c| c.kind() == "file_redirect"),
                )
                .collect();
            let target = nested.iter().find_map(|f| {
                let t = self.text(*f).trim_start();
                (t.starts_with('>') || t.starts_with("1>"))
                    .then(|| f.child_by_field_name("destination"))
                    .flatten()
                    .map(|d| self.word(d))
            });
            let doc = Heredoc {
                command: name.to_string(),
                args: args.to_vec(),
                delimiter,
                quoted,
                body: body_text.clone(),
                body_line,
                end_line: end.map(|e| line_of(*e)).unwrap_or(end_line_of(*r)),
                target: target.clone(),
                branch: self.stack.clone(),
            };
            let base = basename(name);
            let line = line_of(cmd);
            if base == "tee" {
                // tee writes its operands; a `>` redirect only takes the echo.
                let mut targets: Vec<Word> = args
                    .iter()
                    .filter(|a| !a.text.starts_with('-'))
                    .cloned()
                    .collect();
                targets.extend(target.clone().filter(|t| t.text != "/dev/null"));
                self.push_rewrite(
                    RewriteKind::HeredocWrite,
                    targets,
                    body_text.clone(),
                    line,
                    doc.end_line,
                );
            } else if let Some(t) = target.clone()
                && matches!(base, "cat" | "")
            {
                self.push_rewrite(
                    RewriteKind::HeredocWrite,
                    vec![t],
                    body_text.clone(),
                    line,
                    doc.end_line,
                );
            } else if base.starts_with("python") || matches!(base, "bash" | "sh" | "perl") {
                self.push_rewrite(
                    RewriteKind::InlineProgram,
                    Vec::new(),
                    body_text.clone(),
                    line,
                    doc.end_line,
                );
            }
            self.facts.heredocs.push(doc);
        }
    }

    pub(super) fn finish(mut self) -> ScriptFacts {
        let flaglike = flaglike_vars(&self.facts.assignments);
        for p in std::mem::take(&mut self.pending_launches) {
            let parsed = parse_args(&p.args, &flaglike);
            let invoked_at = match &p.via_var {
                Some(v) => self
                    .array_runs
                    .iter()
                    .filter(|(name, _)| name == v)
                    .map(|(_, l)| *l)
                    .collect(),
                None => Vec::new(),
            };
            self.facts.servers.push(ServerLaunch {
                engine: p.engine,
                entry: p.entry,
                wrapper: p.wrapper,
                prefix_env: p.prefix_env,
                positionals: parsed.positionals,
                flags: parsed.flags,
                splats: parsed.splats,
                line: p.line,
                end_line: p.end_line,
                branch: p.branch,
                via_var: p.via_var,
                invoked_at,
            });
        }
        for p in std::mem::take(&mut self.pending_clients) {
            let parsed = parse_args(&p.args, &flaglike);
            self.facts.clients.push(ClientCall {
                kind: p.kind,
                name: p.name,
                flags: parsed.flags,
                positionals: parsed.positionals,
                splats: parsed.splats,
                line: p.line,
                end_line: p.end_line,
                branch: p.branch,
            });
        }
        self.facts.servers.sort_by_key(|s| s.line);
        self.facts.clients.sort_by_key(|c| c.line);
        self.facts.syntax_errors.sort_unstable();
        self.facts.syntax_errors.dedup();
        self.facts
    }
}
/// Commands that print or store a command line rather than run it.
pub(super) const NOT_LAUNCHERS: [&str; 12] = [
    "echo",
    "printf",
    "cat",
    "grep",
    "tee",
    "write_command",
    "log",
    "sed",
    "awk",
    "type",
    "command",
    "which",
];

/// Commands that run another command given after their own options.
pub(super) const WRAPPERS: [&str; 14] = [
    "mpirun", "mpiexec", "srun", "numactl", "taskset", "nohup", "exec", "env", "timeout", "stdbuf",
    "sudo", "docker", "nsys", "torchrun",
];

/// Find the engine entry point in a word list: (engine, index, words used).
/// The entry point must start the list or follow a known wrapper, so a
/// string that merely mentions `vllm serve` is not a launch.
pub(super) fn find_engine(words: &[Word]) -> Option<(Engine, usize, usize)> {
    let t = |i: usize| words.get(i).map(|w| w.text.as_str()).unwrap_or("");
    let wrapped = WRAPPERS.contains(&basename(t(0)));
    for i in 0..words.len() {
        if i > 0 && !wrapped {
            break;
        }
        let b = basename(t(i));
        if b == "vllm" && t(i + 1) == "serve" {
            return Some((Engine::Vllm, i, 2));
        }
        if b == "sglang" && t(i + 1) == "serve" {
            return Some((Engine::Sglang, i, 2));
        }
        if b == "trtllm-serve" {
            let len = if t(i + 1) == "serve" { 2 } else { 1 };
            return Some((Engine::Trtllm, i, len));
        }
        if b == "srtctl" && matches!(t(i + 1), "apply" | "dry-run" | "submit") {
            return Some((Engine::SrtSlurm, i, 2));
        }
        if b.starts_with("python") {
            // `python3 [-u …] -m module`
            let mut j = i + 1;
            while j < words.len() && t(j).starts_with('-') && t(j) != "-m" {
                j += 1;
            }
            if t(j) == "-m"
                && let Some(engine) = module_engine(t(j + 1))
            {
                return Some((engine, i, j + 2 - i));
            }
        }
    }
    None
}

pub(super) fn module_engine(module: &str) -> Option<Engine> {
    if module.starts_with("vllm.entrypoints") {
        Some(Engine::Vllm)
    } else if module == "sglang.launch_server" || module.starts_with("sglang.srt.entrypoints") {
        Some(Engine::Sglang)
    } else if module.starts_with("atom.entrypoints") {
        Some(Engine::Atom)
    } else if module.starts_with("tensorrt_llm.commands.serve") {
        Some(Engine::Trtllm)
    } else if let Some(rest) = module.strip_prefix("dynamo.") {
        let backend = match rest.split('.').next().unwrap_or("") {
            "vllm" => DynamoBackend::Vllm,
            "sglang" => DynamoBackend::Sglang,
            "trtllm" => DynamoBackend::Trtllm,
            "frontend" => DynamoBackend::Frontend,
            _ => DynamoBackend::Other,
        };
        Some(Engine::Dynamo(backend))
    } else {
        None
    }
}

pub(super) fn is_external_client(all: &[Word]) -> bool {
    let t = |i: usize| all.get(i).map(|w| w.text.as_str()).unwrap_or("");
    let b = basename(t(0));
    (b == "vllm" && t(1) == "bench")
        || (b.starts_with("python")
            && (t(1) == "-m"
                && matches!(
                    t(2),
                    "sglang.bench_serving" | "sglang.bench_one_batch_server"
                )
                || t(1).ends_with("benchmark_serving.py")))
        || b == "benchmark_serving.py"
}

/// `perl -pi -e EXPR files…` / similar: (expressions, file operands).
pub(super) fn split_program_args(args: &[Word], expr_flags: &[&str]) -> (String, Vec<Word>) {
    let mut exprs = Vec::new();
    let mut files = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if expr_flags.contains(&t) && i + 1 < args.len() {
            exprs.push(args[i + 1].text.clone());
            i += 2;
            continue;
        }
        if !t.starts_with('-') {
            files.push(args[i].clone());
        }
        i += 1;
    }
    (exprs.join("; "), files)
}
