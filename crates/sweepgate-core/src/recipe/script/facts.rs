//! The facts a script yields: words, arms, launches and their flags,
//! client calls, environment, assignments, installs, rewrites, heredocs.

use std::collections::HashSet;

use super::MAX_SPLAT_DEPTH;
use super::args::{flaglike_vars, parse_args, split_scalar};
use crate::recipe::Loc;

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

    #[cfg(feature = "fuzzing")]
    /// Every variable named by `check_env_vars`.
    pub(crate) fn required_vars(&self) -> std::collections::BTreeSet<&str> {
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
