//! The outline of a Markdown document as GitHub renders it (GFM, by
//! `pulldown-cmark` with source offsets): its headings, tables and code
//! blocks, each at its 1-based line. MODELS.md, the checklist template
//! and PR descriptions are read through it (Checks 5, 7 and 15), so a
//! `## ` inside a code block is no heading and a table is what GitHub
//! shows as one.
use std::collections::BTreeMap;
use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// GitHub's extensions (tables, strikethrough, task lists).
pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// A heading: its level (1–6) and its text as written (markers and
/// surrounding spaces removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heading {
    pub level: u8,
    pub text: String,
}

/// A table: the header cells and each row's line and cells, as written
/// (trimmed; `\|` is a literal `|`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Table {
    pub header: Vec<String>,
    pub rows: Vec<(usize, Vec<String>)>,
    /// The table's last line.
    pub last: usize,
}

/// A fenced or indented code block and its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Code {
    pub fenced: bool,
    pub info: String,
    pub text: String,
}

/// Headings, tables and code blocks by the line they start at.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outline {
    pub headings: BTreeMap<usize, Heading>,
    pub tables: BTreeMap<usize, Table>,
    pub code: BTreeMap<usize, Code>,
}

/// Byte offsets of line starts, for 1-based line numbers. Lines end at
/// `\n`, `\r\n` or a lone `\r`, as in CommonMark.
pub(crate) struct Lines(Vec<usize>);

impl Lines {
    pub(crate) fn new(text: &str) -> Self {
        let b = text.as_bytes();
        let mut v = vec![0];
        v.extend(
            b.iter()
                .enumerate()
                .filter(|&(i, &c)| c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')))
                .map(|(i, _)| i + 1),
        );
        Lines(v)
    }
    /// The 1-based line holding byte `offset`.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&s| s <= offset)
    }
    /// Byte offset where 1-based `line` starts.
    pub(crate) fn start(&self, line: usize) -> usize {
        self.0[line.clamp(1, self.0.len()) - 1]
    }
}

fn cell_text(text: &str, r: Range<usize>) -> String {
    text[r].trim().replace("\\|", "|")
}

fn heading_text(text: &str, r: Range<usize>) -> String {
    let src = &text[r];
    let first = src.lines().next().unwrap_or("").trim();
    if first.starts_with('#') {
        // ATX: `## text ##`.
        let t = first.trim_start_matches('#').trim();
        let closed = t.trim_end_matches('#');
        if closed.len() < t.len() && (closed.is_empty() || closed.ends_with([' ', '\t'])) {
            closed.trim().to_owned()
        } else {
            t.to_owned()
        }
    } else {
        // Setext: the text lines above the underline.
        let mut l: Vec<&str> = src.lines().map(str::trim).collect();
        l.pop();
        l.join(" ")
    }
}

/// Reads the outline of `text`.
pub(crate) fn outline(text: &str) -> Outline {
    let lines = Lines::new(text);
    let mut out = Outline::default();
    let mut table: Option<(usize, Table)> = None;
    let mut row: Vec<String> = Vec::new();
    let mut row_line = 0;
    let mut code: Option<(usize, Code)> = None;
    for (ev, r) in Parser::new_ext(text, options()).into_offset_iter() {
        match ev {
            Event::Start(Tag::Heading { level, .. }) => {
                out.headings.insert(
                    lines.line(r.start),
                    Heading {
                        level: level as u8,
                        text: heading_text(text, r),
                    },
                );
            }
            Event::Start(Tag::Table(_)) => table = Some((lines.line(r.start), Table::default())),
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                row.clear();
                row_line = lines.line(r.start);
            }
            Event::Start(Tag::TableCell) => row.push(cell_text(text, r)),
            Event::End(TagEnd::TableHead) => {
                if let Some((_, t)) = table.as_mut() {
                    t.header = std::mem::take(&mut row);
                }
            }
            Event::End(TagEnd::TableRow) => {
                if let Some((_, t)) = table.as_mut() {
                    t.rows.push((row_line, std::mem::take(&mut row)));
                }
            }
            Event::End(TagEnd::Table) => {
                if let Some((line, mut t)) = table.take() {
                    t.last = lines.line(r.end.saturating_sub(1));
                    out.tables.insert(line, t);
                }
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let (fenced, info) = match kind {
                    CodeBlockKind::Fenced(i) => (true, i.to_string()),
                    CodeBlockKind::Indented => (false, String::new()),
                };
                code = Some((
                    lines.line(r.start),
                    Code {
                        fenced,
                        info,
                        text: String::new(),
                    },
                ));
            }
            Event::Text(t) => {
                if let Some((_, c)) = code.as_mut() {
                    c.text.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((line, c)) = code.take() {
                    out.code.insert(line, c);
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_tables_and_code_at_their_lines() {
        let text = "# Title\n\n```md\n## not a heading\n| a | b |\n```\n\n## Models ##\n\n| A | `x` |\n|---|:-:|\n| 1 | a \\| b |\n| 2 |\n\nSetext\n---\n";
        let o = outline(text);
        let h: Vec<(usize, u8, &str)> = o
            .headings
            .iter()
            .map(|(l, h)| (*l, h.level, h.text.as_str()))
            .collect();
        assert_eq!(
            h,
            vec![(1, 1, "Title"), (8, 2, "Models"), (15, 2, "Setext")]
        );
        let t = &o.tables[&10];
        assert_eq!(t.header, vec!["A", "`x`"]);
        assert_eq!(
            t.rows,
            vec![
                (12, vec!["1".to_string(), "a | b".to_string()]),
                (13, vec!["2".to_string(), String::new()])
            ]
        );
        assert_eq!(t.last, 13);
        assert!(o.code[&3].fenced);
        assert_eq!(o.code[&3].info, "md");
        assert_eq!(o.code[&3].text, "## not a heading\n| a | b |\n");
    }
}
