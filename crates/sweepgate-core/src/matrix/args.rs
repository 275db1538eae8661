//! The reference generator's command line (argparse semantics, matrix spec
//! §1): prefixes of long options, last occurrence wins, lists up to the next
//! option, negative numbers as values, exit-2 errors.

use super::MatrixError;

/// The two fixed sequence-length names `--seq-lens` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SeqLen {
    OneKOneK,
    EightKOneK,
}

impl SeqLen {
    pub(crate) fn pair(self) -> (i64, i64) {
        match self {
            SeqLen::OneKOneK => (1024, 1024),
            SeqLen::EightKOneK => (8192, 1024),
        }
    }
}

/// `--scenario-type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScenarioType {
    FixedSeqLen,
    AgenticCoding,
}

/// Options both subcommands take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedOptions {
    pub config_files: Vec<String>,
    pub runner_config: String,
    pub no_evals: bool,
    pub evals_only: bool,
    pub all_evals: bool,
    /// `None` also when given as the empty string.
    pub runner_node_filter: Option<String>,
    pub scenario_type: Option<Vec<ScenarioType>>,
}

impl Default for SharedOptions {
    fn default() -> Self {
        Self {
            config_files: Vec::new(),
            runner_config: "configs/runners.yaml".to_string(),
            no_evals: false,
            evals_only: false,
            all_evals: false,
            runner_node_filter: None,
            scenario_type: None,
        }
    }
}

/// `full-sweep` options (after the node-type defaults are applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullSweepOptions {
    pub model_prefix: Option<Vec<String>>,
    pub precision: Option<Vec<String>>,
    pub framework: Option<Vec<String>>,
    pub runner_type: Option<Vec<String>>,
    pub seq_lens: Option<Vec<SeqLen>>,
    pub step_size: i64,
    pub min_conc: Option<i64>,
    pub max_conc: Option<i64>,
    pub max_tp: Option<i64>,
    pub max_ep: Option<i64>,
    pub single_node: bool,
    pub multi_node: bool,
}

impl Default for FullSweepOptions {
    fn default() -> Self {
        Self {
            model_prefix: None,
            precision: None,
            framework: None,
            runner_type: None,
            seq_lens: None,
            step_size: 2,
            min_conc: None,
            max_conc: None,
            max_tp: None,
            max_ep: None,
            single_node: true,
            multi_node: true,
        }
    }
}

/// `test-config` options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestConfigOptions {
    pub config_keys: Vec<String>,
    pub conc: Option<Vec<i64>>,
    pub seq_lens: Option<Vec<SeqLen>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    FullSweep(FullSweepOptions),
    TestConfig(TestConfigOptions),
}

/// A parsed, checked command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixArgs {
    pub shared: SharedOptions,
    pub command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    One,
    OneInt,
    List,
    ListInt,
    Help,
}

struct Opt {
    name: &'static str,
    kind: Kind,
    choices: &'static [&'static str],
    full_sweep: bool,
    test_config: bool,
}

const SEQ_CHOICES: &[&str] = &["1k1k", "8k1k"];
const SCEN_CHOICES: &[&str] = &["fixed-seq-len", "agentic-coding"];

const fn o(name: &'static str, kind: Kind, fs: bool, tc: bool) -> Opt {
    Opt {
        name,
        kind,
        choices: &[],
        full_sweep: fs,
        test_config: tc,
    }
}

const OPTIONS: &[Opt] = &[
    o("--help", Kind::Help, true, true),
    o("--config-files", Kind::List, true, true),
    o("--runner-config", Kind::One, true, true),
    o("--no-evals", Kind::Flag, true, true),
    o("--evals-only", Kind::Flag, true, true),
    o("--all-evals", Kind::Flag, true, true),
    o("--runner-node-filter", Kind::One, true, true),
    Opt {
        name: "--scenario-type",
        kind: Kind::List,
        choices: SCEN_CHOICES,
        full_sweep: true,
        test_config: true,
    },
    Opt {
        name: "--seq-lens",
        kind: Kind::List,
        choices: SEQ_CHOICES,
        full_sweep: true,
        test_config: true,
    },
    o("--model-prefix", Kind::List, true, false),
    o("--precision", Kind::List, true, false),
    o("--framework", Kind::List, true, false),
    o("--runner-type", Kind::List, true, false),
    o("--step-size", Kind::OneInt, true, false),
    o("--min-conc", Kind::OneInt, true, false),
    o("--max-conc", Kind::OneInt, true, false),
    o("--max-tp", Kind::OneInt, true, false),
    o("--max-ep", Kind::OneInt, true, false),
    o("--single-node", Kind::Flag, true, false),
    o("--multi-node", Kind::Flag, true, false),
    o("--config-keys", Kind::List, false, true),
    o("--conc", Kind::ListInt, false, true),
];

const PROG: &str = "sweepgate matrix";

fn usage(sub: Option<&str>) -> String {
    match sub {
        None => format!("usage: {PROG} [-h] {{full-sweep,test-config}} ..."),
        Some(s) => {
            let mut u = format!("usage: {PROG} {s} [-h]");
            for opt in OPTIONS.iter().skip(1) {
                let ok = if s == "full-sweep" {
                    opt.full_sweep
                } else {
                    opt.test_config
                };
                if !ok {
                    continue;
                }
                let meta = opt
                    .name
                    .trim_start_matches("--")
                    .to_uppercase()
                    .replace('-', "_");
                let part = match opt.kind {
                    Kind::Flag | Kind::Help => format!(" [{}]", opt.name),
                    Kind::One | Kind::OneInt => format!(" [{} {meta}]", opt.name),
                    Kind::List | Kind::ListInt => format!(" [{} {meta} [{meta} ...]]", opt.name),
                };
                u.push_str(&part);
            }
            u
        }
    }
}

fn err(sub: Option<&str>, message: impl Into<String>) -> MatrixError {
    MatrixError::Usage {
        usage: usage(sub),
        message: message.into(),
    }
}

/// argparse treats `-5` and `-.5` as values when no option looks like a number.
fn is_negative_number(s: &str) -> bool {
    let rest = &s[1..];
    if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    match rest.split_once('.') {
        Some((a, b)) => {
            a.bytes().all(|c| c.is_ascii_digit())
                && !b.is_empty()
                && b.bytes().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

fn option_like(s: &str) -> bool {
    s.starts_with('-') && s.len() > 1 && !is_negative_number(s) && !s.contains(' ')
}

/// Python's `int()` on a string: whitespace, sign, digits with single underscores.
fn py_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    if !clean.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i64 = clean.parse().ok()?;
    Some(if neg { -v } else { v })
}

enum Val {
    Flag,
    One(String),
    List(Vec<String>),
}

/// Parses the generator's arguments (without the program name).
pub fn parse_args(args: &[String]) -> Result<MatrixArgs, MatrixError> {
    let Some(first) = args.first() else {
        return Err(err(None, "the following arguments are required: command"));
    };
    if first == "-h" || first == "--help" {
        return Err(MatrixError::Help(usage(None)));
    }
    let sub = match first.as_str() {
        "full-sweep" | "test-config" => first.as_str(),
        other => {
            return Err(err(
                None,
                format!(
                    "argument command: invalid choice: '{other}' (choose from 'full-sweep', 'test-config')"
                ),
            ));
        }
    };
    let fs = sub == "full-sweep";
    let opts: Vec<&Opt> = OPTIONS
        .iter()
        .filter(|o| if fs { o.full_sweep } else { o.test_config })
        .collect();
    let e = |m: String| err(Some(sub), m);

    let mut values: Vec<(&'static str, Val)> = Vec::new();
    let mut extras: Vec<String> = Vec::new();
    let mut i = 1;
    let mut only_positional = false;
    while i < args.len() {
        let tok = &args[i];
        i += 1;
        if only_positional || !option_like(tok) {
            extras.push(tok.clone());
            continue;
        }
        if tok == "--" {
            only_positional = true;
            continue;
        }
        let (name, explicit) = match tok.split_once('=') {
            Some((n, v)) if tok.starts_with("--") => (n, Some(v.to_string())),
            _ => (tok.as_str(), None),
        };
        let opt = if name == "-h" {
            opts.first().copied()
        } else if let Some(o) = opts.iter().find(|o| o.name == name) {
            Some(*o)
        } else if name.starts_with("--") {
            let m: Vec<&&Opt> = opts.iter().filter(|o| o.name.starts_with(name)).collect();
            match m.len() {
                0 => None,
                1 => Some(*m[0]),
                _ => {
                    let names: Vec<&str> = m.iter().map(|o| o.name).collect();
                    return Err(e(format!(
                        "ambiguous option: {name} could match {}",
                        names.join(", ")
                    )));
                }
            }
        } else {
            None
        };
        let Some(opt) = opt else {
            extras.push(tok.clone());
            continue;
        };
        let take_list = |i: &mut usize| -> Vec<String> {
            let mut v = Vec::new();
            while *i < args.len() && !option_like(&args[*i]) {
                v.push(args[*i].clone());
                *i += 1;
            }
            v
        };
        let val = match opt.kind {
            Kind::Help => return Err(MatrixError::Help(usage(Some(sub)))),
            Kind::Flag => {
                if let Some(x) = explicit {
                    return Err(e(format!(
                        "argument {}: ignored explicit argument '{x}'",
                        opt.name
                    )));
                }
                let other = match opt.name {
                    "--no-evals" => Some("--evals-only"),
                    "--evals-only" => Some("--no-evals"),
                    _ => None,
                };
                if let Some(other) = other
                    && values.iter().any(|(n, _)| *n == other)
                {
                    return Err(e(format!(
                        "argument {}: not allowed with argument {other}",
                        opt.name
                    )));
                }
                Val::Flag
            }
            Kind::One | Kind::OneInt => {
                let v = match explicit {
                    Some(x) => x,
                    None if i < args.len() && !option_like(&args[i]) => {
                        i += 1;
                        args[i - 1].clone()
                    }
                    None => return Err(e(format!("argument {}: expected one argument", opt.name))),
                };
                if opt.kind == Kind::OneInt && py_int(&v).is_none() {
                    return Err(e(format!(
                        "argument {}: invalid int value: '{v}'",
                        opt.name
                    )));
                }
                Val::One(v)
            }
            Kind::List | Kind::ListInt => {
                let v = match explicit {
                    Some(x) => vec![x],
                    None => take_list(&mut i),
                };
                if v.is_empty() {
                    return Err(e(format!(
                        "argument {}: expected at least one argument",
                        opt.name
                    )));
                }
                for x in &v {
                    if opt.kind == Kind::ListInt && py_int(x).is_none() {
                        return Err(e(format!(
                            "argument {}: invalid int value: '{x}'",
                            opt.name
                        )));
                    }
                    if !opt.choices.is_empty() && !opt.choices.contains(&x.as_str()) {
                        let choices: Vec<String> =
                            opt.choices.iter().map(|c| format!("'{c}'")).collect();
                        return Err(e(format!(
                            "argument {}: invalid choice: '{x}' (choose from {})",
                            opt.name,
                            choices.join(", ")
                        )));
                    }
                }
                Val::List(v)
            }
        };
        values.push((opt.name, val));
    }
    let required = if fs {
        vec!["--config-files"]
    } else {
        vec!["--config-files", "--config-keys"]
    };
    let missing: Vec<&str> = required
        .into_iter()
        .filter(|r| !values.iter().any(|(n, _)| n == r))
        .collect();
    if !missing.is_empty() {
        return Err(e(format!(
            "the following arguments are required: {}",
            missing.join(", ")
        )));
    }
    if !extras.is_empty() {
        return Err(err(
            None,
            format!("unrecognized arguments: {}", extras.join(" ")),
        ));
    }

    // Last occurrence wins.
    let last = |name: &str| {
        values
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    };
    let flag = |name: &str| last(name).is_some();
    let one = |name: &str| match last(name) {
        Some(Val::One(s)) => Some(s.clone()),
        _ => None,
    };
    let int = |name: &str| one(name).and_then(|s| py_int(&s));
    let list = |name: &str| match last(name) {
        Some(Val::List(v)) => Some(v.clone()),
        _ => None,
    };
    let seq = || {
        list("--seq-lens").map(|v| {
            v.iter()
                .map(|s| {
                    if s == "1k1k" {
                        SeqLen::OneKOneK
                    } else {
                        SeqLen::EightKOneK
                    }
                })
                .collect()
        })
    };
    let shared = SharedOptions {
        config_files: list("--config-files").unwrap_or_default(),
        runner_config: one("--runner-config").unwrap_or_else(|| "configs/runners.yaml".to_string()),
        no_evals: flag("--no-evals"),
        evals_only: flag("--evals-only"),
        all_evals: flag("--all-evals"),
        runner_node_filter: one("--runner-node-filter").filter(|s| !s.is_empty()),
        scenario_type: list("--scenario-type").map(|v| {
            v.iter()
                .map(|s| {
                    if s == "fixed-seq-len" {
                        ScenarioType::FixedSeqLen
                    } else {
                        ScenarioType::AgenticCoding
                    }
                })
                .collect()
        }),
    };
    let command = if fs {
        let (single, multi) = (flag("--single-node"), flag("--multi-node"));
        let o = FullSweepOptions {
            model_prefix: list("--model-prefix"),
            precision: list("--precision"),
            framework: list("--framework"),
            runner_type: list("--runner-type"),
            seq_lens: seq(),
            step_size: int("--step-size").unwrap_or(2),
            min_conc: int("--min-conc"),
            max_conc: int("--max-conc"),
            max_tp: int("--max-tp"),
            max_ep: int("--max-ep"),
            // Neither flag means both (spec §1.3).
            single_node: single || !multi,
            multi_node: multi || !single,
        };
        if o.step_size <= 1 {
            return Err(err(None, "--step-size must be greater than 1"));
        }
        if let (Some(a), Some(b)) = (o.min_conc, o.max_conc)
            && a > b
        {
            return Err(err(
                None,
                "--min-conc must be less than or equal to --max-conc",
            ));
        }
        Command::FullSweep(o)
    } else {
        Command::TestConfig(TestConfigOptions {
            config_keys: list("--config-keys").unwrap_or_default(),
            conc: list("--conc").map(|v| v.iter().filter_map(|s| py_int(s)).collect()),
            seq_lens: seq(),
        })
    };
    if shared.no_evals && shared.all_evals {
        return Err(err(None, "--all-evals cannot be combined with --no-evals"));
    }
    Ok(MatrixArgs { shared, command })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<MatrixArgs, MatrixError> {
        parse_args(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    fn code(s: &str) -> i32 {
        match p(s) {
            Ok(_) => 0,
            Err(e) => e.exit_code(),
        }
    }

    #[test]
    fn argparse_rules() {
        let a =
            p("full-sweep --config-files a b --max-c -5 --min-conc -7 --config-files c").unwrap();
        assert_eq!(a.shared.config_files, vec!["c"]);
        let Command::FullSweep(o) = a.command else {
            panic!()
        };
        assert_eq!((o.max_conc, o.min_conc), (Some(-5), Some(-7)));
        assert!(o.single_node && o.multi_node);
        let Command::FullSweep(o) = p("full-sweep --config-files a --multi-node")
            .unwrap()
            .command
        else {
            panic!()
        };
        assert!(!o.single_node && o.multi_node);
        assert_eq!(code("--config-files a full-sweep"), 2);
        assert_eq!(code("full-sweep --config-files a --m 3"), 2); // ambiguous
        assert_eq!(code("full-sweep --config-files a --step-size 1"), 2);
        assert_eq!(
            code("full-sweep --config-files a --min-conc 5 --max-conc 4"),
            2
        );
        assert_eq!(
            code("full-sweep --config-files a --no-evals --evals-only"),
            2
        );
        assert_eq!(
            code("full-sweep --config-files a --no-evals --all-evals"),
            2
        );
        assert_eq!(
            code("full-sweep --config-files a --evals-only --all-evals"),
            0
        );
        assert_eq!(
            code("test-config --config-files a --config-keys k --step-size 3"),
            2
        );
        assert_eq!(code("test-config --config-files a"), 2);
        assert_eq!(code("full-sweep --config-files a --seq-lens 2k1k"), 2);
        assert_eq!(code("full-sweep --config-files a --step-size x"), 2);
        assert_eq!(code("full-sweep --config-files a -h"), 0);
        assert_eq!(code("full-sweep --no-evals stray --config-files a"), 2);
        let a = p("full-sweep --config-files a --runner-node-filter=").unwrap();
        assert_eq!(a.shared.runner_node_filter, None);
    }
}
