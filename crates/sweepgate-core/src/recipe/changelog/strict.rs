//! The strict byte rules of the merge helper and recovery tool (append at
//! the tail, immutable history, separators, canonical links): lint findings.

use super::diff::lines;
use super::document::{Entry, PrLink, classify_link, read};
use super::yaml;
use crate::recipe::Loc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrictMode {
    /// On a PR branch: appended links are this PR's canonical link or a
    /// placeholder.
    Pr { number: u64 },
    /// On the default branch: appended links are any canonical link.
    Main,
}

#[derive(Debug, Clone, Copy)]
pub struct StrictOptions<'a> {
    /// `owner/name` of the benchmark repository, for canonical links.
    pub repo: &'a str,
    pub mode: StrictMode,
    pub placeholders: &'a [&'a str],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrictRule {
    MissingFinalNewline,
    /// CR, TAB or NUL.
    ForbiddenByte,
    NotUtf8,
    /// Not YAML, not a list, or a duplicate key.
    Yaml,
    /// Lines starting `- config-keys:` differ from the number of entries.
    EntryLineCount,
    InvalidEntry,
    /// Head has fewer entries than base.
    EntriesRemoved,
    /// An existing entry changed other than in `pr-link`.
    EntryChanged,
    /// A `pr-link` correction to a non-canonical link.
    CorrectionNotCanonical,
    /// `pr-link` corrections together with new entries.
    CorrectionWithAdditions,
    /// A correction-only diff changes lines other than `  pr-link:` ones,
    /// or the line count.
    CorrectionBytes,
    /// An appended entry's link is not the expected one.
    AppendedLink,
    /// With additions, head does not start with the exact base bytes.
    HistoricalBytesChanged,
    /// The appended text does not start as required after the base bytes.
    SuffixStart,
    /// Appended entries not separated by exactly one empty line.
    Separator,
    /// The file ends with a blank line.
    TrailingBlankLine,
}

impl StrictRule {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: StrictRule,
    /// Head entry index, when one entry is concerned.
    pub entry: Option<usize>,
    pub loc: Loc,
    pub message: String,
}

/// At most this many forbidden-byte findings per byte kind.
const MAX_BYTE_FINDINGS: usize = 20;

/// The strict rules. `base` is `None` when only the file rules apply
/// (no base revision, e.g. linting the default branch alone).
pub fn strict_findings(
    file: &str,
    base: Option<&[u8]>,
    head: &[u8],
    opts: &StrictOptions<'_>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut push = |rule, entry, line, column, message: String| {
        out.push(Finding {
            rule,
            entry,
            loc: Loc::new(file, line, column),
            message,
        })
    };

    for (byte, name) in [(b'\r', "CR"), (b'\t', "TAB"), (0u8, "NUL")] {
        let mut seen = 0;
        let (mut line, mut col) = (1usize, 1usize);
        for &b in head {
            if b == byte && seen < MAX_BYTE_FINDINGS {
                push(
                    StrictRule::ForbiddenByte,
                    None,
                    line,
                    col,
                    format!("{name} byte"),
                );
                seen += 1;
            }
            if b == b'\n' {
                line += 1;
                col = 1;
            } else {
                col += 1;
            }
        }
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => {
            let (line, column) = yaml::line_col(head, e.valid_up_to());
            push(
                StrictRule::NotUtf8,
                None,
                line,
                column,
                "not valid UTF-8".into(),
            );
            return out;
        }
    };
    let n_lines = text.lines().count().max(1);
    if !text.ends_with('\n') {
        push(
            StrictRule::MissingFinalNewline,
            None,
            n_lines,
            1,
            "the file must end with a newline".into(),
        );
    }
    if text.ends_with("\n\n") || text == "\n" {
        push(
            StrictRule::TrailingBlankLine,
            None,
            n_lines,
            1,
            "the file must not end with a blank line".into(),
        );
    }
    let head_doc = match read(file, head) {
        Ok(d) => d,
        Err(e) => {
            push(StrictRule::Yaml, None, e.loc.line, e.loc.column, e.message);
            return out;
        }
    };
    let entry_lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("- config-keys:"))
        .map(|(i, _)| i + 1)
        .collect();
    if entry_lines.len() != head_doc.items {
        // Point at the first entry whose first key is not `config-keys` at
        // column 0, when there is one.
        let line = head_doc
            .entries
            .iter()
            .find(|e| !entry_lines.contains(&e.line))
            .map_or(1, |e| e.line);
        push(
            StrictRule::EntryLineCount,
            None,
            line,
            1,
            format!(
                "{} lines start with `- config-keys:` but the list has {} entries; `config-keys` must be the first key of every entry, at column 0",
                entry_lines.len(),
                head_doc.items
            ),
        );
    }
    for e in &head_doc.errors {
        push(
            StrictRule::InvalidEntry,
            Some(e.index),
            e.loc.line,
            e.loc.column,
            e.message.clone(),
        );
    }

    let Some(base) = base else {
        return out;
    };
    let (Ok(base_text), Ok(base_doc)) = (std::str::from_utf8(base), read(file, base)) else {
        push(
            StrictRule::Yaml,
            None,
            1,
            1,
            "the base revision of the changelog does not parse; history cannot be compared".into(),
        );
        return out;
    };
    if !base_doc.errors.is_empty() || !head_doc.errors.is_empty() {
        // Positional comparison needs every entry; the schema findings above
        // already say what is wrong.
        return out;
    }
    let (be, he) = (&base_doc.entries, &head_doc.entries);
    if he.len() < be.len() {
        push(
            StrictRule::EntriesRemoved,
            None,
            n_lines,
            1,
            format!(
                "the head has {} entries, fewer than the base's {}",
                he.len(),
                be.len()
            ),
        );
        return out;
    }
    let mut corrections = Vec::new();
    for (b, h) in be.iter().zip(he) {
        if !b.same_except_link(h) {
            push(
                StrictRule::EntryChanged,
                Some(h.index),
                h.line,
                1,
                format!(
                    "entry {} changed; existing entries are immutable (only a `pr-link` correction is allowed)",
                    h.index
                ),
            );
        } else if b.pr_link.value != h.pr_link.value {
            corrections.push(h);
        }
    }
    let additions = &he[be.len()..];
    for h in &corrections {
        if !matches!(
            classify_link(&h.pr_link.value, opts.repo, &[]),
            PrLink::Canonical(_)
        ) {
            push(
                StrictRule::CorrectionNotCanonical,
                Some(h.index),
                h.pr_link.line,
                h.pr_link.column,
                format!(
                    "`pr-link` may only be corrected to a canonical link, not `{}`",
                    h.pr_link.value
                ),
            );
        }
    }
    if !corrections.is_empty() && !additions.is_empty() {
        push(
            StrictRule::CorrectionWithAdditions,
            Some(corrections[0].index),
            corrections[0].pr_link.line,
            corrections[0].pr_link.column,
            "`pr-link` corrections cannot be mixed with new entries".into(),
        );
    }
    for h in additions {
        let link = classify_link(&h.pr_link.value, opts.repo, opts.placeholders);
        let ok = match (opts.mode, link) {
            (StrictMode::Pr { number }, PrLink::Canonical(n)) => n == number,
            (StrictMode::Pr { .. }, PrLink::Placeholder) => true,
            (StrictMode::Main, PrLink::Canonical(_)) => true,
            _ => false,
        };
        if !ok {
            let expected = match opts.mode {
                StrictMode::Pr { number } => format!(
                    "https://github.com/{}/pull/{number} or a placeholder ({})",
                    opts.repo,
                    opts.placeholders.join(", ")
                ),
                StrictMode::Main => {
                    format!("a canonical https://github.com/{}/pull/<n> link", opts.repo)
                }
            };
            push(
                StrictRule::AppendedLink,
                Some(h.index),
                h.pr_link.line,
                h.pr_link.column,
                format!("`pr-link` is `{}`; expected {expected}", h.pr_link.value),
            );
        }
    }

    let (bl, hl) = (lines(base_text), lines(text));
    if additions.is_empty() {
        if !corrections.is_empty() {
            if bl.len() != hl.len() {
                push(
                    StrictRule::CorrectionBytes,
                    None,
                    1,
                    1,
                    format!(
                        "a correction-only change must keep the line count ({} → {})",
                        bl.len(),
                        hl.len()
                    ),
                );
            } else {
                for (i, (b, h)) in bl.iter().zip(&hl).enumerate() {
                    if b != h && !(b.starts_with("  pr-link:") && h.starts_with("  pr-link:")) {
                        push(
                            StrictRule::CorrectionBytes,
                            head_doc.entries.get(entry_pos(he, i + 1)).map(|e| e.index),
                            i + 1,
                            1,
                            "a correction-only change may only change `  pr-link:` lines".into(),
                        );
                    }
                }
            }
        }
        return out;
    }

    // With additions the base bytes are an exact prefix.
    if !text.as_bytes().starts_with(base) {
        let i = bl.iter().zip(&hl).take_while(|(b, h)| b == h).count();
        push(
            StrictRule::HistoricalBytesChanged,
            head_doc.entries.get(entry_pos(he, i + 1)).map(|e| e.index),
            i + 1,
            1,
            format!(
                "the head does not start with the base bytes; line {} differs",
                i + 1
            ),
        );
        return out;
    }
    let suffix = &text[base_text.len()..];
    let (want, ok) = if base_text.is_empty() || base_text.ends_with("\n\n") {
        ("`- config-keys:`", suffix.starts_with("- config-keys:"))
    } else {
        (
            "one empty line, then `- config-keys:`",
            suffix.starts_with("\n- config-keys:"),
        )
    };
    if !ok {
        let line = bl.len() + 1;
        push(
            StrictRule::SuffixStart,
            additions.first().map(|e| e.index),
            line,
            1,
            format!("the appended text must start with {want} right after the existing bytes"),
        );
    }
    for pair in additions.windows(2) {
        let e = &pair[1];
        // e.line is 1-based; hl[e.line - 2] is the line before it.
        let before = e
            .line
            .checked_sub(2)
            .and_then(|i| hl.get(i))
            .map(|l| l.trim_end_matches('\n'));
        let before2 = e
            .line
            .checked_sub(3)
            .and_then(|i| hl.get(i))
            .map(|l| l.trim_end_matches('\n'));
        let one_empty = before == Some("") && before2.is_some_and(|l| !l.is_empty());
        if !one_empty {
            push(
                StrictRule::Separator,
                Some(e.index),
                e.line,
                1,
                "appended entries must be separated by exactly one empty line".into(),
            );
        }
    }
    out
}

/// Position in `entries` of the entry containing `line`.
fn entry_pos(entries: &[Entry], line: usize) -> usize {
    entries
        .partition_point(|e| e.line <= line)
        .saturating_sub(1)
}
