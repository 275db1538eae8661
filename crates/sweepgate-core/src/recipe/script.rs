//! Static facts of a benchmark shell script, read from a real bash syntax
//! tree (tree-sitter-bash). Nothing is executed: the script is PR content.
//!
//! The facts are what the recipe lints (L06–L12, L21–L23, L26) and checks
//! 8–11 and 13 consume: server launches with their flags, the benchmark
//! client calls, environment exports and command-prefix variables, shell
//! assignments and expansions with the `if`/`case` arm they sit in, package
//! installs with their requirement specs, source-rewriting commands and
//! heredocs, and the variables `check_env_vars` requires.
//!
//! Comments are not facts (the syntax tree drops them), so "strip comment
//! lines before matching" holds by construction. Backslash continuations are
//! whitespace to the grammar, so a continued command is one command with the
//! line of each argument kept.

use std::collections::{BTreeSet, HashSet};

use tree_sitter::{Node, Parser};

use super::{Loc, ParseError};

/// Deeper nesting than this is not walked (guards the stack on hostile input).
const MAX_DEPTH: usize = 200;
/// How many levels of `"${ARGS[@]}"` inside arrays are followed.
const MAX_SPLAT_DEPTH: usize = 8;

/// One shell word as written, with its unquoted text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Word {
    /// Source text, quotes included.
    pub raw: String,
    /// Text with the outer quoting removed; expansions stay as written (`$TP`).
    pub text: String,
    pub line: usize,
    pub column: usize,
    /// Variables expanded anywhere inside the word.
    pub vars: Vec<String>,
    /// The word is (or starts with) a quoted string.
    pub quoted: bool,
    /// The whole word is one expansion that can expand to several words.
    pub splat: Option<SplatKind>,
}

impl Word {
    /// The text parses as a number (`8`, `0.95`, `-1`).
    pub fn is_number(&self) -> bool {
        !self.text.is_empty() && self.text.parse::<f64>().is_ok()
    }

    /// The text contains no expansion at all.
    pub fn is_literal(&self) -> bool {
        self.vars.is_empty() && !self.text.contains("$(") && !self.text.contains('`')
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum SplatKind {
    /// `"${NAME[@]}"` or `${NAME[*]}`: every array element becomes a word.
    Array,
    /// An unquoted `$NAME` / `${NAME}`: word splitting applies.
    Unquoted,
}

/// An expansion that splices the value of a variable into a command line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Splat {
    pub var: String,
    pub kind: SplatKind,
    pub line: usize,
}

/// Which construct an arm belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ArmKind {
    If,
    Elif,
    Else,
    CaseItem,
    /// The right side of `a && b`.
    AndThen,
    /// The right side of `a || b`.
    OrElse,
    Loop,
    Function,
}

/// One enclosing arm of a conditional (or a loop / function body).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Arm {
    /// Id of the `if`/`case`/list/loop/function, unique within the script.
    pub construct: usize,
    /// Position of the arm within its construct (0 for the `if` arm).
    pub index: usize,
    pub kind: ArmKind,
    /// The condition as written (`[ "$CONC" -le 8 ]`); for a case item the
    /// subject (`"${KV_OFFLOAD_BACKEND:-}"`); for a function its name.
    pub condition: String,
    /// Case patterns of this item (`mooncake`, `""`).
    pub patterns: Vec<String>,
    /// Conditions of the earlier arms of the same construct, all false here.
    pub preceding: Vec<String>,
    /// Line of the `if`/`elif`/`else`/pattern that opens the arm.
    pub line: usize,
}

/// The arms enclosing a fact, outermost first. Empty: top level.
pub(crate) type Branch = Vec<Arm>;

/// Two facts can never both run in one execution: they sit in different
/// arms of the same `if`/`case`.
pub fn exclusive(a: &[Arm], b: &[Arm]) -> bool {
    a.iter().any(|x| {
        matches!(
            x.kind,
            ArmKind::If | ArmKind::Elif | ArmKind::Else | ArmKind::CaseItem
        ) && b
            .iter()
            .any(|y| y.construct == x.construct && y.index != x.index)
    })
}

/// How a flag carries its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum FlagForm {
    /// `--flag=value`
    Equals,
    /// `--flag value`
    Separate,
    /// `--flag` alone
    Bare,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Flag {
    /// With its dashes: `--tensor-parallel-size`, `--attention-config.mla_prefill_backend`.
    pub name: String,
    pub value: Option<Word>,
    pub form: FlagForm,
    pub line: usize,
    pub column: usize,
}

impl Flag {
    /// The name without leading dashes.
    pub(crate) fn key(&self) -> &str {
        self.name.trim_start_matches('-')
    }

    /// `--attention-config.mla_prefill_backend` → (`attention-config`, `mla_prefill_backend`).
    pub fn dotted(&self) -> Option<(&str, &str)> {
        self.key().split_once('.')
    }

    /// The unquoted value text, if any.
    pub fn value_text(&self) -> Option<&str> {
        self.value.as_ref().map(|w| w.text.as_str())
    }
}

/// A flag as it reaches a command, directly or through an expanded variable.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResolvedFlag {
    pub flag: Flag,
    /// Variables it came through, outermost first (empty: written inline).
    pub via: Vec<String>,
    /// The arms of the assignment that supplied it (empty when inline).
    pub branch: Branch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum DynamoBackend {
    Vllm,
    Sglang,
    Trtllm,
    Frontend,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Engine {
    Vllm,
    Sglang,
    Trtllm,
    Atom,
    Dynamo(DynamoBackend),
    /// `srtctl apply -f <recipe>`: the recipe YAML holds the launch.
    SrtSlurm,
}

/// A command that starts an inference server.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ServerLaunch {
    pub engine: Engine,
    /// The words that name the entry point: `vllm serve`, `python3 -m sglang.launch_server`.
    pub entry: String,
    /// Words before the entry point (`mpirun -n 1 --oversubscribe`).
    pub wrapper: Vec<String>,
    /// `VAR=x` prefixes of the command.
    pub prefix_env: Vec<EnvVar>,
    /// Arguments that are not flags or flag values (the model path).
    pub positionals: Vec<Word>,
    pub flags: Vec<Flag>,
    pub splats: Vec<Splat>,
    pub line: usize,
    pub end_line: usize,
    pub branch: Branch,
    /// The launch is built as `NAME=( … )` (or `NAME="…"`) and run later.
    pub via_var: Option<String>,
    /// Lines where `"${NAME[@]}"` / `$NAME` runs the stored command.
    pub invoked_at: Vec<usize>,
}

impl ServerLaunch {
    /// Flags written directly on the command with this name (dashes included).
    pub fn flag(&self, name: &str) -> Option<&Flag> {
        self.flags.iter().find(|f| f.name == name)
    }

    /// The variable is spliced into the command (`$EVAL_CONTEXT_ARGS`, `"${SPEC_ARGS[@]}"`).
    pub fn splices(&self, var: &str) -> bool {
        self.splats.iter().any(|s| s.var == var)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ClientKind {
    /// `run_benchmark_serving` from `benchmark_lib.sh`.
    BenchmarkServing,
    /// `build_replay_cmd` (agentic replay, chat endpoint by construction).
    BuildReplay,
    /// `run_agentic_replay_and_write_outputs`.
    AgenticReplay,
    /// `run_eval` / `run_lm_eval`.
    Eval,
    /// `setup_eval_context` (exports `EVAL_MAX_MODEL_LEN`).
    SetupEvalContext,
    /// A client run directly (`python3 -m sglang.bench_serving`, `vllm bench serve`, `benchmark_serving.py`).
    External,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClientCall {
    pub kind: ClientKind,
    pub name: String,
    pub flags: Vec<Flag>,
    pub positionals: Vec<Word>,
    pub splats: Vec<Splat>,
    pub line: usize,
    pub end_line: usize,
    pub branch: Branch,
}

impl ClientCall {
    pub fn flag(&self, name: &str) -> Option<&Flag> {
        self.flags.iter().find(|f| f.name == name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum EnvKind {
    /// `export NAME=value` or `export NAME`.
    Export,
    /// `NAME=value cmd …`: only the command sees it. Holds the command name.
    Prefix(String),
    /// `declare -x NAME=…` / `typeset -x`.
    Declare,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EnvVar {
    pub name: String,
    /// `None` for `export NAME` of an earlier assignment.
    pub value: Option<Word>,
    pub kind: EnvKind,
    pub line: usize,
    pub branch: Branch,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum AssignedValue {
    Scalar(Word),
    Array(Vec<Word>),
    /// `NAME=` with nothing after it.
    Empty,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Assignment {
    pub name: String,
    pub value: AssignedValue,
    /// `NAME+=…`
    pub append: bool,
    /// `export NAME=…`
    pub exported: bool,
    /// `local NAME=…` inside a function.
    pub local: bool,
    /// The loop variable of `for NAME in …`.
    pub loop_var: bool,
    pub line: usize,
    pub end_line: usize,
    pub branch: Branch,
}

impl Assignment {
    /// The scalar text (unquoted), or the array elements joined by spaces.
    pub fn value_text(&self) -> String {
        match &self.value {
            AssignedValue::Scalar(w) => w.text.clone(),
            AssignedValue::Array(ws) => ws
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            AssignedValue::Empty => String::new(),
        }
    }

    /// For `NAME="${NAME:-literal}"` or `NAME=literal`, the literal.
    pub fn literal(&self) -> Option<String> {
        let AssignedValue::Scalar(w) = &self.value else {
            return None;
        };
        if w.is_literal() {
            return Some(w.text.clone());
        }
        let t = w.text.trim();
        let inner = t.strip_prefix("${")?.strip_suffix('}')?;
        let (var, default) = inner.split_once(":-").or_else(|| inner.split_once('-'))?;
        if var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !default.contains('$') {
            Some(default.to_string())
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Expansion {
    pub name: String,
    pub line: usize,
    pub column: usize,
    pub branch: Branch,
    /// `:-`, `-`, `:=`, `:?`, `#`, `%%`, … when the expansion has one.
    pub operator: Option<String>,
    /// The word after `:-` / `-` / `:=`, as written.
    pub default: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RequiredVars {
    pub names: Vec<String>,
    pub line: usize,
    pub branch: Branch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum InstallTool {
    /// `pip` / `pip3 install`
    Pip,
    /// `python -m pip install`
    PythonPip,
    /// `uv pip install`
    UvPip,
    /// `agentic_pip_install` from `benchmark_lib.sh` (wraps pip).
    LibWrapper,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum RequirementKind {
    /// `name==1.2.3` (also `===`), possibly with the version in a variable.
    Pinned,
    /// `git+https://…@<40 hex>`
    GitCommit,
    /// An archive URL containing a 40-hex commit.
    ArchiveCommit,
    /// A bare name, a range (`>=0.1.1,<0.2.0`), a wildcard or a tag/branch ref.
    Unpinned,
    /// `-r file`: pinned only if the file is.
    RequirementsFile,
    /// `-c file`
    ConstraintsFile,
    /// `-e path`
    Editable,
    /// A local directory or wheel path.
    LocalPath,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Requirement {
    /// As given, unquoted: `fastokens>=0.1.1,<0.2.0`.
    pub spec: String,
    /// The distribution name when it can be read (`fastokens`, `lm_eval`).
    pub name: Option<String>,
    pub kind: RequirementKind,
    pub line: usize,
}

impl Requirement {
    pub fn is_pinned(&self) -> bool {
        matches!(
            self.kind,
            RequirementKind::Pinned | RequirementKind::GitCommit | RequirementKind::ArchiveCommit
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PackageInstall {
    pub tool: InstallTool,
    pub requirements: Vec<Requirement>,
    /// Options other than the requirement-bearing ones (`--upgrade`, `--no-deps`, `--index-url`).
    pub options: Vec<Flag>,
    pub line: usize,
    pub end_line: usize,
    pub branch: Branch,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum RewriteKind {
    /// `sed -i` / `sed --in-place`; detail: the sed expression(s).
    SedInPlace,
    /// `perl -pi -e …`
    PerlInPlace,
    /// `patch …`; detail: the patch file when given.
    Patch,
    /// `git apply …` / `git am …`
    GitApply,
    /// `cat > path <<EOF` / `tee path <<EOF`; detail: the heredoc body.
    HeredocWrite,
    /// `python3 - <<EOF` (or bash/perl): an inline program; detail: the body.
    InlineProgram,
    /// `cp`/`mv`/`install` into a destination.
    Copy,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SourceRewrite {
    pub kind: RewriteKind,
    /// Files or directories written (the sed targets, the copy destination, …).
    pub targets: Vec<Word>,
    pub detail: String,
    pub line: usize,
    pub end_line: usize,
    pub branch: Branch,
}

impl SourceRewrite {
    /// A target or the inline body names an installed engine location
    /// (docs/rules.md Check 10 list). Variables are not resolved here.
    pub fn touches_engine_path(&self) -> bool {
        self.targets.iter().any(|t| is_engine_path(&t.text))
            || (matches!(
                self.kind,
                RewriteKind::InlineProgram | RewriteKind::HeredocWrite
            ) && is_engine_path(&self.detail))
    }
}

/// Installed engine sources (docs/rules.md Check 10 detection, item 2).
pub(crate) fn is_engine_path(text: &str) -> bool {
    const ENGINES: [&str; 8] = [
        "vllm",
        "sglang",
        "tensorrt_llm",
        "aiter",
        "atom",
        "flashinfer",
        "rixl",
        "nixl",
    ];
    if text.contains("/sgl-workspace/")
        || text.contains("site-packages")
        || text.contains("dist-packages")
    {
        return true;
    }
    if let Some(pos) = text.find("/usr/local/lib/python") {
        let rest = &text[pos..];
        return ENGINES
            .iter()
            .any(|e| rest.contains(&format!("/{e}/")) || rest.ends_with(&format!("/{e}")));
    }
    false
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Heredoc {
    /// The command reading it (`cat`, `python3`, `tee`).
    pub command: String,
    pub args: Vec<Word>,
    pub delimiter: String,
    /// `<<'EOF'`: no expansion inside the body.
    pub quoted: bool,
    pub body: String,
    /// First line of the body.
    pub body_line: usize,
    pub end_line: usize,
    /// `> file` on the same command, if any.
    pub target: Option<Word>,
    pub branch: Branch,
}

/// Any simple command, for rules the typed facts do not cover.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CommandFact {
    pub name: String,
    pub args: Vec<Word>,
    pub line: usize,
    pub end_line: usize,
    pub branch: Branch,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unset {
    pub name: String,
    pub line: usize,
    pub branch: Branch,
}

/// Everything read from one script.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ScriptFacts {
    pub path: String,
    pub servers: Vec<ServerLaunch>,
    pub clients: Vec<ClientCall>,
    pub env: Vec<EnvVar>,
    pub assignments: Vec<Assignment>,
    pub expansions: Vec<Expansion>,
    pub unsets: Vec<Unset>,
    pub required: Vec<RequiredVars>,
    pub installs: Vec<PackageInstall>,
    pub rewrites: Vec<SourceRewrite>,
    pub heredocs: Vec<Heredoc>,
    pub commands: Vec<CommandFact>,
    /// Functions defined in the script, with their line.
    pub functions: Vec<(String, usize)>,
    /// Lines where the grammar had to recover from a syntax error.
    pub syntax_errors: Vec<usize>,
}

impl ScriptFacts {
    pub fn loc(&self, line: usize) -> Loc {
        Loc::new(self.path.clone(), line, 1)
    }

    /// The script looks like a benchmark recipe, not a helper: it checks its
    /// environment or starts a server (L08's helper exemption).
    pub fn is_recipe(&self) -> bool {
        !self.required.is_empty() || !self.servers.is_empty()
    }

    /// Every variable named by `check_env_vars`.
    pub(crate) fn required_vars(&self) -> BTreeSet<&str> {
        self.required
            .iter()
            .flat_map(|r| r.names.iter().map(String::as_str))
            .collect()
    }

    pub fn is_required(&self, name: &str) -> bool {
        self.required
            .iter()
            .any(|r| r.names.iter().any(|n| n == name))
    }

    pub fn is_expanded(&self, name: &str) -> bool {
        self.expansions.iter().any(|e| e.name == name)
    }

    pub(crate) fn is_exported(&self, name: &str) -> bool {
        self.env
            .iter()
            .any(|e| e.name == name && matches!(e.kind, EnvKind::Export | EnvKind::Declare))
            || self
                .assignments
                .iter()
                .any(|a| a.name == name && a.exported)
    }

    /// Assignments of variables never expanded and never exported (L06 input;
    /// the watch-list and the `benchmark_lib.sh` exemptions are the lint's).
    pub fn unused_assignments(&self) -> Vec<&Assignment> {
        let used: HashSet<&str> = self.expansions.iter().map(|e| e.name.as_str()).collect();
        self.assignments
            .iter()
            .filter(|a| {
                !a.loop_var && !used.contains(a.name.as_str()) && !self.is_exported(&a.name)
            })
            .collect()
    }

    /// Line of the first server launch (installs before it feed the server).
    pub fn first_server_line(&self) -> Option<usize> {
        self.servers.iter().map(|s| s.line).min()
    }

    /// The nearest assignment of `name` before `line` that can be in effect
    /// for a fact in `branch` (not in an exclusive arm).
    pub fn resolve(&self, name: &str, line: usize, branch: &[Arm]) -> Option<&Assignment> {
        self.assignments
            .iter()
            .filter(|a| a.name == name && a.line <= line && !exclusive(&a.branch, branch))
            .max_by_key(|a| a.line)
    }

    /// Every assignment of `name` that can be in effect in `branch` before `line`.
    pub(crate) fn candidates(&self, name: &str, line: usize, branch: &[Arm]) -> Vec<&Assignment> {
        self.assignments
            .iter()
            .filter(|a| a.name == name && a.line <= line && !exclusive(&a.branch, branch))
            .collect()
    }

    /// The flags that reach a server: inline ones plus those of every
    /// variable it splices (all arms that can apply), and appends to the
    /// variable that holds the command.
    pub fn resolved_server_flags(&self, launch: &ServerLaunch) -> Vec<ResolvedFlag> {
        let mut out: Vec<ResolvedFlag> = launch
            .flags
            .iter()
            .map(|f| ResolvedFlag {
                flag: f.clone(),
                via: Vec::new(),
                branch: Vec::new(),
            })
            .collect();
        let at = launch
            .invoked_at
            .iter()
            .copied()
            .max()
            .unwrap_or(launch.end_line);
        let mut seen = HashSet::new();
        for s in &launch.splats {
            self.splat_flags(
                &s.var,
                at,
                &launch.branch,
                &mut Vec::new(),
                &mut seen,
                &mut out,
            );
        }
        if let Some(var) = &launch.via_var {
            for a in self
                .assignments
                .iter()
                .filter(|a| &a.name == var && a.append)
            {
                self.assignment_flags(a, at, &mut vec![var.clone()], &mut seen, &mut out);
            }
        }
        out
    }

    /// The flags that reach a client call (inline plus spliced variables).
    pub fn resolved_client_flags(&self, call: &ClientCall) -> Vec<ResolvedFlag> {
        let mut out: Vec<ResolvedFlag> = call
            .flags
            .iter()
            .map(|f| ResolvedFlag {
                flag: f.clone(),
                via: Vec::new(),
                branch: Vec::new(),
            })
            .collect();
        let mut seen = HashSet::new();
        for s in &call.splats {
            self.splat_flags(
                &s.var,
                call.line,
                &call.branch,
                &mut Vec::new(),
                &mut seen,
                &mut out,
            );
        }
        out
    }

    fn splat_flags(
        &self,
        var: &str,
        line: usize,
        branch: &[Arm],
        via: &mut Vec<String>,
        seen: &mut HashSet<(String, usize)>,
        out: &mut Vec<ResolvedFlag>,
    ) {
        if via.len() >= MAX_SPLAT_DEPTH {
            return;
        }
        via.push(var.to_string());
        for a in self.candidates(var, line, branch) {
            self.assignment_flags(a, line, via, seen, out);
        }
        via.pop();
    }

    fn assignment_flags(
        &self,
        a: &Assignment,
        line: usize,
        via: &mut Vec<String>,
        seen: &mut HashSet<(String, usize)>,
        out: &mut Vec<ResolvedFlag>,
    ) {
        if !seen.insert((a.name.clone(), a.line)) {
            return;
        }
        let words = match &a.value {
            AssignedValue::Array(ws) => ws.clone(),
            AssignedValue::Scalar(w) => split_scalar(w),
            AssignedValue::Empty => Vec::new(),
        };
        let parsed = parse_args(&words, &self.flaglike_vars());
        for f in parsed.flags {
            out.push(ResolvedFlag {
                flag: f,
                via: via.clone(),
                branch: a.branch.clone(),
            });
        }
        for s in parsed.splats {
            self.splat_flags(&s.var, line, &a.branch, via, seen, out);
        }
    }

    /// Variables whose value is an array or starts with a dash: an unquoted
    /// expansion of one is spliced flags, not a flag value.
    fn flaglike_vars(&self) -> HashSet<String> {
        flaglike_vars(&self.assignments)
    }
}

fn flaglike_vars(assignments: &[Assignment]) -> HashSet<String> {
    assignments
        .iter()
        .filter(|a| match &a.value {
            AssignedValue::Array(_) => true,
            AssignedValue::Scalar(w) => w.text.trim_start().starts_with('-'),
            AssignedValue::Empty => false,
        })
        .map(|a| a.name.clone())
        .collect()
}

/// A variable name that conventionally holds several flags.
fn is_args_name(name: &str) -> bool {
    ["_ARGS", "_FLAGS", "_OPTS", "_OPTIONS", "_CMD", "_ARGV"]
        .iter()
        .any(|s| name.ends_with(s))
        || name == "ARGS"
}

/// Split an unquoted scalar value into words (`"--context-length $LEN"`).
fn split_scalar(w: &Word) -> Vec<Word> {
    w.text
        .split_whitespace()
        .map(|t| {
            let vars = vars_in_text(t);
            let splat = whole_expansion_name(t).map(|_| SplatKind::Unquoted);
            Word {
                raw: t.to_string(),
                text: t.to_string(),
                line: w.line,
                column: w.column,
                vars,
                quoted: false,
                splat,
            }
        })
        .collect()
}

/// `$NAME` / `${NAME}` / `${NAME[@]}` covering the whole text.
fn whole_expansion_name(t: &str) -> Option<String> {
    let inner = if let Some(rest) = t.strip_prefix("${") {
        let rest = rest.strip_suffix('}')?;
        rest.strip_suffix("[@]")
            .or_else(|| rest.strip_suffix("[*]"))
            .unwrap_or(rest)
    } else {
        t.strip_prefix('$')?
    };
    (!inner.is_empty()
        && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !inner.starts_with(|c: char| c.is_ascii_digit()))
    .then(|| inner.to_string())
}

/// Variable names expanded in plain text (for split scalar words).
fn vars_in_text(t: &str) -> Vec<String> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let mut j = i + 1;
            if j < b.len() && b[j] == b'{' {
                j += 1;
            }
            let start = j;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j > start {
                out.push(t[start..j].to_string());
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

struct ParsedArgs {
    flags: Vec<Flag>,
    positionals: Vec<Word>,
    splats: Vec<Splat>,
}

/// Split words into flags (`--f=v`, `--f v`, `--f`), positionals and splats.
fn parse_args(words: &[Word], flaglike: &HashSet<String>) -> ParsedArgs {
    let is_splat = |w: &Word| -> Option<Splat> {
        let kind = w.splat?;
        let var = whole_expansion_name(&w.text)?;
        if kind == SplatKind::Array || is_args_name(&var) || flaglike.contains(&var) {
            Some(Splat {
                var,
                kind,
                line: w.line,
            })
        } else {
            None
        }
    };
    let is_flag =
        |t: &str| t.len() > 1 && t.starts_with('-') && t.parse::<f64>().is_err() && t != "--";
    let mut out = ParsedArgs {
        flags: Vec::new(),
        positionals: Vec::new(),
        splats: Vec::new(),
    };
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if let Some(s) = is_splat(w) {
            out.splats.push(s);
            i += 1;
            continue;
        }
        let t = w.text.as_str();
        if is_flag(t) {
            if t.starts_with("--")
                && let Some((name, value)) = t.split_once('=')
            {
                let vraw = w.raw.split_once('=').map(|(_, v)| v).unwrap_or(value);
                let value_word = Word {
                    raw: vraw.to_string(),
                    text: value.to_string(),
                    line: w.line,
                    column: w.column + name.len() + 1,
                    vars: w.vars.clone(),
                    quoted: w.quoted,
                    splat: None,
                };
                out.flags.push(Flag {
                    name: name.to_string(),
                    value: Some(value_word),
                    form: FlagForm::Equals,
                    line: w.line,
                    column: w.column,
                });
                i += 1;
                continue;
            }
            let next = words.get(i + 1);
            let takes = next.is_some_and(|n| is_splat(n).is_none() && !is_flag(&n.text));
            if takes {
                out.flags.push(Flag {
                    name: t.to_string(),
                    value: next.cloned(),
                    form: FlagForm::Separate,
                    line: w.line,
                    column: w.column,
                });
                i += 2;
            } else {
                out.flags.push(Flag {
                    name: t.to_string(),
                    value: None,
                    form: FlagForm::Bare,
                    line: w.line,
                    column: w.column,
                });
                i += 1;
            }
            continue;
        }
        out.positionals.push(w.clone());
        i += 1;
    }
    out
}

/// tree-sitter-bash's external scanner reads out of bounds on characters
/// far outside the Basic Multilingual Plane (`{` then U+E0000 crashes the
/// process): every character above U+FFFF becomes as many `_` as its UTF-8
/// bytes, so byte offsets and lines stay exact.
fn scanner_safe(src: std::borrow::Cow<'_, str>) -> std::borrow::Cow<'_, str> {
    if src.chars().all(|c| (c as u32) <= 0xFFFF) {
        return src;
    }
    src.chars()
        .map(|c| {
            if (c as u32) > 0xFFFF {
                "_".repeat(c.len_utf8())
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// Read the facts of one script. Fails only when the grammar cannot run;
/// syntax errors in the script are recovered from and listed in
/// [`ScriptFacts::syntax_errors`].
pub fn parse_script(path: &str, bytes: &[u8]) -> Result<ScriptFacts, ParseError> {
    let src = scanner_safe(String::from_utf8_lossy(bytes));
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|e| ParseError::new(Loc::new(path, 1, 1), format!("bash grammar: {e}")))?;
    let tree = parser
        .parse(src.as_bytes(), None)
        .ok_or_else(|| ParseError::new(Loc::new(path, 1, 1), "bash parser returned no tree"))?;
    let mut w = Walker {
        src: &src,
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
    w.visit(tree.root_node(), 0);
    let mut facts = w.finish();
    if tree.root_node().has_error() {
        facts.syntax_errors.extend(error_lines(tree.root_node()));
        facts.syntax_errors.sort_unstable();
        facts.syntax_errors.dedup();
    }
    Ok(facts)
}

/// Lines of every ERROR or MISSING node (iterative: no recursion on deep trees).
fn error_lines(root: Node) -> Vec<usize> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    loop {
        let n = cursor.node();
        if n.is_error() || n.is_missing() {
            out.push(line_of(n));
        }
        if n.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
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

fn line_of(n: Node) -> usize {
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

    fn visit_command(&mut self, n: Node, redirects: &[Node], depth: usize) {
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

    fn record_heredocs(&mut self, cmd: Node, name: &str, args: &[Word], redirects: &[Node]) {
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

    fn finish(mut self) -> ScriptFacts {
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
const NOT_LAUNCHERS: [&str; 12] = [
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
const WRAPPERS: [&str; 14] = [
    "mpirun", "mpiexec", "srun", "numactl", "taskset", "nohup", "exec", "env", "timeout", "stdbuf",
    "sudo", "docker", "nsys", "torchrun",
];

/// Find the engine entry point in a word list: (engine, index, words used).
/// The entry point must start the list or follow a known wrapper, so a
/// string that merely mentions `vllm serve` is not a launch.
fn find_engine(words: &[Word]) -> Option<(Engine, usize, usize)> {
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

fn module_engine(module: &str) -> Option<Engine> {
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

fn is_external_client(all: &[Word]) -> bool {
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
fn split_program_args(args: &[Word], expr_flags: &[&str]) -> (String, Vec<Word>) {
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

/// pip options that take a value (so the value is not a requirement).
const PIP_VALUE_OPTS: [&str; 22] = [
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--platform",
    "--python-version",
    "--only-binary",
    "--no-binary",
    "--trusted-host",
    "--cache-dir",
    "--progress-bar",
    "--log",
    "--timeout",
    "--retries",
    "--python",
    "--implementation",
    "--abi",
];

type InstallFacts = (InstallTool, Vec<Requirement>, Vec<Flag>);

fn install_of(base: &str, args: &[Word]) -> Option<InstallFacts> {
    let t = |i: usize| args.get(i).map(|w| w.text.as_str()).unwrap_or("");
    let (tool, start) = if matches!(base, "pip" | "pip3") || base.starts_with("pip3.") {
        (InstallTool::Pip, 0)
    } else if base.starts_with("python") && t(0) == "-m" && t(1) == "pip" {
        (InstallTool::PythonPip, 2)
    } else if base == "uv" && t(0) == "pip" {
        (InstallTool::UvPip, 1)
    } else if base == "agentic_pip_install" {
        (InstallTool::LibWrapper, 0)
    } else {
        return None;
    };
    let rest = if tool == InstallTool::LibWrapper {
        &args[start.min(args.len())..]
    } else {
        if t(start) != "install" {
            return None;
        }
        &args[(start + 1).min(args.len())..]
    };
    let mut reqs = Vec::new();
    let mut options = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let w = &rest[i];
        let tx = w.text.as_str();
        let kind_with_value = match tx {
            "-r" | "--requirement" => Some(RequirementKind::RequirementsFile),
            "-c" | "--constraint" => Some(RequirementKind::ConstraintsFile),
            "-e" | "--editable" => Some(RequirementKind::Editable),
            _ => None,
        };
        if let Some(kind) = kind_with_value {
            if let Some(v) = rest.get(i + 1) {
                reqs.push(Requirement {
                    spec: v.text.clone(),
                    name: None,
                    kind,
                    line: v.line,
                });
            }
            i += 2;
            continue;
        }
        if tx.starts_with('-') {
            let (name, value) = match tx.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (tx.to_string(), None),
            };
            let takes = value.is_none() && PIP_VALUE_OPTS.contains(&name.as_str());
            let value_word = if takes {
                rest.get(i + 1).cloned()
            } else {
                value.map(|v| Word {
                    text: v.clone(),
                    raw: v,
                    ..w.clone()
                })
            };
            options.push(Flag {
                name,
                form: if takes {
                    FlagForm::Separate
                } else if value_word.is_some() {
                    FlagForm::Equals
                } else {
                    FlagForm::Bare
                },
                value: value_word,
                line: w.line,
                column: w.column,
            });
            i += if takes { 2 } else { 1 };
            continue;
        }
        reqs.push(classify_requirement(w));
        i += 1;
    }
    Some((tool, reqs, options))
}

fn is_hex40(s: &str) -> bool {
    s.len() == 40 && s.chars().all(|c| c.is_ascii_hexdigit())
}

fn contains_hex40(s: &str) -> bool {
    s.split(|c: char| !c.is_ascii_hexdigit()).any(is_hex40)
}

/// Classify one requirement spec (docs/rules.md L12).
pub(crate) fn classify_requirement(w: &Word) -> Requirement {
    let spec = w.text.trim().to_string();
    let mk = |kind, name: Option<String>| Requirement {
        spec: spec.clone(),
        name,
        kind,
        line: w.line,
    };
    let lower = spec.to_ascii_lowercase();
    if lower.starts_with("git+") || lower.contains(" @ git+") {
        let rev = spec.rsplit_once('@').map(|(_, r)| r).unwrap_or("");
        let rev = rev.split(['#', '&']).next().unwrap_or("");
        let name = spec.split_once(" @ ").map(|(n, _)| n.trim().to_string());
        return mk(
            if is_hex40(rev) {
                RequirementKind::GitCommit
            } else {
                RequirementKind::Unpinned
            },
            name,
        );
    }
    if lower.starts_with("http://") || lower.starts_with("https://") || lower.contains(" @ http") {
        return mk(
            if contains_hex40(&spec) {
                RequirementKind::ArchiveCommit
            } else {
                RequirementKind::Unpinned
            },
            None,
        );
    }
    if spec.starts_with('.')
        || spec.starts_with('/')
        || lower.ends_with(".whl")
        || spec.starts_with('$')
    {
        return mk(RequirementKind::LocalPath, None);
    }
    let name_end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(spec.len());
    let name = spec[..name_end].to_string();
    let rest = spec[name_end..].trim_start();
    // Skip extras: `lm_eval[api]==0.4.12`.
    let rest = match rest.strip_prefix('[') {
        Some(r) => r.split_once(']').map(|(_, r)| r).unwrap_or("").trim_start(),
        None => rest,
    };
    let rest = rest.split(';').next().unwrap_or("").trim();
    let pinned = (rest.starts_with("==") || rest.starts_with("==="))
        && !rest.contains(',')
        && !rest.contains('*')
        && !rest.trim_start_matches('=').trim().is_empty();
    mk(
        if pinned {
            RequirementKind::Pinned
        } else {
            RequirementKind::Unpinned
        },
        (!name.is_empty()).then_some(name),
    )
}

fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\'
            && let Some(&n) = it.peek()
            && matches!(n, '"' | '\\' | '$' | '`' | '\n')
        {
            it.next();
            if n != '\n' {
                out.push(n);
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn unescape_word(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next()
                && n != '\n'
            {
                out.push(n);
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(src: &str) -> ScriptFacts {
        parse_script("t.sh", src.as_bytes()).unwrap()
    }

    #[test]
    fn continued_vllm_command_joins_flags_with_lines() {
        let f = facts(
            "vllm serve \"$MODEL\" \\\n  --tensor-parallel-size=$TP \\\n  --max-num-seqs 512 \\\n  --trust-remote-code &\n",
        );
        assert_eq!(f.servers.len(), 1);
        let s = &f.servers[0];
        assert_eq!(s.engine, Engine::Vllm);
        assert_eq!(s.positionals[0].text, "$MODEL");
        let tp = s.flag("--tensor-parallel-size").unwrap();
        assert_eq!(
            (tp.form, tp.line, tp.value_text()),
            (FlagForm::Equals, 2, Some("$TP"))
        );
        let seqs = s.flag("--max-num-seqs").unwrap();
        assert_eq!(
            (seqs.form, seqs.line, seqs.value_text()),
            (FlagForm::Separate, 3, Some("512"))
        );
        assert_eq!(s.flag("--trust-remote-code").unwrap().form, FlagForm::Bare);
    }

    #[test]
    fn branches_and_exclusivity() {
        let f = facts(
            "if [ \"$CONC\" -le 8 ]; then\n  K=7\nelif [ \"$CONC\" -le 16 ]; then\n  K=3\nelse\n  K=0\nfi\necho $K\n",
        );
        let ks: Vec<&Assignment> = f.assignments.iter().filter(|a| a.name == "K").collect();
        assert_eq!(ks.len(), 3);
        assert_eq!(ks[0].branch[0].kind, ArmKind::If);
        assert_eq!(ks[1].branch[0].kind, ArmKind::Elif);
        assert_eq!(ks[2].branch[0].kind, ArmKind::Else);
        assert_eq!(ks[2].branch[0].preceding.len(), 2);
        assert!(exclusive(&ks[0].branch, &ks[1].branch));
        assert!(!exclusive(&ks[0].branch, &[]));
        assert_eq!(f.candidates("K", 8, &[]).len(), 3);
    }

    #[test]
    fn requirement_kinds() {
        let w = |t: &str| Word {
            raw: t.into(),
            text: t.into(),
            line: 1,
            column: 1,
            vars: vec![],
            quoted: false,
            splat: None,
        };
        assert_eq!(
            classify_requirement(&w("triton==3.7.0")).kind,
            RequirementKind::Pinned
        );
        assert_eq!(
            classify_requirement(&w("lm_eval[api]==0.4.12")).kind,
            RequirementKind::Pinned
        );
        let r = classify_requirement(&w("fastokens>=0.1.1,<0.2.0"));
        assert_eq!(
            (r.kind, r.name.as_deref()),
            (RequirementKind::Unpinned, Some("fastokens"))
        );
        assert_eq!(
            classify_requirement(&w("sentencepiece")).kind,
            RequirementKind::Unpinned
        );
        assert_eq!(
            classify_requirement(&w("git+https://github.com/LMCache/LMCache.git@9229067c0a1b2c3d4e5f60718293a4b5c6d7e8f9")).kind,
            RequirementKind::GitCommit
        );
        assert_eq!(
            classify_requirement(&w("git+https://github.com/x/y.git@main")).kind,
            RequirementKind::Unpinned
        );
        assert_eq!(
            classify_requirement(&w("vllm==0.*")).kind,
            RequirementKind::Unpinned
        );
    }

    #[test]
    fn engine_paths() {
        assert!(is_engine_path(
            "/sgl-workspace/sglang/python/sglang/srt/managers/multi_tokenizer_mixin.py"
        ));
        assert!(is_engine_path(
            "/usr/local/lib/python3.12/dist-packages/vllm/x.py"
        ));
        assert!(is_engine_path("/usr/local/lib/python3.12/vllm/x.py"));
        assert!(!is_engine_path("/workspace/server.log"));
    }
}
