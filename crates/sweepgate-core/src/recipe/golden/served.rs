//! What a launch actually serves, for the golden-AL rules (`docs/rules.md`
//! §1.3–§1.4): draft method, draft length K, DSpark draft sampling, draft
//! head, thinking mode and the simulated-acceptance encodings, read from a
//! benchmark script (shell variables resolved, escaped JSON in a variable
//! included), an srt recipe and the master config's `additional-settings`.
//!
//! One reading serves Check 11 and lints L19/L27, so the verdict and the
//! lint judge a launch alike. The key's `spec-decoding` field does not
//! decide the curve: the launch does.

use std::sync::LazyLock;

use regex::Regex;

use super::curve::{DraftMethod, DraftSampling, ThinkingMode};
use super::decode::{
    self, Decoded, Injector, ThinkingConflict, VllmSpecConfig, resolve_thinking, thinking_signal,
};
use super::lookup::{GoldenSet, Lookup, Query};
use crate::recipe::script::{Arm, ScriptFacts, exclusive};
use crate::recipe::srt::SrtRecipe;

/// One setting as the launch sees it, variables substituted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    /// Flag without dashes, env or YAML key (`speculative-config`,
    /// `SGLANG_SIMULATE_ACC_LEN`, `max_draft_len`).
    pub name: String,
    pub value: String,
    pub file: String,
    pub line: usize,
    /// The shell arms it sits in (empty: top level, recipes, settings).
    pub branch: Vec<Arm>,
}

/// A simulated-acceptance encoding and where it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Encoding {
    pub decoded: Decoded,
    pub file: String,
    pub line: usize,
    pub branch: Vec<Arm>,
}

/// A draft length and where it is set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DraftLength {
    pub k: u32,
    pub file: String,
    pub line: usize,
    pub branch: Vec<Arm>,
}

/// What one key's launch serves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Served {
    pub method: DraftMethod,
    /// Distinct non-zero draft lengths (K=0 arms switch speculation off).
    pub ks: Vec<DraftLength>,
    pub sampling: Option<DraftSampling>,
    pub draft_model: Option<String>,
    pub thinking: Result<ThinkingMode, ThinkingConflict>,
    pub encodings: Vec<Encoding>,
    /// Speculative configs that could not be read (built at run time):
    /// the launch may simulate acceptance without sweepgate seeing it.
    pub unreadable: Vec<(String, usize)>,
}

static VAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-|##\*/|%%*/\*)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)",
    )
    .expect("literal regex")
});

/// At most this many values per setting after substitution (arms multiply).
const MAX_VALUES: usize = 8;

/// A substituted value, the arms its assignments add, and the line of the
/// assignment that supplied it whole.
type Sub = (String, Vec<Arm>, Option<usize>);

/// Substitutes `$NAME`, `${NAME}`, `${NAME:-default}` and `${NAME##*/}` by
/// every assignment of NAME that can be in effect in `branch` (recursively,
/// a few levels), and evaluates `$(printf 'FMT' ARGS…)`. Each value comes
/// with the arms its chosen assignments add, so values set together in one
/// arm stay together (K=7 with AL 3.84, never K=7 with the other arm's AL).
/// Unresolvable expansions stay as written.
fn substitute(f: &ScriptFacts, text: &str, branch: &[Arm], depth: usize) -> Vec<Sub> {
    if depth > 4 {
        return vec![(text.to_owned(), branch.to_vec(), None)];
    }
    if let Some(out) = printf(f, text, branch, depth) {
        return out;
    }
    let Some(c) = VAR.captures(text) else {
        return vec![(text.to_owned(), branch.to_vec(), None)];
    };
    let Some(m) = c.get(0) else {
        return vec![(text.to_owned(), branch.to_vec(), None)];
    };
    let name = c.get(1).or_else(|| c.get(4)).map_or("", |n| n.as_str());
    let op = c.get(2).map(|o| o.as_str());
    let default = c.get(3).map(|d| d.as_str());
    let mut values: Vec<Sub> = Vec::new();
    for a in f
        .assignments
        .iter()
        .filter(|a| a.name == name && !a.append && !exclusive(&a.branch, branch))
    {
        let mut arms = branch.to_vec();
        arms.extend(a.branch.iter().filter(|x| !branch.contains(x)).cloned());
        for (v, arms, origin) in substitute(f, &a.value_text(), &arms, depth + 1) {
            // `NAME="${NAME:-x}"`: the default is the value here.
            let v = if v.contains(&format!("${{{name}")) {
                match default_of(&v) {
                    Some(d) => d,
                    None => continue,
                }
            } else {
                v
            };
            if !values.iter().any(|(x, b, _)| *x == v && *b == arms) {
                values.push((v, arms, origin.or(Some(a.line))));
            }
        }
    }
    if values.is_empty()
        && let (Some(":-" | "-"), Some(d)) = (op, default)
    {
        values.push((d.to_owned(), branch.to_vec(), None));
    }
    let rest = &text[m.end()..];
    let head = &text[..m.start()];
    if values.is_empty() {
        // Unresolved: keep the expansion, substitute the rest.
        return substitute(f, rest, branch, depth)
            .into_iter()
            .map(|(r, b, o)| (format!("{head}{}{r}", m.as_str()), b, o))
            .take(MAX_VALUES)
            .collect();
    }
    let mut out = Vec::new();
    // The value's line is its assignment's when the text is that variable
    // alone (`--speculative-config "$SPEC_CONFIG"`): where it is written.
    let whole = head.trim().is_empty() && rest.trim().is_empty();
    for (v, arms, origin) in values {
        let v = match op {
            Some("##*/") => v.rsplit('/').next().unwrap_or(&v).to_owned(),
            _ => v,
        };
        for (r, b, o) in substitute(f, rest, &arms, depth) {
            out.push((format!("{head}{v}{r}"), b, if whole { origin } else { o }));
            if out.len() >= MAX_VALUES {
                return out;
            }
        }
    }
    out
}

/// Shell words of `printf`'s arguments: quotes removed, backslash-newlines
/// dropped.
fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' if it.peek() == Some(&'\n') => {
                it.next();
            }
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                for d in it.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    w.push(d);
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                while let Some(d) = it.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = it.next() {
                                w.push(e);
                            }
                        }
                        _ => w.push(d),
                    }
                }
            }
            c if c.is_whitespace() => {
                if let Some(w) = cur.take() {
                    out.push(w);
                }
            }
            c => cur.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(cur);
    out
}

/// `$(printf 'FMT' ARGS…)` with `%s`, `%d`, `%.Nf` (the way scripts build a
/// speculative-config JSON), arguments substituted first.
fn printf(f: &ScriptFacts, text: &str, branch: &[Arm], depth: usize) -> Option<Vec<Sub>> {
    let inner = text.trim().strip_prefix("$(")?.strip_suffix(')')?;
    let words = shell_words(inner);
    let (cmd, rest) = words.split_first()?;
    let (fmt, args) = rest.split_first()?;
    if cmd != "printf" {
        return None;
    }
    // Arguments joined so their arms correlate, then split again.
    let joined = args.join("\u{1f}");
    let mut out = Vec::new();
    for (a, arms, _) in substitute(f, &joined, branch, depth + 1) {
        let args: Vec<&str> = a.split('\u{1f}').collect();
        let mut res = String::new();
        let mut it = fmt.chars().peekable();
        let mut next = 0usize;
        while let Some(c) = it.next() {
            if c != '%' {
                res.push(c);
                continue;
            }
            let mut spec = String::new();
            while let Some(&d) = it.peek() {
                it.next();
                if d.is_ascii_alphabetic() || d == '%' {
                    spec.push(d);
                    break;
                }
                spec.push(d);
            }
            let arg = args.get(next).copied().unwrap_or("");
            match spec.chars().last() {
                Some('%') => res.push('%'),
                Some('f') => {
                    next += 1;
                    let prec: usize = spec
                        .split_once('.')
                        .and_then(|(_, p)| p.trim_end_matches('f').parse().ok())
                        .unwrap_or(6);
                    match arg.parse::<f64>() {
                        Ok(x) => res.push_str(&format!("{x:.prec$}")),
                        Err(_) => res.push_str(arg),
                    }
                }
                _ => {
                    next += 1;
                    res.push_str(arg);
                }
            }
        }
        out.push((res, arms, None));
    }
    Some(out)
}

/// `${NAME:-x}` → `x`.
fn default_of(v: &str) -> Option<String> {
    let c = VAR.captures(v)?;
    match c.get(2).map(|o| o.as_str()) {
        Some(":-" | "-") => c.get(3).map(|d| d.as_str().to_owned()),
        _ => None,
    }
}

/// Names of heredoc/YAML keys read from the script text (TRT-LLM's
/// `extra_llm_api_options` file is often written by a heredoc).
const TEXT_KEYS: [&str; 5] = [
    "max_draft_len",
    "decoding_type",
    "speculative_model",
    "speculative_model_dir",
    "draft_sample_method",
];

/// Launch flags also read from the text (see [`script_settings`]).
const TEXT_FLAGS: [&str; 5] = [
    "speculative-num-steps",
    "speculative-algorithm",
    "speculative-dspark-block-size",
    "num-speculative-tokens",
    "speculative-draft-model-path",
];

/// Every setting of a script: server flags (through variables and arrays),
/// environment, assignments and the heredoc keys above.
pub(crate) fn script_settings(f: &ScriptFacts, text: &str) -> Vec<Setting> {
    let mut raw: Vec<(String, String, usize, Vec<Arm>)> = Vec::new();
    for srv in &f.servers {
        for rf in f.resolved_server_flags(srv) {
            if let Some(v) = rf.flag.value_text() {
                let mut branch = srv.branch.clone();
                branch.extend(rf.branch.iter().cloned());
                raw.push((rf.flag.key().to_owned(), v.to_owned(), rf.flag.line, branch));
            }
        }
        for e in &srv.prefix_env {
            if let Some(w) = &e.value {
                raw.push((e.name.clone(), w.text.clone(), e.line, e.branch.clone()));
            }
        }
    }
    for e in &f.env {
        if let Some(w) = &e.value {
            raw.push((e.name.clone(), w.text.clone(), e.line, e.branch.clone()));
        }
    }
    for a in &f.assignments {
        raw.push((a.name.clone(), a.value_text(), a.line, a.branch.clone()));
    }
    for (i, l) in text.lines().enumerate() {
        let t = l.trim_start();
        if t.starts_with('#') {
            continue;
        }
        // Flags of a launch the script model does not recognise as a
        // server (`"$SGLANG_PYTHON" -m sglang.launch_server` in an array).
        for flag in TEXT_FLAGS {
            let Some(rest) = t.strip_prefix("--").and_then(|r| r.strip_prefix(flag)) else {
                continue;
            };
            let v = rest.strip_prefix('=').unwrap_or(rest);
            if !(rest.starts_with('=') || rest.starts_with(' ')) {
                continue;
            }
            let v = v.trim().trim_end_matches('\\').trim();
            let v = v.split_whitespace().next().unwrap_or("");
            if !v.is_empty()
                && !raw
                    .iter()
                    .any(|(n, _, line, _)| n == flag && *line == i + 1)
            {
                raw.push(((*flag).to_owned(), unquote(v).to_owned(), i + 1, Vec::new()));
            }
        }
        for key in TEXT_KEYS {
            if let Some(v) = t
                .strip_prefix(key)
                .and_then(|r| r.trim_start().strip_prefix(':'))
            {
                let v = v.split(" #").next().unwrap_or(v).trim();
                if !v.is_empty() {
                    raw.push((key.to_owned(), unquote(v).to_owned(), i + 1, Vec::new()));
                }
            }
        }
    }
    let mut out: Vec<Setting> = Vec::new();
    for (name, value, line, branch) in raw {
        for (v, branch, origin) in substitute(f, &value, &branch, 0) {
            let s = Setting {
                name: name.clone(),
                value: v,
                file: f.path.clone(),
                line: origin.unwrap_or(line),
                branch,
            };
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// The serving role's settings of a recipe (decode, else aggregated; the
/// prefill role can differ and does not decide K or AL). Nested keys
/// (`speculative_config.max_draft_len`) are also given by their last part.
/// Settings the roles do not hold (a role's engine arguments under
/// `sglang_config:` in a schema-2 recipe) come from the rest of the
/// document, prefill blocks and sweep overrides left out.
pub(crate) fn recipe_settings(r: &SrtRecipe) -> Vec<Setting> {
    let mut out: Vec<Setting> = r
        .serving_role()
        .map(|role| role_settings(r, role))
        .unwrap_or_default();
    let rest: Vec<Setting> = flatten(r, &|k: &str| {
        k.contains("prefill") || k.starts_with("override") || k.starts_with("zip_override")
    });
    for s in rest {
        if !out.iter().any(|o| o.name == s.name) {
            out.push(s);
        }
    }
    out
}

/// Every leaf of the recipe by its own key, subtrees whose key `skip`s left out.
fn flatten(r: &SrtRecipe, skip: &dyn Fn(&str) -> bool) -> Vec<Setting> {
    fn walk(
        n: &crate::recipe::srt::YamlNode,
        file: &str,
        depth: usize,
        skip: &dyn Fn(&str) -> bool,
        out: &mut Vec<Setting>,
    ) {
        for (k, v) in n.entries() {
            if skip(&k.value) {
                continue;
            }
            if matches!(v.value, crate::recipe::srt::Yaml::Map(_)) {
                if depth < 16 {
                    walk(v, file, depth + 1, skip, out);
                }
            } else {
                out.push(Setting {
                    name: k.value.clone(),
                    value: v.text(),
                    file: file.to_owned(),
                    line: k.line,
                    branch: Vec::new(),
                });
            }
        }
    }
    let mut out = Vec::new();
    walk(&r.root, &r.path, 0, skip, &mut out);
    out
}

/// Every setting anywhere in a recipe, by its own key (knobs that matter on
/// any worker, in either recipe schema, override variants included).
pub(crate) fn recipe_settings_all_roles(r: &SrtRecipe) -> Vec<Setting> {
    flatten(r, &|_| false)
}

fn role_settings(r: &SrtRecipe, role: &crate::recipe::srt::RoleFacts) -> Vec<Setting> {
    let mut out = Vec::new();
    for s in role.env.iter().chain(role.args.iter()) {
        let value = s.text();
        let mut names = vec![s.key.clone()];
        if let Some((_, last)) = s.key.rsplit_once('.') {
            names.push(last.to_owned());
        }
        for name in names {
            out.push(Setting {
                name,
                value: value.clone(),
                file: r.path.clone(),
                line: s.line,
                branch: Vec::new(),
            });
        }
    }
    out
}

/// A knob that re-quantises the draft head (`docs/rules.md` §2 Check 13,
/// §3 L24), found the same way for the verdict and the lint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DraftOverride {
    pub file: String,
    pub line: usize,
    /// `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1`, `speculative-draft-model-quantization=fp8`, …
    pub knob: String,
}

/// Draft-precision overrides among a launch's settings: the NEXTN env set
/// truthy, `speculative-draft-model-quantization`, or a `quantization` key
/// in a vLLM speculative config. Kernel selectors are not overrides.
pub(crate) fn draft_overrides(settings: &[Setting]) -> Vec<DraftOverride> {
    let truthy = |v: &str| {
        matches!(
            unquote(v).to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    };
    let mut out = Vec::new();
    for s in settings {
        let knob = match s.name.as_str() {
            "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE" if truthy(&s.value) => {
                Some(format!("{}={}", s.name, unquote(&s.value)))
            }
            "speculative-draft-model-quantization" | "speculative_draft_model_quantization" => {
                Some(format!("{}={}", s.name, unquote(&s.value)))
            }
            "speculative-config" | "speculative_config" => {
                serde_json::from_str::<serde_json::Value>(unquote(&s.value))
                    .ok()
                    .and_then(|j| {
                        j.get("quantization")
                            .map(|q| format!("{} quantization={q}", s.name))
                    })
            }
            _ => None,
        };
        if let Some(knob) = knob {
            let o = DraftOverride {
                file: s.file.clone(),
                line: s.line,
                knob,
            };
            if !out.contains(&o) {
                out.push(o);
            }
        }
    }
    out
}

/// `KEY=VALUE` items of a master entry's `additional-settings`.
pub(crate) fn master_settings(file: &str, items: &[(String, usize)]) -> Vec<Setting> {
    items
        .iter()
        .filter_map(|(t, line)| {
            let (k, v) = t.split_once('=')?;
            Some(Setting {
                name: k.trim().to_owned(),
                value: v.trim().trim_matches('"').to_owned(),
                file: file.to_owned(),
                line: *line,
                branch: Vec::new(),
            })
        })
        .collect()
}

fn values<'a>(settings: &'a [Setting], names: &[&str]) -> Vec<&'a Setting> {
    settings
        .iter()
        .filter(|s| names.contains(&s.name.as_str()))
        .collect()
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['\'', '"'] {
        if let Some(inner) = v.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.trim();
        }
    }
    v
}

/// Reads what a key's launch serves from all its settings: scripts,
/// recipes (serving role) and the master entry's `additional-settings`
/// (`master` marks the latter, for the runner-injected encoding).
pub(crate) fn served(
    settings: &[Setting],
    master: &[Setting],
    framework: &str,
    injectors: &[Injector],
) -> Served {
    let mut specs: Vec<(&Setting, VllmSpecConfig)> = Vec::new();
    let mut unreadable = Vec::new();
    for s in values(settings, &["speculative-config", "speculative_config"]) {
        match VllmSpecConfig::parse(&s.value) {
            Ok(j) => specs.push((s, j)),
            // A nested YAML mapping (TRT `speculative_config:`) is no JSON.
            Err(_)
                if s.value.trim().is_empty()
                    || s.value.trim_start().starts_with('{')
                    || s.value.contains('$') =>
            {
                unreadable.push((s.file.clone(), s.line));
            }
            Err(_) => {}
        }
    }
    let first = |names: &[&str]| {
        values(settings, names)
            .into_iter()
            .map(|s| unquote(&s.value).to_owned())
            .find(|v| !v.contains('$') && !v.is_empty())
    };
    let method = specs
        .iter()
        .find_map(|(_, j)| j.method.as_deref().map(DraftMethod::parse))
        .or_else(|| {
            first(&[
                "speculative-algorithm",
                "speculative-algo",
                "decoding_type",
                "method",
            ])
            .map(|m| DraftMethod::parse(&m))
        })
        .unwrap_or(DraftMethod::Mtp);
    let draft_model = first(&[
        "speculative-draft-model-path",
        "speculative-draft-model",
        "speculative_model",
        "speculative_model_dir",
    ])
    .or_else(|| specs.iter().find_map(|(_, j)| j.model.clone()));
    // SGLang runs a checkpoint's native MTP head as EAGLE (or NEXTN)
    // without a separate draft model.
    let method = match method {
        DraftMethod::Eagle if draft_model.is_none() && specs.is_empty() => DraftMethod::Mtp,
        m => m,
    };
    let mut ks: Vec<DraftLength> = Vec::new();
    let push_k = |ks: &mut Vec<DraftLength>, v: &str, s: &Setting| {
        if let Ok(k) = unquote(v).parse::<u32>()
            && k > 0
            && !ks
                .iter()
                .any(|x| x.k == k && x.branch == s.branch && x.file == s.file)
        {
            ks.push(DraftLength {
                k,
                file: s.file.clone(),
                line: s.line,
                branch: s.branch.clone(),
            });
        }
    };
    let block = values(settings, &["speculative-dspark-block-size"]);
    if method == DraftMethod::DSpark && !block.is_empty() {
        for s in block {
            push_k(&mut ks, &s.value, s);
        }
    } else {
        for (s, j) in &specs {
            if let Some(k) = j.k {
                push_k(&mut ks, &k.to_string(), s);
            }
        }
        for s in values(
            settings,
            &[
                "speculative-num-steps",
                "num-speculative-tokens",
                "num_speculative_tokens",
                "max_draft_len",
            ],
        ) {
            push_k(&mut ks, &s.value, s);
        }
        if ks.is_empty() {
            for s in values(
                settings,
                &["speculative-dspark-block-size", "NUM_SPEC_TOKENS"],
            )
            .into_iter()
            .chain(values(master, &["NUM_SPEC_TOKENS"]))
            {
                push_k(&mut ks, &s.value, s);
            }
        }
    }
    let sampling = first(&["draft_sample_method", "draft-sample-method"])
        .and_then(|v| DraftSampling::parse(&v))
        .or_else(|| specs.iter().find_map(|(_, j)| j.sampling()));
    let signals = values(
        settings,
        &[
            "default-chat-template-kwargs",
            "DYN_DEFAULT_THINKING_MODE",
            "dyn-default-thinking-mode",
            "THINKING_MODE",
            "SGLANG_ENABLE_THINKING",
            "AIPERF_EXTRA_INPUTS",
        ],
    )
    .into_iter()
    .chain(values(master, &["THINKING_MODE"]))
    .filter_map(|s| thinking_signal(&s.name, &s.value))
    .collect::<Vec<_>>();
    let thinking = resolve_thinking(signals);

    let mut encodings: Vec<Encoding> = Vec::new();
    let items: Vec<String> = master
        .iter()
        .map(|s| format!("{}={}", s.name, s.value))
        .collect();
    let injected = decode::runner_injected(framework, items.iter().map(String::as_str), injectors);
    if injected != Decoded::NotSimulated {
        let at = master
            .iter()
            .find(|s| s.name.starts_with("SYNTHETIC_ACCEPTANCE"))
            .or(master.first());
        encodings.push(Encoding {
            decoded: injected,
            file: at.map_or_else(String::new, |s| s.file.clone()),
            line: at.map_or(1, |s| s.line),
            branch: Vec::new(),
        });
    }
    // SGLang: the LEN setting with the METHOD/TOKEN_MODE of its environment.
    for len in values(settings, &["SGLANG_SIMULATE_ACC_LEN"]) {
        let env: Vec<(&str, &str)> = values(
            settings,
            &[
                "SGLANG_SIMULATE_ACC_METHOD",
                "SGLANG_SIMULATE_ACC_TOKEN_MODE",
            ],
        )
        .into_iter()
        .filter(|s| s.file == len.file && !exclusive(&s.branch, &len.branch))
        .map(|s| (s.name.as_str(), s.value.as_str()))
        .chain(std::iter::once((len.name.as_str(), len.value.as_str())))
        .collect();
        encodings.push(Encoding {
            decoded: decode::sglang_env(env),
            file: len.file.clone(),
            line: len.line,
            branch: len.branch.clone(),
        });
    }
    for (s, j) in &specs {
        let d = j.decoded();
        if d != Decoded::NotSimulated {
            encodings.push(Encoding {
                decoded: d,
                file: s.file.clone(),
                line: s.line,
                branch: s.branch.clone(),
            });
        }
    }
    for s in values(settings, &["TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"]) {
        encodings.push(Encoding {
            decoded: decode::trtllm_env(&s.value),
            file: s.file.clone(),
            line: s.line,
            branch: s.branch.clone(),
        });
    }
    let lens = values(settings, &["spec-decode-acceptance-length"]);
    let rates = values(settings, &["spec-decode-acceptance-rate"]);
    for s in lens.iter().chain(rates.iter()) {
        let is_len = s.name == "spec-decode-acceptance-length";
        let mut cands: Vec<u32> = ks
            .iter()
            .filter(|k| k.line <= s.line.max(k.line) && !exclusive(&k.branch, &s.branch))
            .map(|k| k.k)
            .collect();
        cands.sort_unstable();
        cands.dedup();
        let k = match cands.as_slice() {
            [one] => Some(*one),
            _ => None,
        };
        let d = if is_len {
            decode::atom_args(Some(&s.value), None, k)
        } else {
            decode::atom_args(None, Some(&s.value), k)
        };
        encodings.push(Encoding {
            decoded: d,
            file: s.file.clone(),
            line: s.line,
            branch: s.branch.clone(),
        });
    }
    encodings.dedup();
    Served {
        method,
        ks,
        sampling,
        draft_model,
        thinking,
        encodings,
        unreadable,
    }
}

/// The judgement of one encoding against the golden curve.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Judged {
    /// The pinned AL is the golden value.
    Match { k: u32, al: f64, golden: String },
    /// The runner injects the golden value itself.
    FromGolden {
        k: u32,
        golden: String,
        framework: String,
    },
    Mismatch {
        k: u32,
        written: f64,
        golden_al: f64,
        curve: String,
        curve_file: String,
        curve_line: usize,
        mode: ThinkingMode,
    },
    /// No golden value applies (user-facing reason).
    NoGolden(String),
    /// The encoding cannot be read as a number or is incomplete.
    Problem(String),
    /// Unresolved shell expansions: the value is not known statically.
    Unresolved(String),
    /// No K the encoding can pair with.
    NoK,
    /// Several Ks could apply to this encoding.
    Ambiguous(Vec<u32>),
}

/// One judged encoding, with where it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judgement {
    pub judged: Judged,
    pub file: String,
    pub line: usize,
}

/// Judges every encoding of a launch against the golden curves of `prefix`.
/// The thinking mode must be resolved by the caller (a conflict is a
/// question for a person).
pub(crate) fn judge(
    s: &Served,
    prefix: &str,
    mode: ThinkingMode,
    set: &GoldenSet,
) -> Vec<Judgement> {
    let mut out = Vec::new();
    for e in &s.encodings {
        let j = |judged| Judgement {
            judged,
            file: e.file.clone(),
            line: e.line,
        };
        let sim = match &e.decoded {
            Decoded::NotSimulated => continue,
            Decoded::Invalid(decode::EncodingProblem::AtomRateWithoutK) => {
                out.push(j(Judged::NoK));
                continue;
            }
            Decoded::Invalid(p) => {
                let text = p.to_string();
                out.push(j(if text.contains('$') {
                    Judged::Unresolved(text)
                } else {
                    Judged::Problem(text)
                }));
                continue;
            }
            Decoded::Simulated(sim) => Some(sim),
            Decoded::FromGolden { .. } => None,
        };
        if let Some(p) = sim.and_then(|x| x.problems.first()) {
            out.push(j(Judged::Problem(p.to_string())));
            continue;
        }
        // K: the encoding's own (vLLM JSON), else the Ks of the same file
        // that can run together with it; an injected length (master
        // settings) meets every recipe's K, each recipe being a launch.
        let own = sim.and_then(|x| x.k).filter(|k| *k > 0);
        let pairable = |k: &&DraftLength| !exclusive(&k.branch, &e.branch);
        let mut same: Vec<u32> =
            s.ks.iter()
                .filter(pairable)
                .filter(|k| k.file == e.file)
                .map(|k| k.k)
                .collect();
        let mut other: Vec<u32> = s.ks.iter().filter(pairable).map(|k| k.k).collect();
        same.sort_unstable();
        same.dedup();
        other.sort_unstable();
        other.dedup();
        let injected = matches!(&e.decoded, Decoded::FromGolden { .. })
            || matches!(sim, Some(x) if x.engine == decode::Engine::Injector);
        let ks: Vec<u32> = match (own, same.as_slice(), other.as_slice()) {
            (Some(k), _, _) => vec![k],
            (None, [one], _) => vec![*one],
            (None, [], all) if injected && !all.is_empty() => all.to_vec(),
            (None, [], [one]) => vec![*one],
            (None, [], []) => {
                out.push(j(Judged::NoK));
                continue;
            }
            (None, [], many) | (None, many, _) => {
                out.push(j(Judged::Ambiguous(many.to_vec())));
                continue;
            }
        };
        for k in ks {
            let q = Query {
                prefix,
                method: s.method.clone(),
                sampling: s.sampling,
                draft_model: s.draft_model.as_deref(),
                mode,
                k,
            };
            let (curve, cell) = match set.lookup(&q) {
                Lookup::Found { curve, cell } => (curve, cell),
                Lookup::NoCurve(n) => {
                    out.push(j(Judged::NoGolden(n.to_string())));
                    continue;
                }
                Lookup::NoCell { curve, missing } => {
                    out.push(j(Judged::NoGolden(format!(
                        "{} has {missing}",
                        curve.name()
                    ))));
                    continue;
                }
            };
            let golden = format!("{}@{mode}/K={k}={:.2}", curve.name(), cell.al);
            // A launch that does not say its DSpark draft sampling (ATOM's
            // `--method dspark`) may run either curve: a value that is one
            // of them is not a contradiction.
            if let Some(sim) = sim
                && !sim.matches(cell.al)
                && s.sampling.is_none()
                && let Some((c, al)) = [DraftSampling::Greedy, DraftSampling::Probabilistic]
                    .into_iter()
                    .find_map(|w| {
                        match set.lookup(&Query {
                            sampling: Some(w),
                            ..q.clone()
                        }) {
                            Lookup::Found { curve, cell } if sim.matches(cell.al) => {
                                Some((curve, cell.al))
                            }
                            _ => None,
                        }
                    })
            {
                out.push(j(Judged::Match {
                    k,
                    al: sim.al,
                    golden: format!("{}@{mode}/K={k}={al:.2}", c.name()),
                }));
                continue;
            }
            match (sim, &e.decoded) {
                (Some(sim), _) if sim.matches(cell.al) => out.push(j(Judged::Match {
                    k,
                    al: sim.al,
                    golden,
                })),
                (Some(sim), _) => out.push(j(Judged::Mismatch {
                    k,
                    written: sim.written,
                    golden_al: cell.al,
                    curve: curve.name().to_owned(),
                    curve_file: curve.file.clone(),
                    curve_line: cell.line,
                    mode,
                })),
                (None, Decoded::FromGolden { framework, .. }) => out.push(j(Judged::FromGolden {
                    k,
                    golden,
                    framework: framework.clone(),
                })),
                (None, _) => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::script::parse_script;

    /// The escaped-JSON `SPEC_CONFIG` of
    /// `benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh` (history
    /// commit `5f3e12f49`, #2621, line 258), set in one arm of an `if`.
    const ESCAPED: &str = r#"#!/usr/bin/env bash
NUM_SPEC_TOKENS=3
if [ "${EVAL_ONLY:-false}" != "true" ]; then
    SPEC_CONFIG="{\"method\": \"mtp\", \"num_speculative_tokens\": $NUM_SPEC_TOKENS, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\": 2.49}"
else
    SPEC_CONFIG="{\"method\": \"mtp\", \"num_speculative_tokens\": $NUM_SPEC_TOKENS}"
fi
vllm serve "$MODEL" --speculative-config "$SPEC_CONFIG" --port "$PORT"
"#;

    #[test]
    fn escaped_json_in_a_variable_is_read() {
        let f = parse_script("a/dsv4_mtp.sh", ESCAPED.as_bytes()).unwrap();
        let st = script_settings(&f, ESCAPED);
        let s = served(&st, &[], "vllm", &[]);
        assert_eq!(s.method, DraftMethod::Mtp);
        assert!(s.ks.iter().all(|k| k.k == 3), "{:?}", s.ks);
        assert_eq!(s.encodings.len(), 1, "{:?}", s.encodings);
        let Decoded::Simulated(sim) = &s.encodings[0].decoded else {
            panic!("{:?}", s.encodings[0])
        };
        assert_eq!((sim.al, sim.k, sim.problems.len()), (2.49, Some(3), 0));
        assert_eq!(s.encodings[0].line, 4);
    }

    #[test]
    fn variables_defaults_and_basenames_resolve() {
        let text = "DRAFT_MODEL=\"Inferact/MiniMax-M3-EAGLE3-GQA\"\nDRAFT_MODEL_PATH=\"/data/models/${DRAFT_MODEL##*/}\"\nK=\"${K:-4}\"\ncat > x.yml <<EOF\nspeculative_config:\n    decoding_type: Eagle3\n    max_draft_len: $K\n    speculative_model: $DRAFT_MODEL_PATH\nEOF\nexport TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78\ntrtllm-serve \"$MODEL_PATH\" --port 1\n";
        let f = parse_script("a/m_trt_mtp.sh", text.as_bytes()).unwrap();
        let s = served(&script_settings(&f, text), &[], "trt", &[]);
        assert_eq!(s.method, DraftMethod::Eagle3);
        assert_eq!(
            s.draft_model.as_deref(),
            Some("/data/models/MiniMax-M3-EAGLE3-GQA")
        );
        assert_eq!(s.ks.iter().map(|k| k.k).collect::<Vec<_>>(), vec![4]);
    }
}

#[cfg(test)]
mod printf_tests {
    use super::*;
    use crate::recipe::script::parse_script;

    /// `benchmarks/single_node/agentic/minimaxm3_fp4_b200_mtp.sh:171` at
    /// history commit `1cfeb48` (#2511): the JSON is built with `printf`.
    const PRINTF: &str = "NUM_SPEC_TOKENS=3\nSYNTHETIC_ACCEPT_LEN=2.78\nDRAFT_MODEL_PATH=/m/MiniMax-M3-EAGLE3-GQA\nif [ \"${EVAL_ONLY:-}\" = \"true\" ]; then\n    SPEC_CONFIG=$(printf \\\n        '{\"method\":\"eagle3\",\"model\":\"%s\",\"num_speculative_tokens\":%d}' \\\n        \"$DRAFT_MODEL_PATH\" \"$NUM_SPEC_TOKENS\")\nelse\n    SPEC_CONFIG=$(printf \\\n        '{\"method\":\"eagle3\",\"model\":\"%s\",\"num_speculative_tokens\":%d,\"rejection_sample_method\":\"synthetic\",\"synthetic_acceptance_length\":%.2f}' \\\n        \"$DRAFT_MODEL_PATH\" \"$NUM_SPEC_TOKENS\" \"$SYNTHETIC_ACCEPT_LEN\")\nfi\nvllm serve \"$MODEL_PATH\" --speculative-config \"$SPEC_CONFIG\"\n";

    #[test]
    fn printf_built_json_is_read() {
        let f = parse_script("a/m_mtp.sh", PRINTF.as_bytes()).unwrap();
        let st = script_settings(&f, PRINTF);
        let s = served(&st, &[], "vllm", &[]);
        assert_eq!(
            s.encodings.len(),
            1,
            "{:?} / {:?}",
            s.encodings,
            st.iter()
                .filter(|x| x.name == "speculative-config")
                .collect::<Vec<_>>()
        );
        assert_eq!(s.draft_model.as_deref(), Some("/m/MiniMax-M3-EAGLE3-GQA"));
    }
}
