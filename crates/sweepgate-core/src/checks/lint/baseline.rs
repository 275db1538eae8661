//! A PR is judged on what it changes (issue 17 item 5; the model of
//! Semgrep's `--baseline-commit` and GitHub code scanning): the same
//! rules run on the base side of the PR's own scope, and a head finding is
//! *new* unless a base finding with the same fingerprint is left to match
//! it. Matching is a multiset: a second instance of the same error is new.
//!
//! The fingerprint survives line shifts and renames: rule, file (the base
//! path of a renamed file), subject (the key, variable, flag or entry the
//! rule names, else the message's first `quoted` token) and the message
//! with line numbers taken out.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::files::FileStatus;

use super::context::{Context, KeyChange};
use super::input::{ChangedPath, LintInput, Scope};
use super::{Finding, Severity, lint, run_context};

/// Whether a finding was there before the PR (SARIF `baselineState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineState {
    /// The PR introduces it.
    New,
    /// The base had it too.
    Unchanged,
}

impl BaselineState {
    pub fn as_str(self) -> &'static str {
        match self {
            BaselineState::New => "new",
            BaselineState::Unchanged => "unchanged",
        }
    }
}

/// A head finding with its fingerprint and baseline state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Judged {
    #[serde(flatten)]
    pub finding: Finding,
    pub fingerprint: String,
    pub baseline: BaselineState,
    /// The finding's line is one the PR adds or changes.
    pub on_changed_line: bool,
}

impl Judged {
    pub fn is_new(&self) -> bool {
        self.baseline == BaselineState::New
    }

    /// New findings, and pre-existing ones on lines the PR changed, are
    /// annotated on the PR.
    pub fn annotate(&self) -> bool {
        self.is_new() || self.on_changed_line
    }
}

/// The subject of a finding: the key, variable, flag or entry its rule
/// names (`Finding::subject`), else the message's first backquoted token.
fn subject(f: &Finding) -> &str {
    if let Some(s) = f.subject.as_deref() {
        return s;
    }
    let mut parts = f.message.split('`');
    parts.next();
    parts.next().unwrap_or("")
}

/// The message without what moves when lines shift: `line 12`,
/// `lines 3–5`, `file:12`, and runs of whitespace.
pub fn normalise(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut words = message.split_whitespace().peekable();
    while let Some(w) = words.next() {
        if !out.is_empty() {
            out.push(' ');
        }
        let lw = w.to_ascii_lowercase();
        // `(line 72)` as well as `line 72` (`0442a2c`, #2336: L11's
        // message named the blob's line, so a shift made it "new").
        let core = lw.trim_start_matches(['(', '[']);
        if (core == "line" || core == "lines")
            && words
                .peek()
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        {
            out.push_str(&lw);
            out.push_str(" #");
            let n = words.next().unwrap_or("");
            out.push_str(
                n.trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '-' | '–' | ',')),
            );
            continue;
        }
        out.push_str(&strip_line_suffix(w));
    }
    out
}

/// `path:12` → `path:#`, `path:12:` → `path:#:`.
fn strip_line_suffix(word: &str) -> String {
    let mut out = String::new();
    let mut chars = word.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        out.push(c);
        if c == ':' && chars.peek().is_some_and(|(_, d)| d.is_ascii_digit()) {
            while chars.peek().is_some_and(|(_, d)| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('#');
        }
    }
    out
}

/// The fingerprint of a finding at `file` (the caller maps a renamed
/// head path to its base path first): 16 bytes of SHA-256, hex.
pub fn fingerprint(f: &Finding, file: &str) -> String {
    let mut h = Sha256::new();
    let norm;
    let parts: [&str; 4] = match f.identity.as_deref() {
        Some(id) => [f.rule, file, id, ""],
        None => {
            norm = normalise(&f.message);
            [f.rule, file, subject(f), &norm]
        }
    };
    for part in parts {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..16])
}

/// Head path → base path of the PR's renames.
fn renames(input: &LintInput) -> BTreeMap<&str, &str> {
    input
        .changed
        .iter()
        .filter_map(|c| c.previous_path.as_deref().map(|p| (c.path.as_str(), p)))
        .collect()
}

/// The keys the base side is judged on: those the head's context finds
/// changed. They depend on the master configs, the runner config, the
/// trees and the changed paths, not on the scripts and recipes read for
/// the changed keys, so a context built before those were read gives the
/// same keys (`lint::gather` builds one context fewer with it).
pub fn base_scope(head_ctx: &Context<'_>) -> BTreeMap<String, KeyChange> {
    let mut keys: BTreeMap<String, KeyChange> = head_ctx.changed_keys.iter().cloned().collect();
    // Changed entries that fail validation (an older schema) are in scope
    // too: L15 judges them on the fields they have, at base as at head.
    for u in head_ctx.direct_unvalidated() {
        let change = if head_ctx.base_entries.contains_key(&u.key) {
            KeyChange::Changed
        } else {
            KeyChange::Added
        };
        keys.entry(u.key.clone()).or_insert(change);
    }
    keys
}

/// The base side of the PR's scope: the base tree as the "head", nothing
/// changed in content, the keys the PR touches (`keys`, from
/// [`base_scope`]) in scope, and the scripts and recipes it touches (at
/// their base paths) as changed files. Run through the rules, it gives what
/// was already there.
pub fn base_view_of(input: &LintInput, keys: BTreeMap<String, KeyChange>) -> LintInput {
    let cfg = &input.config.paths;
    let policy: BTreeSet<&str> = cfg
        .master_configs
        .iter()
        .chain([&cfg.changelog, &cfg.runners, &cfg.models_policy])
        .map(String::as_str)
        .collect();
    let changed = input
        .changed
        .iter()
        .filter(|c| c.status != FileStatus::Added)
        .map(|c| ChangedPath {
            path: c.previous_path.clone().unwrap_or_else(|| c.path.clone()),
            previous_path: None,
            status: FileStatus::Modified,
        })
        // Policy files "changed" at base would fire the rules about the
        // PR's own edits (a changelog entry missing) on the base side.
        .filter(|c| !policy.contains(c.path.as_str()))
        .collect();
    let mut v = LintInput::new(input.config.clone(), input.data.clone());
    v.pr = input.pr;
    v.head_sha = input.base_sha.clone();
    v.base_sha = input.base_sha.clone();
    v.changed = changed;
    // Shared, not copied: the base side's files and tree as both sides.
    v.head_tree = input.base_tree.clone();
    v.base_tree = input.base_tree.clone();
    v.head_files = input.base_files.clone();
    v.base_files = input.base_files.clone();
    // A master config or runners.yaml the PR moved is read at its base
    // path, under its head path, as the head side reads it (#1992).
    for p in cfg.master_configs.iter().chain([&cfg.runners]) {
        if input.base(p).is_none()
            && let Some(b) = input.base_following(p)
        {
            Arc::make_mut(&mut v.head_files).insert(p.clone(), b.clone());
            Arc::make_mut(&mut v.base_files).insert(p.clone(), b.clone());
            Arc::make_mut(&mut v.head_tree).insert(p.clone());
            Arc::make_mut(&mut v.base_tree).insert(p.clone());
        }
    }
    v.scope = Scope::Keys(keys);
    v.inputs_not_yet = input.inputs_not_yet.clone();
    v.base_legacy_images = input.base_legacy_images.clone();
    v
}

/// Match head findings against base findings as a multiset of
/// fingerprints.
///
/// When the base side could not read a master config or `runners.yaml`
/// (an older schema: `L00` on the base side), the rules that need them did
/// not run there, and a head finding they report cannot be matched: it
/// counts as new only on a line the PR changed (reviewdog's `diff_context`
/// filter). Without this, #2096 (`9b7f719`), which only adds metadata to
/// master entries whose base no longer validates, "introduced" every
/// non-upstream image of the keys it touched.
pub fn judge(input: &LintInput, head: Vec<Finding>, base: &[Finding]) -> Vec<Judged> {
    let renames = renames(input);
    let mut left: BTreeMap<String, usize> = BTreeMap::new();
    for f in base {
        *left.entry(fingerprint(f, &f.file)).or_default() += 1;
    }
    let paths = &input.config.paths;
    let base_blind = base.iter().any(|f| {
        f.rule == "L00"
            && (f.message.starts_with(super::context::UNREAD)
                || f.message.starts_with(super::context::UNREAD_ENTRIES))
            && (paths.master_configs.contains(&f.file) || f.file == paths.runners)
    });
    head.into_iter()
        .map(|f| {
            let file = renames.get(f.file.as_str()).copied().unwrap_or(&f.file);
            let fp = fingerprint(&f, file);
            let on_changed_line = input
                .changed_lines
                .get(&f.file)
                .is_some_and(|l| l.contains(&f.line));
            let baseline = match left.get_mut(&fp) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    BaselineState::Unchanged
                }
                _ if base_blind && f.rule != "L00" && !on_changed_line => BaselineState::Unchanged,
                _ if f.known_at_base => BaselineState::Unchanged,
                _ => BaselineState::New,
            };
            Judged {
                finding: f,
                fingerprint: fp,
                baseline,
                on_changed_line,
            }
        })
        .collect()
}

/// Lint a PR and judge every finding against its base side. With
/// [`Scope::All`] (an audit of the whole tree) every finding is new.
pub fn lint_judged(input: &LintInput) -> Vec<Judged> {
    let (head, base) = match input.scope {
        Scope::Diff => {
            // One head context for the rules and the base side's keys.
            let ctx = Context::build(input);
            let head = run_context(&ctx);
            let keys = base_scope(&ctx);
            drop(ctx);
            (head, lint(&base_view_of(input, keys)))
        }
        Scope::All | Scope::Keys(_) => (lint(input), Vec::new()),
    };
    judge(input, head, &base)
}

/// Any new error.
pub fn has_new_errors(judged: &[Judged]) -> bool {
    judged
        .iter()
        .any(|j| j.is_new() && j.finding.severity == Severity::Error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(rule: &'static str, file: &str, line: usize, msg: &str) -> Finding {
        Finding::new(rule, Severity::Error, file, line, msg)
    }

    #[test]
    fn fingerprints_survive_line_shifts_but_not_other_subjects() {
        let a = f("L09", "a.sh", 10, "`--tp 8` is hard-coded at line 10");
        let b = f("L09", "a.sh", 42, "`--tp 8` is hard-coded at line 42");
        let c = f("L09", "a.sh", 10, "`--tp 4` is hard-coded at line 10");
        assert_eq!(fingerprint(&a, "a.sh"), fingerprint(&b, "a.sh"));
        assert_ne!(fingerprint(&a, "a.sh"), fingerprint(&c, "a.sh"));
        assert_eq!(
            normalise("see x.sh:12 and  lines 3–5."),
            "see x.sh:# and lines #."
        );
        assert_eq!(
            normalise("passed both as a JSON blob (line 72) and as dotted keys"),
            "passed both as a JSON blob (line #) and as dotted keys"
        );
    }

    #[test]
    fn a_second_instance_of_the_same_error_is_new_and_renames_are_followed() {
        let mut input = LintInput::new(
            Default::default(),
            crate::checks::lint::LintData::defaults().unwrap(),
        );
        input.changed.push(ChangedPath {
            path: "new.sh".into(),
            previous_path: Some("old.sh".into()),
            status: FileStatus::Renamed,
        });
        input.changed_lines.insert("new.sh".into(), [7].into());
        let base = vec![f("L12", "old.sh", 3, "`pip install x` is unpinned")];
        let head = vec![
            f("L12", "new.sh", 5, "`pip install x` is unpinned"),
            f("L12", "new.sh", 7, "`pip install x` is unpinned"),
        ];
        let j = judge(&input, head, &base);
        assert_eq!(j[0].baseline, BaselineState::Unchanged);
        assert_eq!(j[1].baseline, BaselineState::New);
        assert!(!j[0].annotate());
        assert!(j[1].on_changed_line && j[1].annotate());
        assert!(has_new_errors(&j));
        assert!(!has_new_errors(&j[..1]));
    }
}
