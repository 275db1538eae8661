//! Package installs and their requirement specs (pinned or not).

use super::facts::{Flag, FlagForm, InstallTool, Requirement, RequirementKind, Word};

/// pip options that take a value (so the value is not a requirement).
pub(super) const PIP_VALUE_OPTS: [&str; 22] = [
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

pub(super) type InstallFacts = (InstallTool, Vec<Requirement>, Vec<Flag>);

pub(super) fn install_of(base: &str, args: &[Word]) -> Option<InstallFacts> {
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

pub(super) fn is_hex40(s: &str) -> bool {
    s.len() == 40 && s.chars().all(|c| c.is_ascii_hexdigit())
}

pub(super) fn contains_hex40(s: &str) -> bool {
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
