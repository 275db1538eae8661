//! Sign-off detection and checklist parsing (`docs/rules.md` §0.1,
//! Check 5).
//!
//! A body is a sign-off when it contains the trigger phrase. Its checklist
//! is compared with the template of the target repository
//! (`docs/PR_REVIEW_CHECKLIST.md` by default: the fenced block under
//! `## Template`), item by item, by word overlap of content words, so small
//! wording drift is tolerated and a stale template is caught. What
//! sweepgate knows about template items (anchor phrases and the check each
//! item maps to) is data in `checklist/items.toml`.
use serde::Deserialize;

/// The literal phrase that makes a body a sign-off.
pub const TRIGGER_PHRASE: &str = "As a PR reviewer and CODEOWNER";

/// The placeholder of an empty detail section.
pub(crate) const DETAIL_PLACEHOLDER: &str = "insert any additional info here";

/// The placeholder of an unsigned template.
pub(crate) const SIGNED_PLACEHOLDER: &str = "FILL_IN_GITHUB_USERNAME";

pub fn is_signoff(body: &str) -> bool {
    body.contains(TRIGGER_PHRASE)
}

/// How long a head must have stood before a comment for the comment to
/// cover it: a push this close to a sign-off may not have been seen by
/// the signer (`docs/contracts.md` §3).
pub const QUIET_BEFORE_SIGNOFF_MS: i64 = 60_000;

/// A head of the PR and when GitHub recorded it (Unix ms, GitHub's clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedHead {
    pub sha: String,
    pub at_ms: i64,
}

/// The commit a comment sign-off covers, or why it covers none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    Covers(String),
    /// No head was recorded before the comment.
    NoRecord,
    /// The head before the comment was pushed `ms` before it.
    RecentPush {
        sha: String,
        ms: i64,
    },
}

/// The last head recorded before `comment_at_ms` (policy-bot's
/// `invalidate_on_push`, GitHub's "dismiss stale approvals"): a comment
/// covers what stood when it was written, never a later push. A head is
/// recorded again by every PR event that carries it (a label, an edit),
/// so it has stood since the earliest record of the unbroken run of
/// records with its sha, not since the latest one.
pub fn covered_head(heads: &[RecordedHead], comment_at_ms: i64) -> Coverage {
    let mut before: Vec<&RecordedHead> = heads.iter().filter(|h| h.at_ms < comment_at_ms).collect();
    before.sort_by_key(|h| h.at_ms);
    let Some(last) = before.last() else {
        return Coverage::NoRecord;
    };
    let since = before
        .iter()
        .rev()
        .take_while(|h| h.sha == last.sha)
        .map(|h| h.at_ms)
        .min()
        .unwrap_or(last.at_ms);
    if comment_at_ms - since < QUIET_BEFORE_SIGNOFF_MS {
        Coverage::RecentPush {
            sha: last.sha.clone(),
            ms: comment_at_ms - since,
        }
    } else {
        Coverage::Covers(last.sha.clone())
    }
}

/// One checkbox item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    /// The text after the checkbox, as written.
    pub text: String,
    pub checked: bool,
    /// Nesting depth (0 top level).
    pub depth: usize,
    /// 1-based line in the body or template file.
    pub line: usize,
}

impl Item {
    /// Short form for messages: the first words, links removed.
    pub(crate) fn short(&self) -> String {
        let words: Vec<String> = normalize(&self.text)
            .split_whitespace()
            .take(8)
            .map(str::to_owned)
            .collect();
        format!("\"{}…\"", words.join(" "))
    }
}

/// Template of the target repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pub file: String,
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TemplateError {
    #[error("{file}: no `## Template` section")]
    NoTemplateSection { file: String },
    #[error("{file}:{line}: the `## Template` section has no fenced block")]
    UnfencedTemplate { file: String, line: usize },
    #[error("{file}:{line}: the template has no checkbox items")]
    EmptyTemplate { file: String, line: usize },
}

/// Checkbox items of `text`: the task-list items GitHub renders (`- [ ]`,
/// `- [x]`, `- [X]`, any list marker), read through `crate::markdown`, so a
/// box inside a code block or a block quote is none. `first_line` is the
/// line number of `text`'s first line.
pub(crate) fn checkbox_items(text: &str, first_line: usize) -> Vec<Item> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let lines = crate::markdown::Lines::new(text);
    let mut out: Vec<Item> = Vec::new();
    let mut items = 0usize;
    let mut quotes = 0usize;
    // The item whose text is being read, and where its text starts.
    let mut reading: Option<usize> = None;
    let finish = |out: &mut Vec<Item>, from: usize, to: usize| {
        if let Some(item) = out.last_mut() {
            let src = text.get(from..to.max(from)).unwrap_or("");
            item.text = src
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
        }
    };
    for (ev, r) in Parser::new_ext(text, crate::markdown::options()).into_offset_iter() {
        // The item's text is its first paragraph: it ends where a block
        // (a nested list, code) starts or the paragraph or item ends.
        if let Some(from) = reading {
            let end = match &ev {
                Event::Start(
                    Tag::List(_)
                    | Tag::CodeBlock(_)
                    | Tag::BlockQuote(_)
                    | Tag::Heading { .. }
                    | Tag::HtmlBlock
                    | Tag::Table(_)
                    | Tag::Paragraph,
                ) => Some(r.start),
                Event::End(TagEnd::Paragraph | TagEnd::Item) => Some(r.end),
                Event::Rule => Some(r.start),
                _ => None,
            };
            if let Some(to) = end {
                finish(&mut out, from, to);
                reading = None;
            }
        }
        match ev {
            Event::Start(Tag::Item) => items += 1,
            Event::End(TagEnd::Item) => items = items.saturating_sub(1),
            Event::Start(Tag::BlockQuote(_)) => quotes += 1,
            Event::End(TagEnd::BlockQuote(_)) => quotes = quotes.saturating_sub(1),
            Event::TaskListMarker(checked) if quotes == 0 => {
                out.push(Item {
                    text: String::new(),
                    checked,
                    depth: items.saturating_sub(1),
                    line: first_line + lines.line(r.start) - 1,
                });
                reading = Some(r.end);
            }
            _ => {}
        }
    }
    if let Some(from) = reading {
        finish(&mut out, from, text.len());
    }
    out
}

/// Reads the template: the first fenced block after the `## Template`
/// heading (as GitHub renders the file: `crate::markdown`).
pub(crate) fn parse_template(file: &str, text: &str) -> Result<Template, TemplateError> {
    let outline = crate::markdown::outline(text);
    let start = outline
        .headings
        .iter()
        .find(|(_, h)| h.level == 2 && h.text.eq_ignore_ascii_case("template"))
        .map(|(line, _)| *line)
        .ok_or_else(|| TemplateError::NoTemplateSection {
            file: file.to_owned(),
        })?;
    let (open, block) = outline
        .code
        .range(start + 1..)
        .find(|(_, c)| c.fenced)
        .ok_or_else(|| TemplateError::UnfencedTemplate {
            file: file.to_owned(),
            line: start,
        })?;
    let items = checkbox_items(&block.text, open + 1);
    if items.is_empty() {
        return Err(TemplateError::EmptyTemplate {
            file: file.to_owned(),
            line: *open,
        });
    }
    Ok(Template {
        file: file.to_owned(),
        items,
    })
}

/// The text under "Additional detail section:" up to `Signed:`.
pub fn detail_section(body: &str) -> String {
    let lower = body.to_ascii_lowercase();
    let Some(i) = lower.find("additional detail section") else {
        return String::new();
    };
    let after = &body[i..];
    let after = after.split_once('\n').map_or("", |(_, r)| r);
    let end = after
        .lines()
        .position(|l| {
            l.trim_start()
                .trim_start_matches(['*', '_'])
                .starts_with("Signed:")
        })
        .unwrap_or(usize::MAX);
    after
        .lines()
        .take(end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

/// The `Signed:` value, without backticks.
pub fn signed_name(body: &str) -> Option<String> {
    body.lines().find_map(|l| {
        let t = l.trim().trim_start_matches(['*', '_']);
        t.strip_prefix("Signed:").map(|v| {
            v.trim()
                .trim_matches(['`', '*', '_', ' '])
                .trim_start_matches('@')
                .to_owned()
        })
    })
}

/// Lowercase, links reduced to their text, punctuation removed.
pub(crate) fn normalize(text: &str) -> String {
    // [text](url) → text; bare URLs kept as words.
    let mut s = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        let (before, after) = rest.split_at(i);
        s.push_str(before);
        match after.find(')') {
            Some(j) => rest = &after[j + 1..],
            None => {
                rest = after;
                break;
            }
        }
    }
    s.push_str(rest);
    s.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '.' || c == '/' || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .map(|w| w.trim_matches(['.', '-', '_', '/']))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

const STOP: [&str; 40] = [
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "is", "it", "that", "this",
    "with", "as", "be", "by", "at", "are", "i", "have", "has", "we", "our", "any", "all", "from",
    "not", "if", "its", "their", "there", "which", "was", "were", "been", "so", "such", "etc",
];

/// Content words of a text.
pub(crate) fn content_words(text: &str) -> std::collections::BTreeSet<String> {
    normalize(text)
        .split_whitespace()
        .filter(|w| !STOP.contains(w))
        .map(str::to_owned)
        .collect()
}

/// Jaccard similarity of the content words.
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    let (x, y) = (content_words(a), content_words(b));
    if x.is_empty() && y.is_empty() {
        return 1.0;
    }
    let inter = x.intersection(&y).count() as f64;
    let union = x.union(&y).count() as f64;
    inter / union
}

/// How a sign-off's checklist compares with the template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChecklistMatch {
    /// Per template item: the sign-off item matched to it (index), if any.
    pub matched: Vec<Option<usize>>,
    /// Sign-off items.
    pub signed: Vec<Item>,
}

impl ChecklistMatch {
    /// Template items with no counterpart in the sign-off.
    pub(crate) fn missing<'a>(&self, t: &'a Template) -> Vec<&'a Item> {
        t.items
            .iter()
            .zip(&self.matched)
            .filter(|(_, m)| m.is_none())
            .map(|(i, _)| i)
            .collect()
    }
    /// Template items present but unchecked.
    pub(crate) fn unchecked<'a>(&self, t: &'a Template) -> Vec<&'a Item> {
        t.items
            .iter()
            .zip(&self.matched)
            .filter(|(_, m)| m.is_some_and(|j| !self.signed[j].checked))
            .map(|(i, _)| i)
            .collect()
    }
}

/// Matches each template item to the most similar unused sign-off item at
/// or above `threshold`.
pub(crate) fn match_checklist(t: &Template, body: &str, threshold: f64) -> ChecklistMatch {
    let signed = checkbox_items(body, 1);
    let mut used = vec![false; signed.len()];
    let mut matched = Vec::with_capacity(t.items.len());
    for item in &t.items {
        let best = signed
            .iter()
            .enumerate()
            .filter(|(j, _)| !used[*j])
            .map(|(j, s)| (j, similarity(&item.text, &s.text)))
            .filter(|(_, sim)| *sim >= threshold)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match best {
            Some((j, _)) => {
                used[j] = true;
                matched.push(Some(j));
            }
            None => matched.push(None),
        }
    }
    ChecklistMatch { matched, signed }
}

/// What sweepgate knows about one template item.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KnownItem {
    /// A phrase of the item (lowercase, links and punctuation removed).
    pub anchor: String,
    /// Checks the item corresponds to.
    #[serde(default)]
    pub checks: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownItems {
    item: Vec<KnownItem>,
}

/// The built-in item table (`checklist/items.toml`).
pub(crate) const KNOWN_ITEMS_TOML: &str = include_str!("../../../../checklist/items.toml");

/// Parses an item table.
pub(crate) fn known_items(toml_text: &str) -> Result<Vec<KnownItem>, String> {
    toml::from_str::<KnownItems>(toml_text)
        .map(|k| k.item)
        .map_err(|e| e.to_string())
}

/// The checks a template item maps to, from the table (by anchor).
pub(crate) fn checks_for(item: &Item, known: &[KnownItem]) -> Vec<u8> {
    let n = normalize(&item.text);
    known
        .iter()
        .find(|k| n.contains(&k.anchor))
        .map(|k| k.checks.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "# X\n\n## Template\n```\nAs a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [ ] Verified that as of the moment of typing this, this is the latest version of [PR_REVIEW_CHECKLIST.md](https://x/y)\n- [ ] Verified that this PR passes evals.  Please link to GitHub Action workflow that shows this.\n  - [ ] I linked the corresponding upstream PR\n\n### Additional detail section:\n- insert any additional info here\n\nSigned: `FILL_IN_GITHUB_USERNAME`\n```\n";

    #[test]
    fn template_items_with_lines_and_depth() {
        let t = parse_template("c.md", TEMPLATE).unwrap();
        assert_eq!(t.items.len(), 3);
        assert_eq!(t.items[0].line, 6);
        assert_eq!(t.items[2].depth, 1);
    }

    #[test]
    fn checkboxes_are_the_task_items_github_renders() {
        let body = "Intro\n- [x] First item\n  wrapped on two lines\n  - [ ] nested\n* [X] star\n1. [ ] ordered\n\n```\n- [x] in code\n```\n> - [x] quoted\n\n    - [x] indented code\n- [] not a box\n- [ ]\n";
        let items = checkbox_items(body, 10);
        let got: Vec<(&str, bool, usize, usize)> = items
            .iter()
            .map(|i| (i.text.as_str(), i.checked, i.depth, i.line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("First item wrapped on two lines", true, 0, 11),
                ("nested", false, 1, 13),
                ("star", true, 0, 14),
                ("ordered", false, 0, 15),
                ("", false, 0, 24),
            ]
        );
        assert_eq!(checkbox_items("a\r\n- [ ] x\r\n", 1)[0].line, 2);
    }

    #[test]
    fn missing_template_section_is_an_error() {
        assert!(matches!(
            parse_template("c.md", "# nothing"),
            Err(TemplateError::NoTemplateSection { .. })
        ));
    }

    #[test]
    fn drifted_wording_matches_and_missing_items_are_named() {
        let t = parse_template("c.md", TEMPLATE).unwrap();
        let body = "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] Verified that as of the moment of typing this, this is the latest version of PR_REVIEW_CHECKLIST.md\n- [x] Verified that this PR passes evals. Link to the GitHub Action workflow that shows this.\n";
        let m = match_checklist(&t, body, 0.6);
        assert_eq!(m.matched[0], Some(0));
        assert_eq!(m.matched[1], Some(1));
        let missing = m.missing(&t);
        assert_eq!(missing.len(), 1);
        assert!(missing[0].text.contains("upstream PR"));
    }

    #[test]
    fn detail_and_signed() {
        let body = "x\n### Additional detail section:\n- run 12\n\nSigned: `nvpohanh`\n";
        assert_eq!(detail_section(body), "- run 12");
        assert_eq!(signed_name(body).as_deref(), Some("nvpohanh"));
        assert!(is_signoff("As a PR reviewer and CODEOWNER, I"));
        assert!(!is_signoff("as a pr reviewer"));
    }

    #[test]
    fn a_comment_covers_the_head_before_it_and_never_a_later_push() {
        let h = |sha: &str, at_ms| RecordedHead {
            sha: sha.into(),
            at_ms,
        };
        let heads = [h("a", 0), h("b", 200_000)];
        assert_eq!(covered_head(&heads, 100_000), Coverage::Covers("a".into()));
        assert_eq!(covered_head(&heads, 300_000), Coverage::Covers("b".into()));
        assert_eq!(
            covered_head(&heads, 230_000),
            Coverage::RecentPush {
                sha: "b".into(),
                ms: 30_000
            }
        );
        assert_eq!(covered_head(&heads, 0), Coverage::NoRecord);
        assert_eq!(covered_head(&[], 5), Coverage::NoRecord);
    }

    #[test]
    fn a_label_event_recording_the_same_head_again_does_not_restart_its_time() {
        let h = |sha: &str, at_ms| RecordedHead {
            sha: sha.into(),
            at_ms,
        };
        // b pushed at 200 s, seen again by a label event at 590 s.
        let heads = [h("a", 0), h("b", 200_000), h("b", 590_000)];
        assert_eq!(covered_head(&heads, 600_000), Coverage::Covers("b".into()));
        // a's run ended when b was pushed; b's run starts at b's first record.
        let heads = [h("a", 0), h("b", 580_000), h("b", 590_000)];
        assert_eq!(
            covered_head(&heads, 600_000),
            Coverage::RecentPush {
                sha: "b".into(),
                ms: 20_000
            }
        );
    }

    #[test]
    fn builtin_item_table_parses() {
        let k = known_items(KNOWN_ITEMS_TOML).unwrap();
        assert!(k.len() >= 15);
        let item = Item {
            text: "Verified that this PR passes evals.".into(),
            checked: true,
            depth: 0,
            line: 1,
        };
        assert_eq!(checks_for(&item, &k), vec![2]);
    }
}
