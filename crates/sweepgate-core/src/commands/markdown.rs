//! Where in a comment body a command may stand (`docs/contracts.md` §3).
//!
//! The body is read as GitHub renders it: GFM, parsed by `pulldown-cmark`
//! (a CommonMark implementation) with source offsets. A line is a command
//! candidate when its first character other than spaces and tabs is a `/`
//! that starts rendered text (of a paragraph, heading, table cell or list
//! item continuation) or a line of an HTML block. So none of these holds a
//! command, each by CommonMark's own rules:
//! - code blocks (fenced, also in list items, and indented) and code spans;
//! - block quotes, including lazy continuation lines;
//! - image alt text, link destinations and titles, reference definitions;
//! - a line that starts with a list marker, `#`, `>`, `|` or an escape.
//!
//! Raw HTML (HTML blocks and inline HTML) goes to the browser as written, so
//! the reader also tracks what the browser has open, fail-closed:
//! - no command while a `<code>`, `<pre>`, `<tt>`, `<kbd>`, `<samp>` or
//!   `<var>` element (shown as code) or a `<blockquote>` or `<q>` (a quote)
//!   is open, or (in an HTML block) inside an HTML comment, tag or other
//!   construct;
//! - a raw-text element (`<script>`, `<style>`, `<textarea>`, …) or a
//!   construct an HTML block leaves open (`<!--` without `-->`, an
//!   unterminated attribute) hides the rest of the body;
//! - zero-width characters are ordinary characters, exactly as in cmark: one
//!   before the `/` means the line is not a command.
//!
//! A byte-order mark at the very start is dropped, as cmark does.
use std::collections::BTreeMap;
use std::ops::Range;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use crate::markdown::{Lines, options};

/// One line that visibly starts with `/`, with its location in the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SlashLine {
    /// 1-based line number in the body.
    pub line: usize,
    /// Byte offset of the `/` in the body.
    pub offset: usize,
    /// The line from the `/` to its end, without same-line HTML comments.
    pub text: String,
}

/// Finds every line that is a command candidate (see the module rules).
pub(crate) fn slash_lines(body: &str) -> Vec<SlashLine> {
    let bom = if body.starts_with('\u{FEFF}') { 3 } else { 0 };
    let text = &body[bom..];
    let mut r = Reader {
        text,
        lines: Lines::new(text),
        browser: Browser::default(),
        quote: 0,
        image: 0,
        code: 0,
        out: BTreeMap::new(),
    };
    for (ev, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match ev {
            Event::Start(Tag::BlockQuote(_)) => r.quote += 1,
            Event::End(TagEnd::BlockQuote(_)) => r.quote = r.quote.saturating_sub(1),
            Event::Start(Tag::Image { .. }) => r.image += 1,
            Event::End(TagEnd::Image) => r.image = r.image.saturating_sub(1),
            Event::Start(Tag::CodeBlock(_)) => r.code += 1,
            Event::End(TagEnd::CodeBlock) => r.code = r.code.saturating_sub(1),
            Event::Text(_) => r.candidates(range, false),
            Event::Html(html) => {
                r.candidates(range, true);
                r.browser.feed(html.as_bytes());
            }
            Event::InlineHtml(html) => {
                // Inline HTML is one complete construct: left open, the
                // browser and cmark disagree about it.
                r.browser.feed(html.as_bytes());
                if r.browser.state != HtmlState::Text {
                    break;
                }
            }
            // An HTML block ends at a blank line or its end condition; the
            // browser keeps whatever it left open.
            Event::End(TagEnd::HtmlBlock) if r.browser.state != HtmlState::Text => break,
            _ => {}
        }
        if r.browser.raw_text {
            break;
        }
    }
    r.out
        .into_values()
        .map(|mut l| {
            l.offset += bom;
            l
        })
        .collect()
}

struct Reader<'a> {
    text: &'a str,
    lines: Lines,
    browser: Browser,
    quote: usize,
    image: usize,
    code: usize,
    out: BTreeMap<usize, SlashLine>,
}

impl Reader<'_> {
    /// Records the lines whose first visible character is a `/` inside
    /// `range`, a span of text (or of an HTML block line) GitHub shows.
    fn candidates(&mut self, range: Range<usize>, html: bool) {
        if range.is_empty()
            || self.quote > 0
            || self.image > 0
            || self.code > 0
            || self.browser.any_open()
            || (html && self.browser.state != HtmlState::Text)
        {
            return;
        }
        let first = self.lines.line(range.start);
        // The browser state is known only where the HTML line starts.
        let last = if html {
            first
        } else {
            self.lines.line(range.end - 1)
        };
        for line in first..=last {
            let start = self.lines.start(line);
            let rest = &self.text[start..];
            let ws = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            let at = start + ws;
            if !range.contains(&at) || !rest[ws..].starts_with('/') {
                continue;
            }
            // As in a paragraph, 4 columns of indentation would be code.
            if html && columns(&rest[..ws]) > 3 {
                continue;
            }
            let end = rest
                .find(['\n', '\r'])
                .map_or(self.text.len(), |e| start + e);
            self.out.entry(at).or_insert_with(|| SlashLine {
                line,
                offset: at,
                text: without_comments(&self.text[at..end]),
            });
        }
    }
}

/// Columns of leading spaces and tabs (tabs to the next multiple of 4).
fn columns(ws: &str) -> usize {
    ws.bytes()
        .fold(0, |c, b| if b == b'\t' { c + 4 - c % 4 } else { c + 1 })
}

/// A same-line HTML comment is invisible; an unclosed one hides the rest.
fn without_comments(mut text: &str) -> String {
    let mut visible = String::new();
    while let Some(p) = text.find("<!--") {
        visible.push_str(&text[..p]);
        match text[p + 4..].find("-->") {
            Some(e) => text = &text[p + 4 + e + 3..],
            None => return visible,
        }
    }
    visible.push_str(text);
    visible
}

/// Elements whose content GitHub shows as code or as a quote.
const HIDING: [&str; 8] = ["code", "pre", "tt", "kbd", "samp", "var", "blockquote", "q"];
/// Elements whose content the browser reads as raw text up to their end tag.
const RAW_TEXT: [&str; 11] = [
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "plaintext",
    "template",
];

/// Where the browser's HTML tokenizer is.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
enum HtmlState {
    #[default]
    Text,
    Comment,
    /// `<!…>`, `<?…>`: up to the next `>`.
    Bogus,
    /// Inside a tag, and in which quoted attribute value.
    Tag(Option<u8>),
}

/// What the raw HTML passed to the browser so far has left open.
#[derive(Default, Debug)]
struct Browser {
    state: HtmlState,
    hiding: [usize; HIDING.len()],
    raw_text: bool,
}

impl Browser {
    fn any_open(&self) -> bool {
        self.raw_text || self.hiding.iter().any(|&n| n > 0)
    }

    /// Counts the element a tag opens or closes (`src` starts at `<`).
    fn tag(&mut self, src: &[u8]) {
        let (closing, rest) = match src.get(1) {
            Some(b'/') => (true, &src[2..]),
            Some(c) if c.is_ascii_alphabetic() => (false, &src[1..]),
            _ => return,
        };
        let n = rest
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-')
            .count();
        let name = String::from_utf8_lossy(&rest[..n]).to_ascii_lowercase();
        if let Some(k) = HIDING.iter().position(|&c| c == name) {
            if closing {
                self.hiding[k] = self.hiding[k].saturating_sub(1);
            } else {
                self.hiding[k] += 1;
            }
        } else if !closing && RAW_TEXT.contains(&name.as_str()) {
            self.raw_text = true;
        }
    }

    /// Runs the tokenizer over raw HTML.
    fn feed(&mut self, t: &[u8]) {
        let mut i = 0;
        while i < t.len() {
            match self.state {
                HtmlState::Text => {
                    if t[i] != b'<' {
                        i += 1;
                        continue;
                    }
                    let r = &t[i..];
                    if r.starts_with(b"<!--") {
                        self.state = HtmlState::Comment;
                        i += 4;
                        // `<!-->` and `<!--->` close at once in HTML.
                        if t.get(i) == Some(&b'>') {
                            self.state = HtmlState::Text;
                            i += 1;
                        } else if t[i..].starts_with(b"->") {
                            self.state = HtmlState::Text;
                            i += 2;
                        }
                    } else if r.starts_with(b"<!") || r.starts_with(b"<?") {
                        self.state = HtmlState::Bogus;
                        i += 2;
                    } else if r
                        .get(1)
                        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'/')
                    {
                        // Only the name matters for the element counts.
                        let name_end = r[1..]
                            .iter()
                            .position(|c| !(c.is_ascii_alphanumeric() || *c == b'-' || *c == b'/'))
                            .map_or(r.len(), |p| p + 1);
                        self.tag(&r[..name_end]);
                        self.state = HtmlState::Tag(None);
                        i += 1;
                    } else {
                        i += 1;
                    }
                }
                HtmlState::Comment => match t[i..].windows(3).position(|w| w == b"-->") {
                    Some(e) => {
                        self.state = HtmlState::Text;
                        i += e + 3;
                    }
                    None => i = t.len(),
                },
                HtmlState::Bogus => match t[i..].iter().position(|&c| c == b'>') {
                    Some(p) => {
                        self.state = HtmlState::Text;
                        i += p + 1;
                    }
                    None => i = t.len(),
                },
                HtmlState::Tag(q) => {
                    let c = t[i];
                    i += 1;
                    self.state = match (q, c) {
                        (None, b'"' | b'\'') => HtmlState::Tag(Some(c)),
                        (Some(x), c) if c == x => HtmlState::Tag(None),
                        (None, b'>') => HtmlState::Text,
                        _ => self.state,
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(body: &str) -> Vec<usize> {
        slash_lines(body).iter().map(|c| c.line).collect()
    }

    #[test]
    fn plain_and_indented() {
        assert_eq!(lines("/use 1"), vec![1]);
        assert_eq!(lines("   /use 1"), vec![1]);
        assert_eq!(lines("    /use 1"), Vec::<usize>::new());
        assert_eq!(lines("\t/use 1"), Vec::<usize>::new());
        // An indented code block has no lazy continuation: the next line is
        // a paragraph (CommonMark 0.31.2 §4.4, example 114).
        assert_eq!(lines("    code\n/use 1"), vec![2]);
        assert_eq!(lines("    code\n\n/use 1"), vec![3]);
    }

    #[test]
    fn fences() {
        assert!(lines("```\n/use 1\n```").is_empty());
        assert_eq!(lines("```\n/use 1\n```\n/use 2"), vec![4]);
        assert!(lines("~~~~\n/use 1\n~~~\n/use 2").is_empty());
        assert!(lines("```\n/use 1").is_empty());
        assert!(lines("- ```\n  /use 1\n  ```").is_empty());
        assert!(lines("1. a\n\n    ```\n   /use 1\n    ```").is_empty());
        // Not a fence: a backtick fence's info string has no backtick, so
        // this is a paragraph (CommonMark 0.31.2 §4.5, example 145).
        assert_eq!(lines("``` a`b\n/use 1"), vec![2]);
    }

    #[test]
    fn quotes_and_lazy_lines() {
        assert!(lines("> /use 1").is_empty());
        assert!(lines("> > /use 1").is_empty());
        assert!(lines("> quoted\n/use 1").is_empty());
        assert_eq!(lines("> quoted\n\n/use 1"), vec![3]);
        assert_eq!(lines("> ```\n/use 1"), vec![2]);
    }

    #[test]
    fn html_comments_and_tags() {
        assert!(lines("<!--\n/use 1\n-->").is_empty());
        assert_eq!(lines("<!-- x -->\n/use 1"), vec![2]);
        assert!(lines("text <!--\n/use 1 -->").is_empty());
        assert!(lines("<img alt=\"\n/use 1\n\">").is_empty());
        assert!(lines("a <img alt=\"\n/use 1\n\">").is_empty());
        assert!(lines("<div>\n<!--\n/use 1\n-->\n</div>").is_empty());
        assert_eq!(lines("<details>\n/use 1\n</details>"), vec![2]);
        assert!(lines("<script>\n\n/use 1").is_empty());
        assert!(lines("<code>\n\n/use 1").is_empty());
        assert_eq!(lines("<code>x</code>\n\n/use 1"), vec![3]);
        // An HTML quote is a quote.
        assert!(lines("<blockquote>\n/use 1\n</blockquote>").is_empty());
        assert!(lines("a <q>\n/use 1</q>").is_empty());
        assert_eq!(lines("<blockquote>x</blockquote>\n\n/use 1"), vec![3]);
    }

    #[test]
    fn inline_code_and_links() {
        assert!(lines("see `this\n/use 1` here").is_empty());
        assert_eq!(lines("see `this` here\n/use 1"), vec![2]);
        assert!(lines("[a](\n/use)").is_empty());
        assert!(lines("[a](x \"\n/use 1\")").is_empty());
        assert!(lines("![\n/use 1](x.png)").is_empty());
        assert!(lines("[a]:\n/use").is_empty());
    }

    #[test]
    fn line_endings_and_offsets() {
        let c = slash_lines("hi\r\n/use 1\r\n");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].line, 2);
        assert_eq!(c[0].offset, 4);
        assert_eq!(c[0].text, "/use 1");
        let c = slash_lines("\u{FEFF}/use 1");
        assert_eq!(c[0].offset, 3);
    }

    /// Pieces that open, close and nest every construct the reader tracks.
    fn soup() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just("/use 1"),
            Just("/verify"),
            Just("```"),
            Just("~~~"),
            Just("    "),
            Just("\t"),
            Just("> "),
            Just("- "),
            Just("2. "),
            Just("- [ ] "),
            Just("<!--"),
            Just("-->"),
            Just("<div title=\""),
            Just("<code>"),
            Just("</code>"),
            Just("<pre>"),
            Just("<script>"),
            Just("<details>"),
            Just("`"),
            Just("]("),
            Just("!["),
            Just("[a]: "),
            Just("==="),
            Just("---"),
            Just("|"),
            Just("\\"),
            Just("\n"),
            Just("\r\n"),
            Just("\r"),
            Just("\u{FEFF}"),
            Just("\u{200B}"),
            Just("é"),
            Just(" "),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    proptest::proptest! {
        /// Never panics; every line found starts at a `/` on its line.
        #[test]
        fn any_input_reads_without_panic(body in proptest::prelude::prop_oneof![soup(), "(?s).{0,200}"]) {
            let found = slash_lines(&body);
            let lines = crate::markdown::Lines::new(&body);
            let mut last = None;
            for l in &found {
                proptest::prop_assert!(body.is_char_boundary(l.offset));
                proptest::prop_assert!(body[l.offset..].starts_with('/'));
                proptest::prop_assert!(l.text.starts_with('/'));
                proptest::prop_assert_eq!(l.line, lines.line(l.offset));
                proptest::prop_assert!(last < Some(l.offset));
                last = Some(l.offset);
            }
        }
    }
}
