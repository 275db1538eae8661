//! Splitting a command's words into flags and values, expanding the
//! variables that hold flag lists.

use std::collections::HashSet;

use super::facts::{AssignedValue, Assignment, Flag, FlagForm, Splat, SplatKind, Word};

pub(super) fn flaglike_vars(assignments: &[Assignment]) -> HashSet<String> {
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
pub(super) fn is_args_name(name: &str) -> bool {
    ["_ARGS", "_FLAGS", "_OPTS", "_OPTIONS", "_CMD", "_ARGV"]
        .iter()
        .any(|s| name.ends_with(s))
        || name == "ARGS"
}

/// Split an unquoted scalar value into words (`"--context-length $LEN"`).
pub(super) fn split_scalar(w: &Word) -> Vec<Word> {
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
pub(super) fn whole_expansion_name(t: &str) -> Option<String> {
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
pub(super) fn vars_in_text(t: &str) -> Vec<String> {
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

pub(super) struct ParsedArgs {
    pub(super) flags: Vec<Flag>,
    pub(super) positionals: Vec<Word>,
    pub(super) splats: Vec<Splat>,
}

/// Split words into flags (`--f=v`, `--f v`, `--f`), positionals and splats.
pub(super) fn parse_args(words: &[Word], flaglike: &HashSet<String>) -> ParsedArgs {
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
