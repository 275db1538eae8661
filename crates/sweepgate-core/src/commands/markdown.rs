//! Where in a comment body a command may stand.
//!
//! A small, fail-closed model of how GitHub (cmark-gfm) renders a comment:
//! block structure first (fenced and indented code, block quotes with lazy
//! continuation, HTML blocks, paragraphs), then inline structure inside each
//! paragraph (code spans, raw HTML, link tails, image alt text). It does not
//! render anything; it only answers "does this line visibly start with `/`
//! outside code, quotes and HTML comments?". Where the model cannot tell how
//! GitHub would render a line, the line is *not* a command: a command that
//! is not run gets noticed, a hidden command that runs does not.
//!
//! Rules (each one has a test in `parse.rs` or `tests/commands_grammar.rs`):
//! - a command line has at most 3 columns of leading spaces/tabs (4 or more is
//!   an indented code block or ambiguous), no list marker and no `>`;
//! - lines inside fenced code (```` ``` ```` / `~~~`, also inside list items),
//!   indented code, block quotes (including lazy continuation lines), HTML
//!   blocks' comments and tags, and open `<code>`/`<pre>`/`<tt>`/`<kbd>`/
//!   `<samp>`/`<var>` elements are never commands;
//! - a line directly after an indented code line is not a command;
//! - raw-text HTML elements (`<script>`, `<style>`, `<textarea>`, …) and HTML
//!   constructs left open at the end of an HTML block hide the rest of the body;
//! - inside a paragraph, a line is a command only if everything opened earlier
//!   in that paragraph (code span, HTML comment or tag, link tail, image alt
//!   text) was closed before the line starts;
//! - a paragraph that may hold a link reference definition (`[x]: …`) holds
//!   no commands;
//! - zero-width characters are ordinary characters here, exactly as in
//!   cmark: a zero-width character before the `/` means the line is not a
//!   command, and a line of only zero-width characters is not blank.

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
    let mut s = Scanner::new(body);
    s.run();
    s.out.sort_by_key(|c| c.offset);
    s.out
}

const CODE_LIKE: [&str; 6] = ["code", "pre", "tt", "kbd", "samp", "var"];
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
/// Tag names that start an HTML block of type 6 (CommonMark 4.6).
const BLOCK_TAGS: [&str; 62] = [
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

#[derive(Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
}

fn split_lines(body: &str) -> Vec<Line> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    // cmark drops a byte-order mark at the very start of the document only.
    let mut start = if body.starts_with('\u{FEFF}') { 3 } else { 0 };
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push(Line { start, end: i });
                i += 1;
                start = i;
            }
            b'\r' => {
                out.push(Line { start, end: i });
                i += if b.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < b.len() {
        out.push(Line {
            start,
            end: b.len(),
        });
    }
    out
}

/// Leading spaces/tabs as (columns, bytes), tabs to the next multiple of 4.
fn indent(t: &str) -> (usize, usize) {
    let mut cols = 0;
    for (i, c) in t.bytes().enumerate() {
        match c {
            b' ' => cols += 1,
            b'\t' => cols += 4 - cols % 4,
            _ => return (cols, i),
        }
    }
    (cols, t.len())
}

fn is_blank(t: &str) -> bool {
    t.bytes().all(|c| c == b' ' || c == b'\t')
}

#[derive(Clone, Copy)]
struct ListItem {
    /// Column where the item's content starts.
    content_col: usize,
    /// Start number is 1 (or a bullet).
    starts_one: bool,
    empty: bool,
    /// Bytes of the marker and its spaces (from the line start).
    len: usize,
}

/// A list item marker at the start of `t` (after up to 3 spaces).
fn list_item(t: &str) -> Option<ListItem> {
    let (cols, ib) = indent(t);
    if cols > 3 {
        return None;
    }
    let rest = &t[ib..];
    let rb = rest.as_bytes();
    let (mlen, starts_one) = match rb.first()? {
        b'-' | b'+' | b'*' => (1, true),
        b'0'..=b'9' => {
            let digits = rb.iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 9 || !matches!(rb.get(digits), Some(b'.') | Some(b')')) {
                return None;
            }
            let one = rest[..digits].trim_start_matches('0') == "1";
            (digits + 1, one)
        }
        _ => return None,
    };
    let after = &rest[mlen..];
    if after.is_empty() {
        return Some(ListItem {
            content_col: cols + mlen + 1,
            starts_one,
            empty: true,
            len: ib + mlen,
        });
    }
    let (sp, spb) = indent(after);
    if sp == 0 {
        return None;
    }
    let empty = is_blank(after);
    // Five or more spaces: the item content is indented code, one space counts.
    let (content_sp, content_b) = if sp > 4 || empty { (1, 1) } else { (sp, spb) };
    Some(ListItem {
        content_col: cols + mlen + content_sp,
        starts_one,
        empty,
        len: ib + mlen + content_b.min(after.len()),
    })
}

#[derive(Clone, Copy)]
struct Fence {
    ch: u8,
    len: usize,
}

fn fence_open(t: &str) -> Option<Fence> {
    let (cols, ib) = indent(t);
    if cols > 3 {
        return None;
    }
    let rest = &t[ib..];
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&c| c == ch).count();
    if len < 3 || (ch == b'`' && rest[len..].contains('`')) {
        return None;
    }
    Some(Fence { ch, len })
}

fn fence_close(t: &str, f: Fence) -> bool {
    let (cols, ib) = indent(t);
    if cols > 3 {
        return false;
    }
    let rest = &t[ib..];
    let n = rest.bytes().take_while(|&c| c == f.ch).count();
    n >= f.len && is_blank(&rest[n..])
}

fn atx_heading(t: &str) -> bool {
    let (cols, ib) = indent(t);
    let rest = &t[ib..];
    let n = rest.bytes().take_while(|&c| c == b'#').count();
    cols <= 3 && (1..=6).contains(&n) && matches!(rest.as_bytes().get(n), None | Some(b' ' | b'\t'))
}

fn thematic_or_dash_underline(t: &str) -> bool {
    let (cols, ib) = indent(t);
    if cols > 3 {
        return false;
    }
    let rest = t[ib..].trim_end_matches([' ', '\t']);
    let Some(&c) = rest.as_bytes().first() else {
        return false;
    };
    if !matches!(c, b'-' | b'*' | b'_') {
        return false;
    }
    let marks = rest.bytes().filter(|&b| b == c).count();
    let only = rest.bytes().all(|b| b == c || b == b' ' || b == b'\t');
    // `-`/`--` under a paragraph is a setext underline: it ends it too.
    only && (marks >= 3 || (c == b'-' && !rest.contains([' ', '\t'])))
}

fn equals_underline(t: &str) -> bool {
    let (cols, ib) = indent(t);
    let rest = t[ib..].trim_end_matches([' ', '\t']);
    cols <= 3 && !rest.is_empty() && rest.bytes().all(|b| b == b'=')
}

/// Where a line's quote content starts, after any list markers. Any
/// indentation counts (deeper list items allow more than 3 spaces): reading
/// an indented-code `>` line as a quote only hides more.
fn quote_start(t: &str) -> Option<usize> {
    let mut at = 0;
    loop {
        let rest = &t[at..];
        let (_, ib) = indent(rest);
        if rest[ib..].starts_with('>') {
            return Some(at + ib + 1);
        }
        match list_item(rest) {
            Some(li) if li.len > 0 && !li.empty => at += li.len,
            _ => return None,
        }
    }
}

fn quote_marker(t: &str) -> Option<usize> {
    let (cols, ib) = indent(t);
    (cols <= 3 && t[ib..].starts_with('>')).then_some(ib + 1)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum HtmlEnd {
    /// Ends at the line containing this text (types 1–5).
    Contains(&'static str),
    /// Ends at the line containing a closing tag of the given name (type 1).
    CloseTag(&'static str),
    /// Ends before a blank line (types 6–7).
    Blank,
}

fn tag_name_at(t: &str) -> Option<(&str, usize)> {
    let b = t.as_bytes();
    if !b.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-')
        .count();
    Some((&t[..n], n))
}

/// The HTML block a line starts, per CommonMark 4.6.
fn html_block_start(t: &str, in_paragraph: bool) -> Option<HtmlEnd> {
    let (cols, ib) = indent(t);
    if cols > 3 {
        return None;
    }
    let rest = &t[ib..];
    if !rest.starts_with('<') {
        return None;
    }
    let r = &rest[1..];
    let lower = r.to_ascii_lowercase();
    for name in ["pre", "script", "style", "textarea"] {
        if let Some(after) = lower.strip_prefix(name)
            && matches!(after.as_bytes().first(), None | Some(b' ' | b'\t' | b'>'))
        {
            return Some(HtmlEnd::CloseTag(name));
        }
    }
    if r.starts_with("!--") {
        return Some(HtmlEnd::Contains("-->"));
    }
    if r.starts_with('?') {
        return Some(HtmlEnd::Contains("?>"));
    }
    if r.starts_with("![CDATA[") {
        return Some(HtmlEnd::Contains("]]>"));
    }
    if r.starts_with('!') && r.as_bytes().get(1).is_some_and(|c| c.is_ascii_alphabetic()) {
        return Some(HtmlEnd::Contains(">"));
    }
    let (closing, name_src) = match r.strip_prefix('/') {
        Some(x) => (true, x),
        None => (false, r),
    };
    let (name, n) = tag_name_at(name_src)?;
    let after = &name_src[n..];
    let lname = name.to_ascii_lowercase();
    if BLOCK_TAGS.contains(&lname.as_str())
        && (after.is_empty() || after.starts_with([' ', '\t', '>']) || after.starts_with("/>"))
    {
        return Some(HtmlEnd::Blank);
    }
    // Type 7 (a complete tag alone on its line) cannot interrupt a paragraph.
    if in_paragraph {
        return None;
    }
    let whole = rest;
    let res = if closing {
        closing_tag(whole.as_bytes(), 0)
    } else {
        open_tag(whole.as_bytes(), 0)
    };
    match res {
        Parse::Complete(end) if is_blank(&whole[end..]) => Some(HtmlEnd::Blank),
        _ => None,
    }
}

/// Ends the current paragraph (CommonMark: a new block starts here).
fn hard_interrupter(t: &str) -> bool {
    if is_blank(t)
        || fence_open(t).is_some()
        || atx_heading(t)
        || thematic_or_dash_underline(t)
        || quote_marker(t).is_some()
        || html_block_start(t, true).is_some()
    {
        return true;
    }
    // Only a non-empty bullet or an ordered item starting at 1 interrupts.
    list_item(t).is_some_and(|li| !li.empty && li.starts_one)
}

/// May end the paragraph, depending on list context we do not track.
fn soft_boundary(t: &str) -> bool {
    equals_underline(t) || list_item(t).is_some()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Parse {
    Complete(usize),
    Incomplete,
    Fail,
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// cmark open tag at `t[i] == '<'`.
fn open_tag(t: &[u8], i: usize) -> Parse {
    let mut j = i + 1;
    match t.get(j) {
        None => return Parse::Incomplete,
        Some(c) if c.is_ascii_alphabetic() => {}
        Some(_) => return Parse::Fail,
    }
    while j < t.len() && (t[j].is_ascii_alphanumeric() || t[j] == b'-') {
        j += 1;
    }
    loop {
        let ws_start = j;
        while j < t.len() && is_ws(t[j]) {
            j += 1;
        }
        let Some(&c) = t.get(j) else {
            return Parse::Incomplete;
        };
        if c == b'>' {
            return Parse::Complete(j + 1);
        }
        if c == b'/' {
            return match t.get(j + 1) {
                None => Parse::Incomplete,
                Some(b'>') => Parse::Complete(j + 2),
                Some(_) => Parse::Fail,
            };
        }
        if j == ws_start || !(c.is_ascii_alphabetic() || c == b'_' || c == b':') {
            return Parse::Fail;
        }
        while j < t.len() && (t[j].is_ascii_alphanumeric() || b"_.:-".contains(&t[j])) {
            j += 1;
        }
        let after_name = j;
        while j < t.len() && is_ws(t[j]) {
            j += 1;
        }
        match t.get(j) {
            None => return Parse::Incomplete,
            Some(b'=') => {
                j += 1;
                while j < t.len() && is_ws(t[j]) {
                    j += 1;
                }
                match t.get(j) {
                    None => return Parse::Incomplete,
                    Some(&q @ (b'"' | b'\'')) => match t[j + 1..].iter().position(|&c| c == q) {
                        Some(p) => j = j + 1 + p + 1,
                        None => return Parse::Incomplete,
                    },
                    Some(_) => {
                        let s = j;
                        while j < t.len() && !is_ws(t[j]) && !b"\"'=<>`".contains(&t[j]) {
                            j += 1;
                        }
                        if j == s {
                            return Parse::Fail;
                        }
                        if j == t.len() {
                            return Parse::Incomplete;
                        }
                    }
                }
            }
            Some(_) => j = after_name,
        }
    }
}

fn closing_tag(t: &[u8], i: usize) -> Parse {
    let mut j = i + 2;
    match t.get(j) {
        None => return Parse::Incomplete,
        Some(c) if c.is_ascii_alphabetic() => {}
        Some(_) => return Parse::Fail,
    }
    while j < t.len() && (t[j].is_ascii_alphanumeric() || t[j] == b'-') {
        j += 1;
    }
    while j < t.len() && is_ws(t[j]) {
        j += 1;
    }
    match t.get(j) {
        None => Parse::Incomplete,
        Some(b'>') => Parse::Complete(j + 1),
        Some(_) => Parse::Fail,
    }
}

fn find(t: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    if from > t.len() {
        return None;
    }
    t[from..]
        .windows(pat.len())
        .position(|w| w == pat)
        .map(|p| from + p)
}

/// cmark raw HTML at `t[i] == '<'`; comments must be valid under both the
/// old (cmark-gfm) and the current spec, otherwise they count as open.
fn raw_html(t: &[u8], i: usize) -> Parse {
    let r = &t[i..];
    if r.starts_with(b"<!--") {
        return match find(t, i + 4, b"-->") {
            None => Parse::Incomplete,
            Some(e) => {
                let body = &t[i + 4..e];
                let dubious = body.starts_with(b">")
                    || body.starts_with(b"->")
                    || body.ends_with(b"-")
                    || find(body, 0, b"--").is_some();
                if dubious {
                    Parse::Incomplete
                } else {
                    Parse::Complete(e + 3)
                }
            }
        };
    }
    if r.len() < 2 {
        return Parse::Incomplete;
    }
    if r.starts_with(b"<![CDATA[") {
        return find(t, i + 9, b"]]>").map_or(Parse::Incomplete, |e| Parse::Complete(e + 3));
    }
    if r.starts_with(b"<?") {
        return find(t, i + 2, b"?>").map_or(Parse::Incomplete, |e| Parse::Complete(e + 2));
    }
    if r.starts_with(b"<!") {
        return match r.get(2) {
            None => Parse::Incomplete,
            Some(c) if c.is_ascii_alphabetic() => {
                find(t, i + 2, b">").map_or(Parse::Incomplete, |e| Parse::Complete(e + 1))
            }
            Some(_) => Parse::Fail,
        };
    }
    if r.starts_with(b"</") {
        return closing_tag(t, i);
    }
    open_tag(t, i)
}

/// cmark autolink at `t[i] == '<'` (never spans lines).
fn autolink(t: &[u8], i: usize) -> Option<usize> {
    let r = &t[i + 1..];
    let close = r.iter().position(|&c| c == b'>')?;
    let inner = &r[..close];
    if inner.iter().any(|&c| c <= b' ' || c == b'<') {
        return None;
    }
    let scheme = inner.iter().position(|&c| c == b':');
    if let Some(s) = scheme
        && (2..=32).contains(&s)
        && inner[0].is_ascii_alphabetic()
        && inner[..s]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"+.-".contains(c))
    {
        return Some(i + 1 + close + 1);
    }
    let at = inner.iter().position(|&c| c == b'@')?;
    let local_ok = at > 0
        && inner[..at]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b".!#$%&'*+/=?^_`{|}~-".contains(c));
    let domain = &inner[at + 1..];
    let domain_ok = !domain.is_empty()
        && domain.split(|&c| c == b'.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.first().is_some_and(u8::is_ascii_alphanumeric)
                && l.last().is_some_and(u8::is_ascii_alphanumeric)
                && l.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        });
    (local_ok && domain_ok).then_some(i + 1 + close + 1)
}

/// cmark inline link tail at `t[i] == '('`.
fn link_tail(t: &[u8], i: usize) -> Parse {
    let mut j = i + 1;
    let skip_ws = |j: &mut usize| -> bool {
        let mut nl = false;
        let s = *j;
        while *j < t.len() {
            match t[*j] {
                b' ' | b'\t' => *j += 1,
                b'\n' if !nl => {
                    nl = true;
                    *j += 1
                }
                _ => break,
            }
        }
        *j > s
    };
    skip_ws(&mut j);
    let Some(&c) = t.get(j) else {
        return Parse::Incomplete;
    };
    if c == b')' {
        return Parse::Complete(j + 1);
    }
    if c == b'<' {
        j += 1;
        loop {
            match t.get(j) {
                None => return Parse::Incomplete,
                Some(b'\\') => j += 2,
                Some(b'>') => {
                    j += 1;
                    break;
                }
                Some(b'\n' | b'<') => return Parse::Fail,
                Some(_) => j += 1,
            }
        }
    } else {
        let mut depth = 0usize;
        loop {
            match t.get(j) {
                None => return Parse::Incomplete,
                Some(b'\\') => j += 2,
                Some(b'(') => {
                    depth += 1;
                    j += 1
                }
                Some(b')') if depth == 0 => break,
                Some(b')') => {
                    depth -= 1;
                    j += 1
                }
                Some(&c) if c <= b' ' => break,
                Some(_) => j += 1,
            }
        }
    }
    let had_ws = skip_ws(&mut j);
    let Some(&c) = t.get(j) else {
        return Parse::Incomplete;
    };
    if c == b')' {
        return Parse::Complete(j + 1);
    }
    if !had_ws || !matches!(c, b'"' | b'\'' | b'(') {
        return Parse::Fail;
    }
    let close = if c == b'(' { b')' } else { c };
    j += 1;
    loop {
        match t.get(j) {
            None => return Parse::Incomplete,
            Some(b'\\') => j += 2,
            Some(&x) if x == close => {
                j += 1;
                break;
            }
            Some(b'(') if c == b'(' => return Parse::Fail,
            Some(_) => j += 1,
        }
    }
    while j < t.len() && matches!(t[j], b' ' | b'\t' | b'\n') {
        j += 1;
    }
    match t.get(j) {
        None => Parse::Incomplete,
        Some(b')') => Parse::Complete(j + 1),
        Some(_) => Parse::Fail,
    }
}

/// HTML elements whose content GitHub shows as code or hides.
#[derive(Clone, Default, Debug)]
struct Elements {
    code_like: [usize; CODE_LIKE.len()],
    raw_text: bool,
}

impl Elements {
    fn any_open(&self) -> bool {
        self.raw_text || self.code_like.iter().any(|&n| n > 0)
    }

    /// Updates the counts for one complete raw tag (`<…>` source).
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
        if let Some(k) = CODE_LIKE.iter().position(|&c| c == name) {
            if closing {
                self.code_like[k] = self.code_like[k].saturating_sub(1);
            } else {
                self.code_like[k] += 1;
            }
        } else if !closing && RAW_TEXT.contains(&name.as_str()) {
            self.raw_text = true;
        }
    }
}

/// Scans paragraph text. In prefix mode, returns `true` when something may
/// still be open at the end of `t` (so the next line may be inside it).
fn scan_inline(t: &[u8], prefix: bool, el: &mut Elements) -> bool {
    let mut brackets: Vec<bool> = Vec::new(); // true = image opener
    let mut i = 0;
    while i < t.len() {
        match t[i] {
            b'\\' => {
                i += if t.get(i + 1).is_some_and(u8::is_ascii_punctuation) {
                    2
                } else {
                    1
                }
            }
            b'`' => {
                let k = t[i..].iter().take_while(|&&c| c == b'`').count();
                let mut j = i + k;
                let mut closed = None;
                while j < t.len() {
                    if t[j] == b'`' {
                        let m = t[j..].iter().take_while(|&&c| c == b'`').count();
                        if m == k {
                            closed = Some(j + m);
                            break;
                        }
                        j += m;
                    } else {
                        j += 1;
                    }
                }
                match closed {
                    Some(e) => i = e,
                    None if prefix => return true,
                    None => i += k,
                }
            }
            b'<' => {
                if let Some(e) = autolink(t, i) {
                    i = e;
                    continue;
                }
                match raw_html(t, i) {
                    Parse::Complete(e) => {
                        el.tag(&t[i..e]);
                        i = e;
                    }
                    Parse::Incomplete if prefix => return true,
                    _ => i += 1,
                }
            }
            b'!' if t.get(i + 1) == Some(&b'[') => {
                brackets.push(true);
                i += 2;
            }
            b'[' => {
                brackets.push(false);
                i += 1;
            }
            b']' => {
                let had = brackets.pop().is_some();
                i += 1;
                if !had {
                    continue;
                }
                match t.get(i) {
                    Some(b'(') => match link_tail(t, i) {
                        // A tail holding backticks or `<` might be text
                        // instead (no link formed): too close to call.
                        Parse::Complete(e)
                            if prefix && t[i..e].iter().any(|&c| c == b'`' || c == b'<') =>
                        {
                            return true;
                        }
                        Parse::Complete(e) => i = e,
                        Parse::Incomplete if prefix => return true,
                        _ => {}
                    },
                    Some(b'[') => match t[i..].iter().position(|&c| c == b']') {
                        Some(p) => i += p + 1,
                        None if prefix => return true,
                        None => {}
                    },
                    _ => {}
                }
            }
            _ => i += 1,
        }
    }
    prefix && brackets.iter().any(|&img| img)
}

/// State of the HTML tokenizer inside an HTML block.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum HtmlState {
    Text,
    Comment,
    Bogus,
    Tag(Option<u8>),
}

struct Scanner<'a> {
    body: &'a str,
    lines: Vec<Line>,
    out: Vec<SlashLine>,
    el: Elements,
    /// Everything from this offset on is hidden.
    hidden_from: Option<usize>,
}

/// A paragraph being collected: its lines as (line index, content start).
#[derive(Default)]
struct Para {
    lines: Vec<(usize, usize)>,
    soft: Vec<usize>,
    candidates: Vec<usize>,
}

impl<'a> Scanner<'a> {
    fn new(body: &'a str) -> Self {
        Scanner {
            body,
            lines: split_lines(body),
            out: Vec::new(),
            el: Elements::default(),
            hidden_from: None,
        }
    }

    fn text(&self, idx: usize) -> &'a str {
        let l = self.lines[idx];
        &self.body[l.start..l.end]
    }

    fn hide_rest(&mut self, from: usize) {
        if self.hidden_from.is_none() {
            self.hidden_from = Some(from);
        }
    }

    fn emit(&mut self, idx: usize) {
        let l = self.lines[idx];
        let t = self.text(idx);
        let (_, ib) = indent(t);
        let offset = l.start + ib;
        if self.hidden_from.is_some_and(|h| h <= offset) {
            return;
        }
        let mut text = &t[ib..];
        // A same-line HTML comment is invisible; an unclosed one hides the rest.
        let mut visible = String::new();
        while let Some(p) = text.find("<!--") {
            visible.push_str(&text[..p]);
            match text[p + 4..].find("-->") {
                Some(e) => text = &text[p + 4 + e + 3..],
                None => {
                    text = "";
                    break;
                }
            }
        }
        visible.push_str(text);
        self.out.push(SlashLine {
            line: idx + 1,
            offset,
            text: visible,
        });
    }

    /// Joined paragraph text of `lines[from..to]`.
    fn para_text(&self, p: &Para, from: usize, to: usize) -> String {
        let mut s = String::new();
        for &(idx, cs) in &p.lines[from..to] {
            let l = self.lines[idx];
            s.push_str(&self.body[cs..l.end]);
            s.push('\n');
        }
        s
    }

    /// Ends a quoted paragraph: GitHub renders quoted raw HTML as is, so a
    /// construct it leaves open (`> <!--`) hides everything after the quote.
    fn finish_quote(&mut self, p: Para, html: &mut HtmlState, at: usize) {
        self.finish_para(p, true);
        if std::mem::replace(html, HtmlState::Text) != HtmlState::Text {
            self.hide_rest(at);
        }
    }

    /// Feeds one quoted line to the HTML tokenizer.
    fn quote_line(&mut self, t: &str, html: &mut HtmlState, at: usize) {
        *html = self.html_line(t.as_bytes(), *html);
        if self.el.raw_text {
            self.hide_rest(at);
        }
    }

    fn finish_para(&mut self, p: Para, quoted: bool) {
        if p.lines.is_empty() {
            return;
        }
        let start_el = self.el.clone();
        if !quoted {
            for &k in &p.candidates {
                if self.candidate_ok(&p, k, &start_el) {
                    let idx = p.lines[k].0;
                    self.emit(idx);
                }
            }
        }
        if quoted {
            return;
        }
        let all = self.para_text(&p, 0, p.lines.len());
        let mut el = self.el.clone();
        scan_inline(all.as_bytes(), false, &mut el);
        if el.raw_text && !self.el.raw_text {
            let first = self.lines[p.lines[0].0].start;
            self.hide_rest(first);
        }
        self.el = el;
    }

    fn candidate_ok(&self, p: &Para, k: usize, start_el: &Elements) -> bool {
        // Everything opened before line k in this paragraph must be closed,
        // whichever of the possible paragraph starts GitHub chooses.
        let starts = std::iter::once(0).chain(p.soft.iter().copied().filter(|&s| s < k));
        for s in starts {
            let prefix = self.para_text(p, s, k);
            let mut el = start_el.clone();
            if scan_inline(prefix.as_bytes(), true, &mut el) || el.any_open() {
                return false;
            }
        }
        // A possible link reference definition spanning to or past line k.
        let rest = self.para_text(p, 0, p.lines.len());
        let mut off = 0;
        for (j, &(idx, cs)) in p.lines.iter().enumerate() {
            let l = self.lines[idx];
            let content = &self.body[cs..l.end];
            // A definition cannot interrupt a paragraph: only at its start
            // (or where a list item may start a new one).
            if j <= k
                && (j == 0 || p.soft.contains(&j))
                && content.trim_start_matches([' ', '\t']).starts_with('[')
                && rest[off..].contains("]:")
            {
                return false;
            }
            off += content.len() + 1;
        }
        !start_el.any_open()
    }

    fn run(&mut self) {
        let mut fence: Option<(Fence, usize, bool)> = None; // fence, content col, quoted
        let mut html: Option<(HtmlEnd, usize, bool, HtmlState)> = None;
        let mut para = Para::default();
        let mut qpara = Para::default();
        let mut quote_lazy = false;
        let mut quote_html = HtmlState::Text;
        let mut quote_html_end: Option<HtmlEnd> = None;
        let mut quoted_fence: Option<Fence> = None;
        let mut list_cols: Vec<usize> = Vec::new();
        let mut prev_indented_code = false;
        // A fence that may or may not exist (see `soft_item`), and whether
        // it just ended (the paragraph may restart there).
        let mut shadow: Option<(Fence, usize)> = None;
        let mut shadow_ended = false;

        for idx in 0..self.lines.len() {
            if self.hidden_from.is_some() {
                return;
            }
            let t = self.text(idx);
            let l = self.lines[idx];
            let blank = is_blank(t);
            let (cols, ib) = indent(t);
            let after_indented = std::mem::replace(&mut prev_indented_code, false);
            let mut in_shadow = false;
            if let Some((f, col)) = shadow
                && !blank
            {
                if cols >= col {
                    in_shadow = true;
                    if fence_close(strip_cols(t, col), f) {
                        shadow = None;
                        shadow_ended = true;
                    }
                } else {
                    shadow = None;
                    shadow_ended = true;
                }
            }

            if let Some((f, col, _)) = fence {
                if blank || cols >= col {
                    let stripped = strip_cols(t, col);
                    if fence_close(stripped, f) {
                        fence = None;
                    }
                    continue;
                }
                fence = None; // the list item holding the fence ended
            }

            if let Some((end, col, _, state)) = html {
                let ended_by_container = !blank && cols < col;
                if ended_by_container || (end == HtmlEnd::Blank && blank) {
                    self.end_html(state, l.start);
                    html = None;
                } else {
                    let line_state = state;
                    // Elements open at the start of the line, not after it.
                    let open_before = self.el.any_open();
                    let new_state = self.html_line(t.as_bytes(), state);
                    if line_state == HtmlState::Text
                        && cols <= 3
                        && t[ib..].starts_with('/')
                        && !open_before
                    {
                        self.emit(idx);
                    }
                    let done = match end {
                        HtmlEnd::Contains(s) => t.contains(s),
                        HtmlEnd::CloseTag(n) => t.to_ascii_lowercase().contains(&format!("</{n}")),
                        HtmlEnd::Blank => false,
                    };
                    if done {
                        self.end_html(new_state, l.end);
                        html = None;
                    } else {
                        html = Some((end, col, false, new_state));
                    }
                    continue;
                }
            }

            if blank {
                self.finish_para(std::mem::take(&mut para), false);
                self.finish_quote(std::mem::take(&mut qpara), &mut quote_html, l.start);
                quote_html_end = None;
                quote_lazy = false;
                quoted_fence = None;
                continue;
            }

            // Block quotes: every quoted line is hidden; scan it only for
            // HTML elements that stay open after the quote.
            // An indented `>` continuing a paragraph is text, unless a list
            // item's content column makes it a quote.
            let quote_enclosing = list_cols.iter().rev().find(|&&c| c <= cols).copied();
            let continuation_text =
                !para.lines.is_empty() && cols >= quote_enclosing.unwrap_or(0) + 4;
            if let Some(qb) = quote_start(t).filter(|_| !continuation_text) {
                self.finish_para(std::mem::take(&mut para), false);
                let mut content_start = qb;
                while let Some(q) = quote_marker(&t[content_start..]) {
                    content_start += q;
                }
                let content = &t[content_start..];
                if let Some(f) = quoted_fence {
                    if fence_close(content.trim_start_matches(' '), f) {
                        quoted_fence = None;
                    }
                    continue;
                }
                if let Some(f) = fence_open(content.trim_start_matches(' ')) {
                    self.finish_quote(std::mem::take(&mut qpara), &mut quote_html, l.start);
                    quote_html_end = None;
                    quoted_fence = Some(f);
                    quote_lazy = false;
                    continue;
                }
                if is_blank(content) {
                    self.finish_quote(std::mem::take(&mut qpara), &mut quote_html, l.start);
                    quote_html_end = None;
                    quote_lazy = false;
                } else {
                    qpara.lines.push((idx, l.start + content_start));
                    self.quote_line(content, &mut quote_html, l.start);
                    // Only a paragraph continues lazily; an HTML block in the
                    // quote ends with the quote.
                    let trimmed = content.trim_start_matches([' ', '\t']);
                    if quote_html_end.is_none() {
                        quote_html_end = html_block_start(trimmed, quote_lazy);
                    }
                    let ended = match quote_html_end {
                        Some(HtmlEnd::Contains(e)) => trimmed.contains(e),
                        Some(HtmlEnd::CloseTag(n)) => {
                            trimmed.to_ascii_lowercase().contains(&format!("</{n}"))
                        }
                        _ => false,
                    };
                    if ended {
                        quote_html_end = None;
                    }
                    quote_lazy = quote_html_end.is_none();
                }
                continue;
            }
            quoted_fence = None;
            if quote_lazy && !hard_interrupter(t) {
                qpara.lines.push((idx, l.start));
                self.quote_line(t, &mut quote_html, l.start);
                continue;
            }
            quote_lazy = false;
            self.finish_quote(std::mem::take(&mut qpara), &mut quote_html, l.start);
            quote_html_end = None;

            let in_para = !para.lines.is_empty();
            let item = list_item(t);
            if !in_para || item.is_some() {
                // Not a continuation line: list items with deeper content end.
                while list_cols.last().is_some_and(|&c| c > cols) {
                    list_cols.pop();
                }
            }
            let enclosing = list_cols
                .iter()
                .rev()
                .find(|&&c| c <= cols)
                .copied()
                .unwrap_or(0);

            if !in_para && cols >= enclosing + 4 {
                prev_indented_code = true;
                continue;
            }

            // Strip nested list markers to see what the item holds.
            let mut content_at = 0;
            let mut content_col = enclosing;
            let mut item_here = None;
            while let Some(li) = list_item(&t[content_at..]) {
                item_here.get_or_insert(li);
                content_col = cols.max(content_col) + (li.content_col - indent(&t[content_at..]).0);
                content_at += li.len;
                if li.empty {
                    break;
                }
            }
            let soft_item = in_para && item_here.is_some() && !hard_interrupter(t);
            // Only a certain list item makes a container: a wrong one would
            // end fences and HTML blocks early.
            if let Some(li) = item_here
                && !soft_item
            {
                list_cols.retain(|&c| c <= cols);
                list_cols.push(content_col.max(li.content_col));
            }
            // Blocks inside a list item may be indented by its content column.
            let content = if item_here.is_some() {
                &t[content_at..]
            } else {
                strip_cols(t, enclosing)
            };

            // `2. ```` inside a paragraph: continuation text at top level, a
            // new item holding a fence inside a list. Read it as text, and
            // also refuse the lines the fence would hold.
            if soft_item {
                if let Some(f) = fence_open(content) {
                    shadow = Some((f, content_col));
                } else if html_block_start(content, false).is_some() {
                    self.hide_rest(l.start);
                    continue;
                }
            } else if let Some(f) = fence_open(content) {
                self.finish_para(std::mem::take(&mut para), false);
                let col = if item_here.is_some() {
                    content_col
                } else {
                    enclosing
                };
                fence = Some((f, col, false));
                continue;
            }
            if let Some(end) = html_block_start(content, in_para && item_here.is_none()) {
                self.finish_para(std::mem::take(&mut para), false);
                let col = if item_here.is_some() {
                    content_col
                } else {
                    enclosing
                };
                let state = self.html_line(content.as_bytes(), HtmlState::Text);
                let done = match end {
                    HtmlEnd::Contains(s) => content.contains(s),
                    HtmlEnd::CloseTag(n) => {
                        content.to_ascii_lowercase().contains(&format!("</{n}"))
                    }
                    HtmlEnd::Blank => false,
                };
                if done {
                    self.end_html(state, l.end);
                } else {
                    html = Some((end, col, false, state));
                }
                continue;
            }

            let hard = in_para && hard_interrupter(t);
            if hard || atx_heading(content) || thematic_or_dash_underline(t) {
                self.finish_para(std::mem::take(&mut para), false);
            }
            if thematic_or_dash_underline(t) {
                continue;
            }
            let restart = !in_shadow && std::mem::take(&mut shadow_ended);
            if !para.lines.is_empty() && (soft_boundary(t) || restart) {
                para.soft.push(para.lines.len());
            }
            let k = para.lines.len();
            para.lines.push((idx, l.start + content_at));
            if item_here.is_none()
                && cols <= 3
                && !after_indented
                && !in_shadow
                && t[ib..].starts_with('/')
            {
                para.candidates.push(k);
            }
            if atx_heading(content) {
                self.finish_para(std::mem::take(&mut para), false);
            }
        }
        self.finish_para(std::mem::take(&mut para), false);
        self.finish_para(std::mem::take(&mut qpara), true);
    }

    /// Runs the HTML tokenizer over one line of an HTML block.
    fn html_line(&mut self, t: &[u8], mut st: HtmlState) -> HtmlState {
        let mut i = 0;
        while i < t.len() {
            match st {
                HtmlState::Text => {
                    if t[i] != b'<' {
                        i += 1;
                        continue;
                    }
                    let r = &t[i..];
                    if r.starts_with(b"<!--") {
                        st = HtmlState::Comment;
                        i += 4;
                        // `<!-->` and `<!--->` close at once in HTML.
                        if t.get(i) == Some(&b'>') {
                            st = HtmlState::Text;
                            i += 1;
                        } else if t[i..].starts_with(b"->") {
                            st = HtmlState::Text;
                            i += 2;
                        }
                    } else if r.starts_with(b"<!") || r.starts_with(b"<?") {
                        st = HtmlState::Bogus;
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
                        self.el.tag(&r[..name_end]);
                        st = HtmlState::Tag(None);
                        i += 1;
                    } else {
                        i += 1;
                    }
                }
                HtmlState::Comment => match find(t, i, b"-->") {
                    Some(e) => {
                        st = HtmlState::Text;
                        i = e + 3;
                    }
                    None => i = t.len(),
                },
                HtmlState::Bogus => match t[i..].iter().position(|&c| c == b'>') {
                    Some(p) => {
                        st = HtmlState::Text;
                        i += p + 1;
                    }
                    None => i = t.len(),
                },
                HtmlState::Tag(q) => {
                    let c = t[i];
                    i += 1;
                    st = match (q, c) {
                        (None, b'"' | b'\'') => HtmlState::Tag(Some(c)),
                        (Some(x), c) if c == x => HtmlState::Tag(None),
                        (None, b'>') => HtmlState::Text,
                        _ => st,
                    };
                }
            }
        }
        st
    }

    fn end_html(&mut self, state: HtmlState, at: usize) {
        if state != HtmlState::Text || self.el.raw_text {
            // The browser keeps the construct open past the block.
            self.hide_rest(at);
        }
    }
}

fn strip_cols(t: &str, cols: usize) -> &str {
    let mut c = 0;
    for (i, b) in t.bytes().enumerate() {
        if c >= cols {
            return &t[i..];
        }
        match b {
            b' ' => c += 1,
            b'\t' => c += 4 - c % 4,
            _ => return &t[i..],
        }
    }
    ""
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
        assert_eq!(lines("    code\n/use 1"), Vec::<usize>::new());
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
        // Not a fence: a backtick fence's info string has no backtick.
        assert_eq!(lines("``` a`b\n/use 1"), Vec::<usize>::new());
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
}
