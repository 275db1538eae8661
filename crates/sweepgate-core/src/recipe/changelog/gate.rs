//! The PR gate of `check-changelog`: the added lines of the diff must be
//! valid new entries, and no line with content may be removed.

use super::diff::{align_insertions, diff, lines};
use super::document::{Entry, key_matches, read};
use super::yaml;
use crate::recipe::Loc;

/// Inputs of the gate besides the two files.
#[derive(Debug, Clone, Copy, Default)]
pub struct GateOptions<'a> {
    /// The PR carries the `all-evals` modifier label.
    pub all_evals_label: bool,
    /// The PR carries the `evals-only` modifier label.
    pub evals_only_label: bool,
    /// Keys of the head master configs; when given, every config-key
    /// pattern must select at least one.
    pub master_keys: Option<&'a [&'a str]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GateRule {
    /// The head file does not end with a newline.
    MissingFinalNewline,
    /// A removed line has non-whitespace content.
    Deletion,
    /// The diff adds nothing.
    NoAdditions,
    /// The added lines are not a YAML list of entries.
    AddedYaml,
    /// An added entry does not validate.
    Schema,
    /// Append-only and regular entries in one PR.
    MixedAppendOnly,
    /// Append-only together with an eval modifier label.
    AppendOnlyWithEvalLabel,
    /// A config-key pattern selects no master-config key.
    UnknownConfigKey,
}

impl GateRule {}

/// Which revision a position refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Base,
    Head,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateViolation {
    pub rule: GateRule,
    /// Index of the entry concerned (in the file named by `side`).
    pub entry: Option<usize>,
    pub side: Side,
    pub loc: Loc,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GateReport {
    /// The added entries, with head line numbers and head indices.
    pub appended: Vec<Entry>,
    pub violations: Vec<GateViolation>,
}

impl GateReport {
    /// Whether the sweep may run as far as the changelog is concerned.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

/// The PR gate of `check-changelog` over the base and head bytes of the
/// changelog (`file` names it in positions).
pub fn pr_gate(file: &str, base: &[u8], head: &[u8], opts: &GateOptions<'_>) -> GateReport {
    let mut report = GateReport::default();
    let violation = |rule, entry, side, line, column, message: String| GateViolation {
        rule,
        entry,
        side,
        loc: Loc::new(file, line, column),
        message,
    };
    let (base_text, head_text) = match (yaml::utf8(file, base), yaml::utf8(file, head)) {
        (Ok(b), Ok(h)) => (b, h),
        (Err(e), _) | (_, Err(e)) => {
            report.violations.push(violation(
                GateRule::AddedYaml,
                None,
                Side::Head,
                e.loc.line,
                e.loc.column,
                e.message,
            ));
            return report;
        }
    };
    if !head_text.ends_with('\n') {
        let line = head_text.lines().count().max(1);
        report.violations.push(violation(
            GateRule::MissingFinalNewline,
            None,
            Side::Head,
            line,
            1,
            "the changelog must end with a newline".into(),
        ));
    }

    let (bl, hl) = (lines(base_text), lines(head_text));
    let mut d = diff(&bl, &hl);
    align_insertions(&mut d.added, &hl);
    let base_doc = read(file, base).ok();
    for &i in &d.removed {
        if bl[i].trim().is_empty() {
            continue;
        }
        let entry = base_doc.as_ref().and_then(|doc| {
            let k = doc.entries.partition_point(|e| e.line <= i + 1);
            k.checked_sub(1).map(|k| doc.entries[k].index)
        });
        report.violations.push(violation(
            GateRule::Deletion,
            entry,
            Side::Base,
            i + 1,
            1,
            format!(
                "deletions are not allowed: base line {} `{}` is removed or changed",
                i + 1,
                bl[i].trim_end()
            ),
        ));
    }

    // The added lines, concatenated, are the new entries.
    let mut added = String::new();
    let mut origin: Vec<usize> = Vec::with_capacity(d.added.len());
    for &j in &d.added {
        added.push_str(hl[j].strip_suffix('\n').unwrap_or(hl[j]));
        added.push('\n');
        origin.push(j + 1);
    }
    let to_head = |l: usize| origin.get(l.wrapping_sub(1)).copied().unwrap_or(l);
    if added.trim().is_empty() {
        report.violations.push(violation(
            GateRule::NoAdditions,
            None,
            Side::Head,
            hl.len().max(1),
            1,
            "the diff adds no changelog entry".into(),
        ));
        return report;
    }
    let doc = match read(file, added.as_bytes()) {
        Ok(doc) => doc,
        Err(e) => {
            report.violations.push(violation(
                GateRule::AddedYaml,
                None,
                Side::Head,
                to_head(e.loc.line),
                e.loc.column,
                format!("the added lines are not a list of entries: {}", e.message),
            ));
            return report;
        }
    };
    let head_doc = read(file, head).ok();
    let head_index = |line: usize| {
        head_doc
            .as_ref()
            .and_then(|h| h.item_lines.iter().position(|&l| l == line))
    };
    for e in &doc.errors {
        let line = to_head(e.loc.line);
        let start = doc.item_lines.get(e.index).map(|&l| to_head(l));
        report.violations.push(violation(
            GateRule::Schema,
            start.and_then(head_index),
            Side::Head,
            line,
            e.loc.column,
            e.message.clone(),
        ));
    }
    for mut e in doc.entries {
        e.remap_lines(&to_head);
        if let Some(i) = head_index(e.line) {
            e.index = i;
        }
        report.appended.push(e);
    }
    if doc.items == 0 {
        report.violations.push(violation(
            GateRule::NoAdditions,
            None,
            Side::Head,
            origin.first().copied().unwrap_or(1),
            1,
            "the added lines contain no changelog entry".into(),
        ));
    }

    let append_only = report
        .appended
        .iter()
        .filter(|e| e.is_append_only())
        .count();
    if append_only > 0 && append_only < report.appended.len() {
        let first_regular = report.appended.iter().find(|e| !e.is_append_only());
        if let Some(e) = first_regular {
            report.violations.push(violation(
                GateRule::MixedAppendOnly,
                Some(e.index),
                Side::Head,
                e.line,
                1,
                "append-only and regular entries cannot be mixed in one change".into(),
            ));
        }
    }
    if append_only > 0 && (opts.all_evals_label || opts.evals_only_label) {
        let label = if opts.evals_only_label {
            "evals-only"
        } else {
            "all-evals"
        };
        if let Some(e) = report.appended.iter().find(|e| e.is_append_only()) {
            report.violations.push(violation(
                GateRule::AppendOnlyWithEvalLabel,
                Some(e.index),
                Side::Head,
                e.append_only.map_or(e.line, |f| f.line),
                3,
                format!("append-only entries cannot run with the `{label}` label"),
            ));
        }
    }
    if let Some(keys) = opts.master_keys {
        for e in &report.appended {
            for p in &e.config_keys {
                if !keys.iter().any(|k| key_matches(&p.value, k)) {
                    let what = if p.value.contains('*') {
                        "pattern matches no master-config key"
                    } else {
                        "unknown master-config key"
                    };
                    report.violations.push(violation(
                        GateRule::UnknownConfigKey,
                        Some(e.index),
                        Side::Head,
                        p.line,
                        p.column,
                        format!("`{}`: {what}", p.value),
                    ));
                }
            }
        }
    }
    report
}
