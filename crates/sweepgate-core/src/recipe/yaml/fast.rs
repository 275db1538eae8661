//! A direct reader for the YAML the benchmark repository writes: block
//! mappings and sequences, one-line flow mappings and lists, one-line plain
//! and quoted scalars, comments. It builds the same tree, positions and
//! repeated-key list as serde-saphyr, several times faster on the dense
//! master configs. Anything outside that subset (anchors, tags, block or
//! multi-line scalars, escapes it does not know, scalars whose YAML 1.1
//! type is not obvious, any error) returns `None`, and the caller reads the
//! file with serde-saphyr, which also words every error.

use super::{Duplicate, Node, Pos, Value, key_text};

/// Reads `text`, or `None` when the document is outside the subset.
pub(super) fn parse(text: &str) -> Option<(Node, Vec<Duplicate>)> {
    parse_from(text, 1)
}

/// [`parse`] of a slice of a larger document whose first line is
/// `first_line`.
pub(super) fn parse_from(text: &str, first_line: u32) -> Option<(Node, Vec<Duplicate>)> {
    let s = text.as_bytes();
    // serde-saphyr's budget decides on huge inputs; tabs and CRs are left
    // to it too.
    if s.len() > MAX_INPUT || s.iter().any(|&c| c == b'\t' || c == b'\r') {
        return None;
    }
    let mut p = Reader {
        s,
        text,
        i: 0,
        line: first_line,
        line_start: 0,
        depth: 0,
        dups: Vec::new(),
    };
    let indent = p.next_content()?;
    if s[p.i..].starts_with(b"---") || s[p.i..].starts_with(b"...") || s[p.i] == b'%' {
        return None;
    }
    let node = p.block_node(indent as isize - 1)?;
    if p.i < s.len() {
        return None;
    }
    Some((node, p.dups))
}

struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    line: u32,
    line_start: usize,
    /// Collections open around the current one.
    depth: usize,
    dups: Vec<Duplicate>,
}

/// Well inside serde-saphyr's default caps (nesting 64, implicit keys of
/// 1,024 characters), so the subset never accepts what it would refuse.
const MAX_DEPTH: usize = 32;
const MAX_KEY: usize = 512;
const MAX_INPUT: usize = 16 << 20;

impl Reader<'_> {
    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn peek(&self) -> u8 {
        self.s.get(self.i).copied().unwrap_or(0)
    }

    fn at(&self, i: usize) -> u8 {
        self.s.get(i).copied().unwrap_or(0)
    }

    /// 1-based column of byte `i` of the current line, in characters.
    fn column_of(&self, i: usize) -> u32 {
        let line = &self.s[self.line_start..i];
        let chars = if line.is_ascii() {
            line.len()
        } else {
            line.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
        };
        u32::try_from(chars + 1).unwrap_or(u32::MAX)
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column_of(self.i),
        }
    }

    fn skip_spaces(&mut self) {
        while self.peek() == b' ' {
            self.i += 1;
        }
    }

    /// Moves to the first character of the next line with content (not
    /// blank, not only a comment) and returns its indentation; `None` at
    /// the end of the input (`i` is then the input's length).
    fn next_content(&mut self) -> Option<usize> {
        loop {
            self.skip_spaces();
            match self.peek() {
                0 if self.i >= self.s.len() => return None,
                b'\n' => self.newline(),
                b'#' => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                _ => return Some(self.i - self.line_start),
            }
        }
    }

    fn newline(&mut self) {
        self.i += 1;
        self.line += 1;
        self.line_start = self.i;
    }

    /// After an inline value: only spaces and a comment may follow on the
    /// line. Moves to the next content; its indentation, `None` at the end.
    fn end_line(&mut self) -> Result<Option<usize>, ()> {
        self.skip_spaces();
        match self.peek() {
            b'\n' => {}
            b'#' if self.i > 0 && self.s[self.i - 1] == b' ' => {}
            0 if self.i >= self.s.len() => return Ok(None),
            _ => return Err(()),
        }
        Ok(self.next_content())
    }

    fn indent(&self) -> usize {
        self.i - self.line_start
    }

    fn is_dash_entry(&self) -> bool {
        self.peek() == b'-' && matches!(self.at(self.i + 1), b' ' | b'\n' | 0)
    }

    /// A node starting at the current content, deeper than `parent`.
    fn block_node(&mut self, parent: isize) -> Option<Node> {
        let col = self.indent();
        if self.is_dash_entry() {
            return self.block_sequence(col);
        }
        if self.key_ahead() {
            return self.block_mapping(col);
        }
        let node = self.inline_value()?;
        match self.end_line().ok()? {
            Some(m) if m as isize > parent => None,
            _ => Some(node),
        }
    }

    /// The value after `key:` (`dash` false) or after `-` (`dash` true) of
    /// a collection at indentation `n`.
    fn block_value(&mut self, n: usize, dash: bool) -> Option<Node> {
        let before = self.i;
        self.skip_spaces();
        let c = self.peek();
        let empty =
            c == b'\n' || (c == 0 && self.i >= self.s.len()) || (c == b'#' && self.i > before);
        if empty {
            // serde-saphyr places an empty value at its `:`, or at the end of
            // the line of its `-`.
            let null = Node {
                pos: if dash {
                    let eol = self.s[self.i..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(self.s.len(), |k| self.i + k);
                    Pos {
                        line: self.line,
                        column: self.column_of(eol),
                    }
                } else {
                    Pos {
                        line: self.line,
                        column: self.column_of(before - 1),
                    }
                },
                value: Value::Null,
            };
            return match self.end_line().ok()? {
                Some(m) if m > n => self.block_node(n as isize),
                Some(m) if m == n && !dash && self.is_dash_entry() => {
                    // serde-saphyr places an indentless list at its first
                    // item; when that item starts on a later line than its
                    // `-`, it places it elsewhere: declined.
                    let dash_line = self.line;
                    let mut seq = self.block_sequence(m)?;
                    match &seq.value {
                        Value::Seq(items)
                            if items[0].value != Value::Null && items[0].pos.line == dash_line =>
                        {
                            seq.pos = items[0].pos;
                            Some(seq)
                        }
                        _ => None,
                    }
                }
                _ => Some(null),
            };
        }
        if self.i == before && !dash {
            return None;
        }
        if dash {
            let col = self.indent();
            if self.is_dash_entry() {
                return self.block_sequence(col);
            }
            if self.key_ahead() {
                return self.block_mapping(col);
            }
        }
        let node = self.inline_value()?;
        match self.end_line().ok()? {
            Some(m) if m > n => None,
            _ => Some(node),
        }
    }

    fn block_mapping(&mut self, n: usize) -> Option<Node> {
        self.enter()?;
        let pos = self.pos();
        let mut out: Vec<(Node, Node)> = Vec::new();
        loop {
            let key = self.key()?;
            let value = self.block_value(n, false)?;
            self.insert(&mut out, key, value);
            if self.i >= self.s.len() {
                break;
            }
            let m = self.indent();
            if m < n {
                break;
            }
            if m > n || self.is_dash_entry() {
                return None;
            }
        }
        self.depth -= 1;
        Some(Node {
            pos,
            value: Value::Map(out),
        })
    }

    fn block_sequence(&mut self, n: usize) -> Option<Node> {
        self.enter()?;
        let pos = self.pos();
        let mut out = Vec::new();
        loop {
            self.i += 1;
            out.push(self.block_value(n, true)?);
            if self.i >= self.s.len() {
                break;
            }
            let m = self.indent();
            if m < n || (m == n && !self.is_dash_entry()) {
                break;
            }
            if m > n {
                return None;
            }
        }
        self.depth -= 1;
        Some(Node {
            pos,
            value: Value::Seq(out),
        })
    }

    /// PyYAML: a repeated key keeps its first position and the last value.
    fn insert(&mut self, out: &mut Vec<(Node, Node)>, k: Node, v: Node) {
        if let Some(slot) = out.iter_mut().find(|(ek, _)| ek.value == k.value) {
            self.dups.push(Duplicate {
                key: key_text(&k.value),
                line: k.line(),
                column: k.column(),
                first_line: slot.0.line(),
            });
            slot.1 = v;
        } else {
            out.push((k, v));
        }
    }

    /// Whether the current line holds `key:` (a one-line key) here.
    fn key_ahead(&self) -> bool {
        let mut j = self.i;
        match self.at(j) {
            q @ (b'"' | b'\'') => {
                j += 1;
                while j < self.s.len() && self.s[j] != q && self.s[j] != b'\n' {
                    if q == b'"' && self.s[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
                if self.at(j) != q {
                    return false;
                }
                j += 1;
                while self.at(j) == b' ' {
                    j += 1;
                }
                self.at(j) == b':' && matches!(self.at(j + 1), b' ' | b'\n' | 0)
            }
            b'{' | b'[' => false,
            _ => {
                while j < self.s.len() {
                    match self.s[j] {
                        b'\n' => return false,
                        b':' if matches!(self.at(j + 1), b' ' | b'\n' | 0) => return true,
                        b'#' if self.s[j - 1] == b' ' => return false,
                        _ => j += 1,
                    }
                }
                false
            }
        }
    }

    /// A one-line key and its `:`.
    fn key(&mut self) -> Option<Node> {
        let start = self.i;
        let key = match self.peek() {
            b'"' | b'\'' => {
                let k = self.quoted()?;
                self.skip_spaces();
                k
            }
            _ => {
                let pos = self.pos();
                while !(self.peek() == b':' && matches!(self.at(self.i + 1), b' ' | b'\n' | 0)) {
                    let c = self.peek();
                    if self.i >= self.s.len()
                        || c == b'\n'
                        || (c == b'#' && self.s[self.i - 1] == b' ')
                    {
                        return None;
                    }
                    self.i += 1;
                }
                let raw = self.text[start..self.i].trim_end_matches(' ');
                Node {
                    pos,
                    value: plain(raw)?,
                }
            }
        };
        if self.peek() != b':' || self.i - start > MAX_KEY {
            return None;
        }
        self.i += 1;
        Some(key)
    }

    /// A scalar or a one-line flow collection that is not a key.
    fn inline_value(&mut self) -> Option<Node> {
        match self.peek() {
            b'{' | b'[' => self.flow(),
            b'"' | b'\'' => self.quoted(),
            _ => {
                let pos = self.pos();
                let start = self.i;
                while self.i < self.s.len() {
                    match self.s[self.i] {
                        b'\n' => break,
                        b'#' if self.s[self.i - 1] == b' ' => break,
                        b':' if matches!(self.at(self.i + 1), b' ' | b'\n' | 0) => return None,
                        _ => self.i += 1,
                    }
                }
                let raw = self.text[start..self.i].trim_end_matches(' ');
                Some(Node {
                    pos,
                    value: plain(raw)?,
                })
            }
        }
    }

    /// A quoted scalar that closes on its line, with the plain escapes.
    fn quoted(&mut self) -> Option<Node> {
        let pos = self.pos();
        let q = self.peek();
        self.i += 1;
        let mut out = String::new();
        let mut start = self.i;
        loop {
            match self.peek() {
                b'\n' | 0 => return None,
                c if c == q => {
                    if q == b'\'' && self.at(self.i + 1) == b'\'' {
                        out.push_str(&self.text[start..=self.i]);
                        self.i += 2;
                        start = self.i;
                        continue;
                    }
                    out.push_str(&self.text[start..self.i]);
                    self.i += 1;
                    break;
                }
                b'\\' if q == b'"' => {
                    out.push_str(&self.text[start..self.i]);
                    out.push(match self.at(self.i + 1) {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'n' => '\n',
                        b't' => '\t',
                        _ => return None,
                    });
                    self.i += 2;
                    start = self.i;
                }
                _ => self.i += 1,
            }
        }
        Some(Node {
            pos,
            value: Value::Str(out),
        })
    }

    /// `{…}` or `[…]` closing on its line.
    fn flow(&mut self) -> Option<Node> {
        self.enter()?;
        let pos = self.pos();
        let map = self.peek() == b'{';
        let close = if map { b'}' } else { b']' };
        self.i += 1;
        self.skip_spaces();
        let mut items = Vec::new();
        let mut pairs: Vec<(Node, Node)> = Vec::new();
        if self.peek() == close {
            self.i += 1;
        } else {
            loop {
                if map {
                    let k = self.flow_item(true)?;
                    self.skip_spaces();
                    if self.peek() != b':' {
                        return None;
                    }
                    self.i += 1;
                    self.skip_spaces();
                    let v = self.flow_item(false)?;
                    self.insert(&mut pairs, k, v);
                } else {
                    items.push(self.flow_item(false)?);
                }
                self.skip_spaces();
                match self.peek() {
                    b',' => {
                        self.i += 1;
                        self.skip_spaces();
                        if matches!(self.peek(), b'}' | b']') {
                            return None;
                        }
                    }
                    c if c == close => {
                        self.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(Node {
            pos,
            value: if map {
                Value::Map(pairs)
            } else {
                Value::Seq(items)
            },
        })
    }

    /// One key, value or list item inside a flow collection.
    fn flow_item(&mut self, key: bool) -> Option<Node> {
        match self.peek() {
            b'{' | b'[' if !key => self.flow(),
            b'"' | b'\'' => self.quoted(),
            _ => {
                let pos = self.pos();
                let start = self.i;
                while self.i < self.s.len() {
                    match self.s[self.i] {
                        b'\n' | b',' | b'[' | b']' | b'{' | b'}' => break,
                        b'#' if self.s[self.i - 1] == b' ' => return None,
                        b':' => {
                            if !matches!(self.at(self.i + 1), b' ' | b',' | b']' | b'}' | b'\n') {
                                return None;
                            }
                            break;
                        }
                        _ => self.i += 1,
                    }
                }
                if !matches!(self.peek(), b',' | b']' | b'}' | b':') {
                    return None;
                }
                let raw = self.text[start..self.i].trim_end_matches(' ');
                if raw.is_empty() || raw.len() > MAX_KEY {
                    return None;
                }
                Some(Node {
                    pos,
                    value: plain(raw)?,
                })
            }
        }
    }
}

/// The YAML 1.1 value of a plain scalar as serde-saphyr resolves it, for
/// the spellings whose type is certain; `None` for the rest.
fn plain(raw: &str) -> Option<Value> {
    let b = raw.as_bytes();
    let first = *b.first()?;
    if matches!(
        first,
        b',' | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
            | b'?'
            | b':'
            | b'<'
            | b'='
    ) || raw == "-"
    {
        return None;
    }
    if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.') {
        return number(raw);
    }
    match raw {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        "null" | "Null" | "NULL" | "~" => return Some(Value::Null),
        _ => {}
    }
    const SPECIAL: [&str; 11] = [
        "true", "false", "yes", "no", "y", "n", "on", "off", "inf", "infinity", "nan",
    ];
    if b.len() <= 8 && SPECIAL.iter().any(|w| raw.eq_ignore_ascii_case(w)) {
        return None;
    }
    Some(Value::Str(raw.to_owned()))
}

/// Plain decimal integers and fractions; other number-like text is left to
/// serde-saphyr, and text that cannot be a number is a string.
fn number(raw: &str) -> Option<Value> {
    let unsigned = raw.strip_prefix('-').unwrap_or(raw);
    let d = unsigned.as_bytes();
    let digits = d.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == d.len() && digits > 0 && (digits == 1 || d[0] != b'0') {
        return raw.parse::<i64>().ok().map(Value::Int);
    }
    // `2_063_837`: single underscores between digits, no leading zero.
    if digits > 0
        && d[0] != b'0'
        && d.iter().all(|c| c.is_ascii_digit() || *c == b'_')
        && !unsigned.contains("__")
        && !unsigned.ends_with('_')
    {
        return raw.replace('_', "").parse::<i64>().ok().map(Value::Int);
    }
    if digits > 0
        && (digits == 1 || d[0] != b'0')
        && d.get(digits) == Some(&b'.')
        && d.len() > digits + 1
        && d[digits + 1..].iter().all(u8::is_ascii_digit)
    {
        return raw.parse::<f64>().ok().map(Value::Float);
    }
    // Two dots or letters no number spelling uses make it text (`1.2.1`,
    // `8k1k`): neither an integer nor a float parses it.
    if raw.bytes().filter(|&c| c == b'.').count() > 1 {
        return Some(Value::Str(raw.to_owned()));
    }
    let numeric = |c: &u8| c.is_ascii_digit() || b"_:.+-eExXoObBaAcCdDfFiInNtTzZ ".contains(c);
    if raw.as_bytes().iter().all(numeric) {
        return None;
    }
    if raw.starts_with('-') && matches!(raw.as_bytes().get(1), Some(b' ')) {
        return None;
    }
    Some(Value::Str(raw.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::super::saphyr_parse;
    use super::*;
    use proptest::prelude::*;

    /// The direct reader either declines or agrees with serde-saphyr on
    /// the tree, every position and the repeated keys.
    fn agrees(text: &str) -> Result<bool, String> {
        let Some(fast) = parse(text) else {
            return Ok(false);
        };
        match saphyr_parse(text) {
            Ok(slow) if slow == fast => Ok(true),
            Ok(slow) => Err(first_difference(&fast.0, &slow.0)
                .unwrap_or_else(|| format!("repeated keys {:?} vs {:?}", fast.1, slow.1))),
            Err(e) => Err(format!("serde-saphyr refuses it: {e}")),
        }
    }

    fn first_difference(a: &Node, b: &Node) -> Option<String> {
        if a.pos != b.pos {
            return Some(format!(
                "{:?} at {:?} vs {:?} at {:?}",
                a.value, a.pos, b.value, b.pos
            ));
        }
        match (&a.value, &b.value) {
            (Value::Seq(x), Value::Seq(y)) if x.len() == y.len() => {
                x.iter().zip(y).find_map(|(a, b)| first_difference(a, b))
            }
            (Value::Map(x), Value::Map(y)) if x.len() == y.len() => {
                x.iter().zip(y).find_map(|((ak, av), (bk, bv))| {
                    first_difference(ak, bk).or_else(|| first_difference(av, bv))
                })
            }
            (x, y) if x == y => None,
            (x, y) => Some(format!("{x:?} vs {y:?} at {:?}", a.pos)),
        }
    }

    fn yaml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                yaml_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                out.push(p);
            }
        }
    }

    #[test]
    fn the_repository_files_read_the_same_as_serde_saphyr() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
        let mut files = Vec::new();
        yaml_files(&root, &mut files);
        if let Some(more) = std::env::var_os("SWEEPGATE_YAML_CORPUS") {
            yaml_files(std::path::Path::new(&more), &mut files);
        }
        assert!(files.len() > 20, "{} YAML files", files.len());
        let mut read = Vec::new();
        for f in &files {
            let Ok(text) = std::fs::read_to_string(f) else {
                continue;
            };
            match agrees(&text) {
                Ok(true) => read.push(f.clone()),
                Ok(false) => {}
                Err(e) => panic!("{}: {e}", f.display()),
            }
        }
        // The files that matter for speed take the direct reader.
        for name in [
            "nvidia-master.yaml",
            "amd-master.yaml",
            "runners.yaml",
            "perf-changelog.yaml",
        ] {
            assert!(
                read.iter()
                    .any(|f| f.ends_with(format!("inferencex/configs/{name}"))
                        || f.ends_with(format!("inferencex/{name}"))),
                "{name} fell back to serde-saphyr"
            );
        }
    }

    #[test]
    fn edge_cases_agree_or_decline() {
        let cases = [
            "a: 1\nb:\n  - x\n  - z\nc: {d: 1, e: [2, 3]}\n",
            "a:\n- 1\n- 2\nb: 3\n",
            "- a: 1\n  b: 2\n- c\n- - x\n  - w\n-\n- {}\n- []\n",
            "a:\nb: ~\nc: null\nd: Null\n",
            "a: 'it''s'\nb: \"q\\\"x\\\\y\"\nc: \"\"\n",
            "k: v # comment\n# full line\nl: v#not\n",
            "a: 1\na: 2\nb: {x: 1, x: 2}\n",
            "1: one\n2.5: two\ntrue: three\n",
            "a: yes\nb: No\nc: 010\nd: 0x1F\ne: 1_000\nf: .inf\ng: -.5\nh: 1e3\n",
            "a: 8k1k\nb: 1.0\nc: -3\nd: 0\ne: -0\nf: 00\ng: 99999999999999999999\n",
            "a: 2_063_837\nb: 1__0\nc: 1_\nd: _1\ne: 0_1\nf: -1_000\n",
            "a: b: c\n",
            "a: [1, 2\n",
            "a: {b: 1,}\n",
            "a:\n  b: 1\n   c: 2\n",
            "a: x\n  y\n",
            "- a\nb: c\n",
            "a: &x 1\nb: *x\n",
            "a: |\n  text\n",
            "a: !!str 1\n",
            "? a\n: b\n",
            "a:    \n\n\n  b:   1   \n",
            "x: é\ny: {é: ü}\nzé: [ä, 'ö']\n",
            "a: {b: {c: [d, {e: f}]}}\n",
            "a: [\"x\", 'y', z]\n",
            "a: -\n",
            "- - - x\n",
            "a: http://x.y/z?q=1\nb: x:y\n",
            "top\n",
            "\"quoted top\"\n",
            "[1, 2]\n",
            "a:\n  - b\n  -\n  - c: 1\n    d:\n    - e\n",
            "a: {b: }\n",
            "a: [b: c]\n",
            "a: {b:c}\n",
            "a: 'x\n  y'\n",
            "a: \"\\u00e9\"\n",
            "---\na: 1\n",
            "a: 1\n...\n",
            "a: 1 # c\n  # deeper comment\nb: 2\n",
            "a:\n  # comment first\n  b: 1\n",
            "a: <<\n",
            "a:   \nb: 1\n",
            "-   \n- x\n",
            "- # c\n- x\n",
            "a: # c\nb: 1.2.1\nc: 1.2\nd: 1:30\ne: 1.2.3.4\n",
            "a: [1, [2, [3]]]\nb: {}\n",
            "a:\t1\n",
            // Found by the proptest below: an empty sequence item, then a
            // deeper mapping that is its content.
            "  a:\n  - \n   a: null\n",
        ];
        for c in cases {
            agrees(c).unwrap_or_else(|e| panic!("{c:?}: {e}"));
        }
        // The common shapes are read directly.
        for c in &cases[..9] {
            if c.contains("yes") {
                continue;
            }
            assert!(agrees(c) == Ok(true), "{c:?} declined");
        }
    }

    #[test]
    fn hostile_nesting_declines_without_recursing_deep() {
        let deep = "[".repeat(100_000);
        assert!(parse(&deep).is_none());
        let dashes = "- ".repeat(100_000) + "x\n";
        assert!(parse(&dashes).is_none());
    }

    /// Random documents from the shapes the reader knows and their near
    /// misses.
    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("1".to_owned()),
            Just("-2".to_owned()),
            Just("0.5".to_owned()),
            Just("007".to_owned()),
            Just("true".to_owned()),
            Just("yes".to_owned()),
            Just("null".to_owned()),
            Just("~".to_owned()),
            Just("x y".to_owned()),
            Just("a:b".to_owned()),
            Just("8k1k".to_owned()),
            Just("'q''s'".to_owned()),
            Just("\"d\\\"q\"".to_owned()),
            Just("é".to_owned()),
            Just("a #c".to_owned()),
            Just("a#c".to_owned()),
            Just("".to_owned()),
            Just("- ".to_owned()),
            Just("{a: 1, b: [x, 2]}".to_owned()),
            Just("[]".to_owned()),
            Just("{x: }".to_owned()),
            Just("&a".to_owned()),
            "[a-z]{1,3}",
        ]
    }

    fn line() -> impl Strategy<Value = String> {
        (0usize..6, 0u8..8, "[a-c]", scalar()).prop_map(|(indent, kind, key, value)| {
            let pad = " ".repeat(indent);
            match kind {
                0 => format!("{pad}{key}: {value}"),
                1 => format!("{pad}- {value}"),
                2 => format!("{pad}- {key}: {value}"),
                3 => format!("{pad}{key}:"),
                4 => format!("{pad}- - {value}"),
                5 => format!("{pad}# {value}"),
                6 => String::new(),
                _ => format!("{pad}{key}: # {value}"),
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn random_documents_agree_or_decline(lines in proptest::collection::vec(line(), 1..12)) {
            let text = lines.join("\n") + "\n";
            if let Err(e) = agrees(&text) {
                prop_assert!(false, "{text:?}: {e}");
            }
        }
    }
}
