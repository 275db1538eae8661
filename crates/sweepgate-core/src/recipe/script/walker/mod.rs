//! The walk over the bash syntax tree: control flow (if/case/loops,
//! functions, lists), words and expansions, declarations and assignments.
//! Commands are classified in `commands`.

use tree_sitter::Node;

use super::MAX_DEPTH;
use super::args::split_scalar;
use super::facts::*;
use super::quote::{unescape_double, unescape_word};
use commands::find_engine;

mod commands;

/// The facts of the script whose syntax tree is `root`.
pub(super) fn walk(src: &str, path: &str, root: Node) -> ScriptFacts {
    let mut w = Walker {
        src,
        facts: ScriptFacts {
            path: path.to_string(),
            ..ScriptFacts::default()
        },
        stack: Vec::new(),
        next_construct: 0,
        pending_launches: Vec::new(),
        pending_clients: Vec::new(),
        array_runs: Vec::new(),
    };
    w.visit(root, 0);
    w.finish()
}

struct PendingLaunch {
    engine: Engine,
    entry: String,
    wrapper: Vec<String>,
    prefix_env: Vec<EnvVar>,
    args: Vec<Word>,
    line: usize,
    end_line: usize,
    branch: Branch,
    via_var: Option<String>,
}

struct PendingClient {
    kind: ClientKind,
    name: String,
    args: Vec<Word>,
    line: usize,
    end_line: usize,
    branch: Branch,
}

struct Walker<'s> {
    src: &'s str,
    facts: ScriptFacts,
    stack: Vec<Arm>,
    next_construct: usize,
    pending_launches: Vec<PendingLaunch>,
    pending_clients: Vec<PendingClient>,
    /// (variable, line) of `"${NAME[@]}"` / `$NAME` used as a command name.
    array_runs: Vec<(String, usize)>,
}

pub(super) fn line_of(n: Node) -> usize {
    n.start_position().row + 1
}

fn end_line_of(n: Node) -> usize {
    n.end_position().row + 1
}

fn children(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

fn basename(t: &str) -> &str {
    t.rsplit('/').next().unwrap_or(t)
}

impl<'s> Walker<'s> {
    fn text(&self, n: Node) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    fn new_construct(&mut self) -> usize {
        self.next_construct += 1;
        self.next_construct
    }

    fn with_arm(&mut self, arm: Arm, body: &[Node], depth: usize) {
        self.stack.push(arm);
        for n in body {
            self.visit(*n, depth + 1);
        }
        self.stack.pop();
    }

    fn visit(&mut self, n: Node, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        if n.is_error() || n.is_missing() {
            self.facts.syntax_errors.push(line_of(n));
        }
        match n.kind() {
            "comment" => {}
            "if_statement" => self.visit_if(n, depth),
            "case_statement" => self.visit_case(n, depth),
            "while_statement" | "for_statement" | "c_style_for_statement" => {
                self.visit_loop(n, depth)
            }
            "function_definition" => self.visit_function(n, depth),
            "list" => self.visit_list(n, depth),
            "redirected_statement" => self.visit_redirected(n, depth),
            "command" => self.visit_command(n, &[], depth),
            "declaration_command" => self.visit_declaration(n, depth),
            "variable_assignment" => self.visit_assignment(n, false, false, depth),
            "unset_command" => self.visit_unset(n, depth),
            "simple_expansion" | "expansion" => self.visit_expansion(n, depth),
            "variable_name" => {
                // Reached only outside assignments: arithmetic uses (`$((TP % 2))`).
                self.record_use(n, None, None);
            }
            "unary_expression" => {
                // `[[ -v NAME ]]` checks the variable: count it as a use.
                let cs = children(n);
                if cs.len() == 2 && self.text(cs[0]) == "-v" {
                    let name = self.text(cs[1]).trim_matches('"').to_string();
                    self.facts.expansions.push(Expansion {
                        name,
                        line: line_of(cs[1]),
                        column: cs[1].start_position().column + 1,
                        branch: self.stack.clone(),
                        operator: Some("-v".into()),
                        default: None,
                    });
                }
                self.visit_children(n, depth);
            }
            _ => self.visit_children(n, depth),
        }
    }

    fn visit_children(&mut self, n: Node, depth: usize) {
        for c in children(n) {
            self.visit(c, depth + 1);
        }
    }

    fn visit_if(&mut self, n: Node, depth: usize) {
        let construct = self.new_construct();
        let cs = children(n);
        let mut conds = Vec::new();
        let mut body = Vec::new();
        let mut in_body = false;
        let mut tail = Vec::new();
        for c in &cs {
            match c.kind() {
                "if" | "fi" => {}
                "then" => in_body = true,
                "elif_clause" | "else_clause" => tail.push(*c),
                _ if !in_body => conds.push(*c),
                _ => body.push(*c),
            }
        }
        for c in &conds {
            self.visit(*c, depth + 1);
        }
        let cond_text = self.join_text(&conds);
        let mut preceding = vec![cond_text.clone()];
        self.with_arm(
            Arm {
                construct,
                index: 0,
                kind: ArmKind::If,
                condition: cond_text,
                patterns: Vec::new(),
                preceding: Vec::new(),
                line: line_of(n),
            },
            &body,
            depth,
        );
        for (i, clause) in tail.iter().enumerate() {
            let ccs = children(*clause);
            let is_elif = clause.kind() == "elif_clause";
            let mut conds = Vec::new();
            let mut body = Vec::new();
            let mut in_body = !is_elif;
            for c in &ccs {
                match c.kind() {
                    "elif" | "else" => {}
                    "then" => in_body = true,
                    _ if !in_body => conds.push(*c),
                    _ => body.push(*c),
                }
            }
            for c in &conds {
                self.visit(*c, depth + 1);
            }
            let cond_text = self.join_text(&conds);
            let arm = Arm {
                construct,
                index: i + 1,
                kind: if is_elif {
                    ArmKind::Elif
                } else {
                    ArmKind::Else
                },
                condition: cond_text.clone(),
                patterns: Vec::new(),
                preceding: preceding.clone(),
                line: line_of(*clause),
            };
            self.with_arm(arm, &body, depth);
            preceding.push(cond_text);
        }
    }

    fn join_text(&self, nodes: &[Node]) -> String {
        nodes
            .iter()
            .map(|c| self.text(*c).trim())
            .filter(|t| !t.is_empty() && *t != ";" && *t != "&")
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn visit_case(&mut self, n: Node, depth: usize) {
        let construct = self.new_construct();
        let subject = n.child_by_field_name("value");
        let subject_text = subject
            .map(|s| self.text(s).to_string())
            .unwrap_or_default();
        if let Some(s) = subject {
            self.visit(s, depth + 1);
        }
        let mut preceding: Vec<String> = Vec::new();
        let items = children(n).into_iter().filter(|c| c.kind() == "case_item");
        for (index, item) in items.enumerate() {
            let mut patterns = Vec::new();
            let mut body = Vec::new();
            let ics = children(item);
            let mut seen_paren = false;
            for (i, c) in ics.iter().enumerate() {
                let field = item.field_name_for_child(i as u32);
                if field == Some("value") {
                    patterns.push(self.text(*c).to_string());
                } else if c.kind() == ")" {
                    seen_paren = true;
                } else if seen_paren && c.is_named() && field != Some("termination") {
                    body.push(*c);
                }
            }
            let arm = Arm {
                construct,
                index,
                kind: ArmKind::CaseItem,
                condition: subject_text.clone(),
                patterns: patterns.clone(),
                preceding: preceding.clone(),
                line: line_of(item),
            };
            self.with_arm(arm, &body, depth);
            preceding.push(patterns.join("|"));
        }
    }

    fn visit_loop(&mut self, n: Node, depth: usize) {
        let construct = self.new_construct();
        let body = n.child_by_field_name("body");
        if n.kind() == "for_statement"
            && let Some(v) = n.child_by_field_name("variable")
        {
            let values: Vec<Word> = {
                let mut c = n.walk();
                n.children_by_field_name("value", &mut c)
                    .map(|x| self.word(x))
                    .collect::<Vec<_>>()
            };
            self.facts.assignments.push(Assignment {
                name: self.text(v).to_string(),
                value: AssignedValue::Array(values),
                append: false,
                exported: false,
                local: false,
                loop_var: true,
                line: line_of(v),
                end_line: line_of(v),
                branch: self.stack.clone(),
            });
        }
        let mut header = Vec::new();
        for c in children(n) {
            if Some(c) != body && c.kind() != "variable_name" {
                header.push(c);
            }
        }
        for c in &header {
            self.visit(*c, depth + 1);
        }
        let cond = self.join_text(
            &header
                .iter()
                .copied()
                .filter(|c| c.is_named())
                .collect::<Vec<_>>(),
        );
        if let Some(b) = body {
            self.with_arm(
                Arm {
                    construct,
                    index: 0,
                    kind: ArmKind::Loop,
                    condition: cond,
                    patterns: Vec::new(),
                    preceding: Vec::new(),
                    line: line_of(n),
                },
                &[b],
                depth,
            );
        }
    }

    fn visit_function(&mut self, n: Node, depth: usize) {
        let construct = self.new_construct();
        let name = n
            .child_by_field_name("name")
            .map(|x| self.text(x).to_string())
            .unwrap_or_default();
        self.facts.functions.push((name.clone(), line_of(n)));
        let body: Vec<Node> = children(n)
            .into_iter()
            .filter(|c| c.is_named() && Some(*c) != n.child_by_field_name("name"))
            .collect();
        self.with_arm(
            Arm {
                construct,
                index: 0,
                kind: ArmKind::Function,
                condition: name,
                patterns: Vec::new(),
                preceding: Vec::new(),
                line: line_of(n),
            },
            &body,
            depth,
        );
    }

    fn visit_list(&mut self, n: Node, depth: usize) {
        // `a && b || c`: b runs when a succeeded, c when the left side failed.
        let cs = children(n);
        let Some(first) = cs.first() else {
            return;
        };
        self.visit(*first, depth + 1);
        let mut left = vec![*first];
        let mut i = 1;
        while i < cs.len() {
            let op = self.text(cs[i]);
            let kind = match op {
                "&&" => Some(ArmKind::AndThen),
                "||" => Some(ArmKind::OrElse),
                _ => None,
            };
            match (kind, cs.get(i + 1)) {
                (Some(kind), Some(rhs)) => {
                    let construct = self.new_construct();
                    let arm = Arm {
                        construct,
                        index: 1,
                        kind,
                        condition: self.join_text(&left),
                        patterns: Vec::new(),
                        preceding: Vec::new(),
                        line: line_of(*rhs),
                    };
                    self.with_arm(arm, &[*rhs], depth);
                    left.push(*rhs);
                    i += 2;
                }
                _ => {
                    self.visit(cs[i], depth + 1);
                    i += 1;
                }
            }
        }
    }

    fn visit_redirected(&mut self, n: Node, depth: usize) {
        let body = n.child_by_field_name("body");
        let redirects: Vec<Node> = {
            let mut c = n.walk();
            n.children_by_field_name("redirect", &mut c).collect()
        };
        for r in &redirects {
            self.visit(*r, depth + 1);
        }
        match body {
            Some(b) if b.kind() == "command" => self.visit_command(b, &redirects, depth + 1),
            Some(b) => {
                self.visit(b, depth + 1);
                self.record_heredocs(b, "", &[], &redirects);
            }
            None => {}
        }
    }

    fn visit_unset(&mut self, n: Node, depth: usize) {
        for c in children(n) {
            match c.kind() {
                "variable_name" | "word" => self.facts.unsets.push(Unset {
                    name: self.text(c).to_string(),
                    line: line_of(c),
                    branch: self.stack.clone(),
                }),
                _ => self.visit(c, depth + 1),
            }
        }
    }

    fn record_use(&mut self, name_node: Node, operator: Option<String>, default: Option<String>) {
        let name = self.text(name_node).to_string();
        if name.is_empty() {
            return;
        }
        self.facts.expansions.push(Expansion {
            name,
            line: line_of(name_node),
            column: name_node.start_position().column + 1,
            branch: self.stack.clone(),
            operator,
            default,
        });
    }

    fn visit_expansion(&mut self, n: Node, depth: usize) {
        let cs = children(n);
        let mut operator = None;
        let mut default = None;
        for (i, c) in cs.iter().enumerate() {
            if n.field_name_for_child(i as u32) == Some("operator") {
                operator = Some(self.text(*c).to_string());
                let rest: Vec<Node> = cs[i + 1..]
                    .iter()
                    .copied()
                    .filter(|x| x.kind() != "}")
                    .collect();
                let t = self.join_text(&rest);
                if !t.is_empty() {
                    default = Some(t);
                }
                break;
            }
        }
        for c in &cs {
            match c.kind() {
                "variable_name" => self.record_use(*c, operator.clone(), default.clone()),
                "subscript" => {
                    if let Some(name) = c.child_by_field_name("name") {
                        self.record_use(name, operator.clone(), default.clone());
                    }
                    if let Some(idx) = c.child_by_field_name("index") {
                        self.visit(idx, depth + 1);
                    }
                }
                _ => self.visit(*c, depth + 1),
            }
        }
    }

    /// A shell word with its unquoted text and the variables it expands.
    fn word(&self, n: Node) -> Word {
        let raw = self.text(n).to_string();
        let text = self.unquote(n, 0);
        let mut vars = Vec::new();
        self.collect_vars(n, &mut vars, 0);
        let quoted = matches!(n.kind(), "string" | "raw_string" | "ansi_c_string")
            || (n.kind() == "concatenation"
                && n.child(0)
                    .is_some_and(|c| matches!(c.kind(), "string" | "raw_string")));
        let splat = match n.kind() {
            "simple_expansion" => Some(SplatKind::Unquoted),
            "expansion" => Some(if raw.ends_with("[@]}") || raw.ends_with("[*]}") {
                SplatKind::Array
            } else {
                SplatKind::Unquoted
            }),
            "string" => {
                let named: Vec<Node> = children(n).into_iter().filter(|c| c.is_named()).collect();
                (named.len() == 1
                    && named[0].kind() == "expansion"
                    && self.text(named[0]).ends_with("[@]}"))
                .then_some(SplatKind::Array)
            }
            _ => None,
        };
        Word {
            raw,
            text,
            line: line_of(n),
            column: n.start_position().column + 1,
            vars,
            quoted,
            splat,
        }
    }

    fn unquote(&self, n: Node, depth: usize) -> String {
        let raw = self.text(n);
        if depth > MAX_DEPTH {
            return raw.to_string();
        }
        match n.kind() {
            "string" => {
                let inner = raw
                    .strip_prefix('"')
                    .and_then(|r| r.strip_suffix('"'))
                    .unwrap_or(raw);
                unescape_double(inner)
            }
            "raw_string" => raw
                .strip_prefix('\'')
                .and_then(|r| r.strip_suffix('\''))
                .unwrap_or(raw)
                .to_string(),
            "ansi_c_string" => raw
                .strip_prefix("$'")
                .and_then(|r| r.strip_suffix('\''))
                .unwrap_or(raw)
                .to_string(),
            "word" => unescape_word(raw),
            "concatenation" => children(n)
                .into_iter()
                .map(|c| self.unquote(c, depth + 1))
                .collect(),
            _ => raw.to_string(),
        }
    }

    fn collect_vars(&self, n: Node, out: &mut Vec<String>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        match n.kind() {
            "simple_expansion" | "expansion" => {
                for c in children(n) {
                    match c.kind() {
                        "variable_name" => out.push(self.text(c).to_string()),
                        "subscript" => {
                            if let Some(name) = c.child_by_field_name("name") {
                                out.push(self.text(name).to_string());
                            }
                        }
                        _ => self.collect_vars(c, out, depth + 1),
                    }
                }
            }
            "variable_name"
                if n.parent()
                    .is_some_and(|p| p.kind() != "variable_assignment") =>
            {
                out.push(self.text(n).to_string())
            }
            _ => {
                for c in children(n) {
                    self.collect_vars(c, out, depth + 1);
                }
            }
        }
    }

    fn visit_declaration(&mut self, n: Node, depth: usize) {
        let cs = children(n);
        let keyword = cs.first().map(|c| self.text(*c)).unwrap_or("");
        let opts: Vec<&str> = cs
            .iter()
            .filter(|c| c.kind() == "word" && self.text(**c).starts_with('-'))
            .map(|c| self.text(*c))
            .collect();
        let exported = keyword == "export" || opts.iter().any(|o| o.contains('x'));
        let local = keyword == "local";
        let env_kind = if keyword == "export" {
            EnvKind::Export
        } else {
            EnvKind::Declare
        };
        for c in &cs {
            match c.kind() {
                "variable_assignment" => {
                    self.visit_assignment(*c, exported, local, depth + 1);
                    if exported {
                        let name = c
                            .child_by_field_name("name")
                            .map(|x| self.text(x).to_string())
                            .unwrap_or_default();
                        let value = c.child_by_field_name("value").map(|v| self.word(v));
                        self.facts.env.push(EnvVar {
                            name,
                            value,
                            kind: env_kind.clone(),
                            line: line_of(*c),
                            branch: self.stack.clone(),
                        });
                    }
                }
                "variable_name" if exported => self.facts.env.push(EnvVar {
                    name: self.text(*c).to_string(),
                    value: None,
                    kind: env_kind.clone(),
                    line: line_of(*c),
                    branch: self.stack.clone(),
                }),
                "variable_name" => {}
                _ => self.visit(*c, depth + 1),
            }
        }
    }

    fn visit_assignment(&mut self, n: Node, exported: bool, local: bool, depth: usize) {
        let Some(name_node) = n.child_by_field_name("name") else {
            self.visit_children(n, depth);
            return;
        };
        // `A[3]=x` names the array through a subscript.
        let name = if name_node.kind() == "subscript" {
            name_node
                .child_by_field_name("name")
                .map(|x| self.text(x).to_string())
                .unwrap_or_default()
        } else {
            self.text(name_node).to_string()
        };
        let append = children(n).iter().any(|c| self.text(*c) == "+=");
        let value_node = n.child_by_field_name("value");
        let value = match value_node {
            None => AssignedValue::Empty,
            Some(v) if v.kind() == "array" => AssignedValue::Array(
                children(v)
                    .into_iter()
                    .filter(|c| c.is_named() && c.kind() != "comment")
                    .map(|c| self.word(c))
                    .collect(),
            ),
            Some(v) => AssignedValue::Scalar(self.word(v)),
        };
        if let Some(v) = value_node {
            self.visit(v, depth + 1);
        }
        let line = line_of(n);
        let end_line = end_line_of(n);
        // A server command held in a variable: `VLLM_CMD=( vllm serve … )`.
        if !append {
            let words = match &value {
                AssignedValue::Array(ws) => Some(ws.clone()),
                AssignedValue::Scalar(w) if !w.quoted || w.raw.starts_with('"') => {
                    Some(split_scalar(w))
                }
                _ => None,
            };
            if let Some(words) = words
                && let Some((engine, at, len)) = find_engine(&words)
            {
                self.pending_launches.push(PendingLaunch {
                    engine,
                    entry: words[at..at + len]
                        .iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    wrapper: words[..at].iter().map(|w| w.text.clone()).collect(),
                    prefix_env: Vec::new(),
                    args: words[at + len..].to_vec(),
                    line,
                    end_line,
                    branch: self.stack.clone(),
                    via_var: Some(name.clone()),
                });
            }
        }
        self.facts.assignments.push(Assignment {
            name,
            value,
            append,
            exported,
            local,
            loop_var: false,
            line,
            end_line,
            branch: self.stack.clone(),
        });
    }
}
