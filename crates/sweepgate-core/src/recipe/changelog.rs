//! `perf-changelog.yaml`: the list of entries that select config keys to
//! sweep, and its two rule sets (docs/reference-automation.md §2.1–§2.2):
//!
//! * the **PR gate** (`pr_gate`): what `check-changelog` enforces before a
//!   sweep may run. It reads only the lines added by `git diff base head`,
//!   rejects any removed line with content, and validates the added entries.
//!   Position, link format and separators are *not* part of it.
//! * the **strict byte rules** (`strict_findings`): what the merge helper
//!   and recovery tool require (append at the tail, byte-identical history,
//!   one blank line between entries, canonical links). Reported as lint
//!   findings, never blocking.

use std::fmt;

use super::{Loc, ParseError};
use yaml::{Node, Value};

/// A string value and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub value: String,
    pub line: usize,
    pub column: usize,
}

/// A boolean field and the line of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    pub value: bool,
    pub line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScenarioType {
    FixedSeqLen,
    AgenticCoding,
}

impl ScenarioType {
    pub(crate) fn parse(s: &str) -> Option<ScenarioType> {
        match s {
            "fixed-seq-len" => Some(ScenarioType::FixedSeqLen),
            "agentic-coding" => Some(ScenarioType::AgenticCoding),
            _ => None,
        }
    }
}

/// One changelog entry (`ChangelogEntry` of the reference, extra keys
/// forbidden).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 0-based position in the file.
    pub index: usize,
    /// Line of the entry's first key (`- config-keys:`).
    pub line: usize,
    /// Master-config keys or patterns (`*` is the only wildcard).
    pub config_keys: Vec<Text>,
    pub description: Vec<Text>,
    pub pr_link: Text,
    /// Restricts generation for the entry's keys; `None` when absent.
    pub scenario_type: Option<Vec<ScenarioType>>,
    pub evals_only: Option<Flag>,
    pub all_evals: Option<Flag>,
    pub append_only: Option<Flag>,
    /// `(value, line)`: drops multi-node eval rows whose prefill EP is lower.
    pub eval_min_prefill_ep: Option<(u64, usize)>,
}

impl Entry {
    pub fn is_append_only(&self) -> bool {
        self.append_only.is_some_and(|f| f.value)
    }
    pub fn is_evals_only(&self) -> bool {
        self.evals_only.is_some_and(|f| f.value)
    }
    pub(crate) fn is_all_evals(&self) -> bool {
        self.all_evals.is_some_and(|f| f.value)
    }

    /// Same content apart from `pr-link` (positions ignored).
    pub(crate) fn same_except_link(&self, other: &Entry) -> bool {
        fn same(a: &[Text], b: &[Text]) -> bool {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.value == y.value)
        }
        same(&self.config_keys, &other.config_keys)
            && same(&self.description, &other.description)
            && self.scenario_type == other.scenario_type
            && self.evals_only.map(|f| f.value) == other.evals_only.map(|f| f.value)
            && self.all_evals.map(|f| f.value) == other.all_evals.map(|f| f.value)
            && self.append_only.map(|f| f.value) == other.append_only.map(|f| f.value)
            && self.eval_min_prefill_ep.map(|p| p.0) == other.eval_min_prefill_ep.map(|p| p.0)
    }

    /// Whether any config-key pattern of the entry selects `key`.
    pub(crate) fn selects(&self, key: &str) -> bool {
        self.config_keys.iter().any(|p| key_matches(&p.value, key))
    }

    fn remap_lines(&mut self, f: &impl Fn(usize) -> usize) {
        self.line = f(self.line);
        for t in self
            .config_keys
            .iter_mut()
            .chain(self.description.iter_mut())
        {
            t.line = f(t.line);
        }
        self.pr_link.line = f(self.pr_link.line);
        for flag in [
            &mut self.evals_only,
            &mut self.all_evals,
            &mut self.append_only,
        ]
        .into_iter()
        .flatten()
        {
            flag.line = f(flag.line);
        }
        if let Some(p) = &mut self.eval_min_prefill_ep {
            p.1 = f(p.1);
        }
    }
}

/// A changelog entry that does not validate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryError {
    pub index: usize,
    pub loc: Loc,
    /// The field at fault, when there is one.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: entry {}: {}", self.loc, self.index, self.message)
    }
}

/// Every item of the list, valid or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub file: String,
    /// Valid entries, in file order (`index` counts invalid ones too).
    pub entries: Vec<Entry>,
    pub errors: Vec<EntryError>,
    /// Number of list items.
    pub items: usize,
    /// Line of every list item (its first key for a mapping), valid or not.
    pub item_lines: Vec<usize>,
}

/// A changelog whose every entry validates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changelog {
    pub file: String,
    pub entries: Vec<Entry>,
}

impl Changelog {
    /// The entry that contains `line` (the last one starting at or before it).
    pub fn entry_at_line(&self, line: usize) -> Option<&Entry> {
        let i = self.entries.partition_point(|e| e.line <= line);
        i.checked_sub(1).map(|i| &self.entries[i])
    }
}

/// Parses the file and requires every entry to validate; the first invalid
/// entry is the error.
pub fn parse(file: &str, bytes: &[u8]) -> Result<Changelog, ParseError> {
    let doc = read(file, bytes)?;
    if let Some(e) = doc.errors.first() {
        return Err(ParseError::new(
            e.loc.clone(),
            format!("entry {}: {}", e.index, e.message),
        ));
    }
    Ok(Changelog {
        file: doc.file,
        entries: doc.entries,
    })
}

/// Parses the file, collecting invalid entries instead of stopping at the
/// first. Fails only when the bytes are not a YAML list.
pub fn read(file: &str, bytes: &[u8]) -> Result<Document, ParseError> {
    let root = yaml::parse(file, bytes)?;
    let items: &[Node] = match &root.value {
        Value::Seq(items) => items,
        // An empty file is an empty list.
        Value::Null => &[],
        _ => {
            return Err(ParseError::new(
                root.loc(file),
                format!("the changelog must be a YAML list, found {}", root.kind()),
            ));
        }
    };
    let mut entries = Vec::with_capacity(items.len());
    let mut errors = Vec::new();
    for (index, item) in items.iter().enumerate() {
        match entry(file, index, item) {
            Ok(e) => entries.push(e),
            Err(e) => errors.push(e),
        }
    }
    let item_lines = items
        .iter()
        .map(|i| {
            i.as_map()
                .and_then(|m| m.first())
                .map_or(i.line, |(k, _)| k.line)
        })
        .collect();
    Ok(Document {
        file: file.to_owned(),
        entries,
        errors,
        items: items.len(),
        item_lines,
    })
}

/// What [`read`] of `head` gives for the items past `base_items`, read
/// from the appended text alone, when `head` is `base` (which [`read`]
/// accepted with `base_items` items) followed by more top-level list
/// items. `None` when that cannot be shown cheaply (the caller reads the
/// whole file): the appended text must start a new `- ` item at column 0,
/// keep every column-0 line a list item, and use no anchors, aliases,
/// directives or document markers. Saves parsing a 400 KB changelog twice
/// per PR.
pub(crate) fn read_appended(
    file: &str,
    base: &str,
    base_items: usize,
    head: &str,
) -> Option<Document> {
    let tail = head.strip_prefix(base)?;
    if !(base.is_empty() || base.ends_with('\n'))
        || !plain_block_list(base)
        || !plain_block_list(tail)
    {
        return None;
    }
    let first = tail
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    if !first.starts_with('-') {
        return None;
    }
    let mut doc = read(file, tail.as_bytes()).ok()?;
    let offset = base.matches('\n').count();
    for e in &mut doc.entries {
        e.index += base_items;
        e.remap_lines(&|l| l + offset);
    }
    for e in &mut doc.errors {
        e.index += base_items;
        e.loc.line += offset;
    }
    for l in &mut doc.item_lines {
        *l += offset;
    }
    doc.items += base_items;
    Some(doc)
}

/// Every column-0 content line is a block list item, and nothing outside
/// comments could be an anchor, alias, directive or document marker.
fn plain_block_list(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') {
            return true;
        }
        let top_ok = l.starts_with([' ', '\t']) || l == "-" || l.starts_with("- ");
        top_ok && !may_anchor_in_line(l)
    })
}

/// [`may_anchor`] of a line without its ` #` comment.
pub(crate) fn may_anchor_in_line(line: &str) -> bool {
    // Most lines have neither character: skip the comment split.
    if !line.bytes().any(|b| b == b'&' || b == b'*') {
        return false;
    }
    may_anchor(line.split(" #").next().unwrap_or(line))
}

/// An `&` or `*` outside a one-line quoted string where an anchor or alias
/// could start (after a blank or a flow indicator); `70b-fp8-*-vllm` is a
/// plain scalar. Errs on the side of `true`.
pub(crate) fn may_anchor(code: &str) -> bool {
    if !code.bytes().any(|b| b == b'&' || b == b'*') {
        return false;
    }
    let mut prev = ' ';
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in code.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if q == '"' && c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => {
                let token_start = matches!(prev, ' ' | '\t' | '[' | '{' | ',');
                if matches!(c, '&' | '*') && token_start {
                    return true;
                }
                if matches!(c, '"' | '\'') && token_start {
                    quote = Some(c);
                }
            }
        }
        prev = c;
    }
    false
}

const FIELDS: [&str; 8] = [
    "config-keys",
    "description",
    "pr-link",
    "scenario-type",
    "evals-only",
    "all-evals",
    "append-only",
    "eval-min-prefill-ep",
];

fn entry(file: &str, index: usize, item: &Node) -> Result<Entry, EntryError> {
    let fail = |n: &Node, field: Option<&str>, message: String| EntryError {
        index,
        loc: n.loc(file),
        field: field.map(str::to_owned),
        message,
    };
    let Some(map) = item.as_map() else {
        return Err(fail(
            item,
            None,
            format!("an entry must be a mapping, found {}", item.kind()),
        ));
    };
    for (k, _) in map {
        match k.as_str() {
            Some(name) if FIELDS.contains(&name) => {}
            Some(name) => return Err(fail(k, Some(name), format!("unknown field `{name}`"))),
            None => {
                return Err(fail(
                    k,
                    None,
                    format!("field names must be strings, found {}", k.kind()),
                ));
            }
        }
    }
    let field = |name: &str| map.iter().find(|(k, _)| k.as_str() == Some(name));

    let strings = |name: &str| -> Result<Option<Vec<Text>>, EntryError> {
        let Some((k, v)) = field(name) else {
            return Ok(None);
        };
        let Some(items) = v.as_seq() else {
            return Err(fail(
                v,
                Some(name),
                format!("`{name}` must be a list of strings, found {}", v.kind()),
            ));
        };
        if items.is_empty() {
            return Err(fail(k, Some(name), format!("`{name}` must not be empty")));
        }
        items
            .iter()
            .map(|i| match i.as_str() {
                Some(s) => Ok(Text {
                    value: s.to_owned(),
                    line: i.line,
                    column: i.column,
                }),
                None => Err(fail(
                    i,
                    Some(name),
                    format!("`{name}` items must be strings, found {}", i.kind()),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    };
    let flag = |name: &str| -> Result<Option<Flag>, EntryError> {
        match field(name) {
            None => Ok(None),
            Some((k, v)) => match v.as_bool() {
                Some(b) => Ok(Some(Flag {
                    value: b,
                    line: k.line,
                })),
                None => Err(fail(
                    v,
                    Some(name),
                    format!("`{name}` must be true or false, found {}", v.kind()),
                )),
            },
        }
    };

    let config_keys = strings("config-keys")?
        .ok_or_else(|| fail(item, Some("config-keys"), "missing `config-keys`".into()))?;
    let description = strings("description")?
        .ok_or_else(|| fail(item, Some("description"), "missing `description`".into()))?;
    let pr_link = match field("pr-link") {
        None => return Err(fail(item, Some("pr-link"), "missing `pr-link`".into())),
        Some((_, v)) => match v.as_str() {
            Some(s) => Text {
                value: s.to_owned(),
                line: v.line,
                column: v.column,
            },
            None => {
                return Err(fail(
                    v,
                    Some("pr-link"),
                    format!("`pr-link` must be a string, found {}", v.kind()),
                ));
            }
        },
    };
    let scenario_type = match strings("scenario-type")? {
        None => None,
        Some(items) => Some(
            items
                .iter()
                .map(|t| {
                    ScenarioType::parse(&t.value).ok_or_else(|| EntryError {
                        index,
                        loc: Loc::new(file, t.line, t.column),
                        field: Some("scenario-type".into()),
                        message: format!(
                            "unknown scenario type `{}` (expected fixed-seq-len or agentic-coding)",
                            t.value
                        ),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let evals_only = flag("evals-only")?;
    let all_evals = flag("all-evals")?;
    let append_only = flag("append-only")?;
    let eval_min_prefill_ep = match field("eval-min-prefill-ep") {
        None => None,
        Some((k, v)) => match v
            .as_i64()
            .and_then(|i| u64::try_from(i).ok())
            .filter(|&i| i >= 1)
        {
            Some(n) => Some((n, k.line)),
            None => {
                return Err(fail(
                    v,
                    Some("eval-min-prefill-ep"),
                    "`eval-min-prefill-ep` must be an integer ≥ 1".into(),
                ));
            }
        },
    };
    let e = Entry {
        index,
        line: map.first().map_or(item.line, |(k, _)| k.line),
        config_keys,
        description,
        pr_link,
        scenario_type,
        evals_only,
        all_evals,
        append_only,
        eval_min_prefill_ep,
    };
    if e.is_append_only() {
        let clash = [
            ("evals-only", e.is_evals_only()),
            ("all-evals", e.is_all_evals()),
            ("eval-min-prefill-ep", e.eval_min_prefill_ep.is_some()),
        ];
        if let Some((name, _)) = clash.iter().find(|(_, on)| *on) {
            let line = e.append_only.map_or(e.line, |f| f.line);
            return Err(EntryError {
                index,
                loc: Loc::new(file, line, 3),
                field: Some("append-only".into()),
                message: format!("`append-only` cannot be combined with `{name}`"),
            });
        }
    }
    Ok(e)
}

/// Whether a config-key pattern selects `key`: `*` matches any run of
/// characters (full match); everything else, `?` included, is literal.
pub(crate) fn key_matches(pattern: &str, key: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), key.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// What a `pr-link` value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrLink {
    /// Exactly `https://github.com/<repo>/pull/<digits>`.
    Canonical(u64),
    /// A placeholder (`XXX` or `…/pull/XXX` with the default list).
    Placeholder,
    /// Anything else (`…/pull/2305/changes`, another repository, spaces).
    Other,
}

/// The placeholders the strict rules accept on a PR branch.
pub const DEFAULT_PLACEHOLDERS: [&str; 1] = ["XXX"];

/// Classifies a link against the repository (`owner/name`).
pub fn classify_link(link: &str, repo: &str, placeholders: &[&str]) -> PrLink {
    let tail = link
        .strip_prefix("https://github.com/")
        .and_then(|r| r.strip_prefix(repo))
        .and_then(|r| r.strip_prefix("/pull/"));
    if let Some(n) = tail {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            return n.parse().map_or(PrLink::Other, PrLink::Canonical);
        }
        if placeholders.contains(&n) {
            return PrLink::Placeholder;
        }
        return PrLink::Other;
    }
    if placeholders.contains(&link) {
        PrLink::Placeholder
    } else {
        PrLink::Other
    }
}

// ---------------------------------------------------------------------
// Line diff (what `git diff` reports as removed and added lines).

/// Lines with their terminators, so a last line without `\n` differs from
/// the same text with one, as in git.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Removed base line indices and added head line indices (0-based).
struct LineDiff {
    removed: Vec<usize>,
    added: Vec<usize>,
}

/// Beyond this many edits the middle is treated as replaced wholesale;
/// such a diff fails the gate anyway (removed lines with content).
const MAX_EDITS: usize = 20_000;

fn diff(a: &[&str], b: &[&str]) -> LineDiff {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out = LineDiff {
        removed: Vec::new(),
        added: Vec::new(),
    };
    if am.is_empty() || bm.is_empty() {
        out.removed.extend(pre..pre + am.len());
        out.added.extend(pre..pre + bm.len());
        return out;
    }
    match myers(am, bm) {
        Some((removed, added)) => {
            out.removed = removed.into_iter().map(|i| i + pre).collect();
            out.added = added.into_iter().map(|i| i + pre).collect();
        }
        None => {
            out.removed.extend(pre..pre + am.len());
            out.added.extend(pre..pre + bm.len());
        }
    }
    out
}

/// Myers' O((N+M)·D) shortest edit script; `None` past `MAX_EDITS`.
#[allow(clippy::type_complexity)]
fn myers(a: &[&str], b: &[&str]) -> Option<(Vec<usize>, Vec<usize>)> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let limit = max.min(MAX_EDITS) as isize;
    let off = max as isize + 1;
    let mut v = vec![0isize; 2 * max + 3];
    // snapshots[d] holds v[-d..=d] after step d.
    let mut snapshots: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'outer: for d in 0..=limit {
        let mut k = -d;
        while k <= d {
            let idx = (k + off) as usize;
            let mut x = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
                v[idx + 1]
            } else {
                v[idx - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx] = x;
            if x >= n && y >= m {
                snapshots.push(v[(off - d) as usize..=(off + d) as usize].to_vec());
                found = Some(d);
                break 'outer;
            }
            k += 2;
        }
        snapshots.push(v[(off - d) as usize..=(off + d) as usize].to_vec());
    }
    let dmax = found?;
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    let (mut x, mut y) = (n, m);
    for d in (1..=dmax).rev() {
        let prev = &snapshots[(d - 1) as usize];
        let at = |k: isize| prev[(k + d - 1) as usize];
        let k = x - y;
        let down = k == -d || (k != d && at(k - 1) < at(k + 1));
        let pk = if down { k + 1 } else { k - 1 };
        let px = at(pk);
        let py = px - pk;
        if down {
            added.push(py as usize);
        } else {
            removed.push(px as usize);
        }
        x = px;
        y = py;
    }
    removed.reverse();
    added.reverse();
    Some((removed, added))
}

/// Slides each run of added lines over equal neighbouring lines so that it
/// starts at an entry (`- …` at column 0) where it can, as git's indent
/// heuristic does; otherwise an inserted entry can be reported as starting
/// mid-entry and its added lines would not parse.
fn align_insertions(added: &mut [usize], head: &[&str]) {
    let mut i = 0;
    while i < added.len() {
        let mut j = i + 1;
        while j < added.len() && added[j] == added[j - 1] + 1 {
            j += 1;
        }
        let (s, e) = (added[i], added[j - 1] + 1);
        // How far the run may move: up while the line above equals the run's
        // last line, down while the line below equals its first.
        let floor = if i > 0 { added[i - 1] + 1 } else { 0 };
        let mut up = 0;
        while s - up > floor && head[s - up - 1] == head[e - up - 1] {
            up += 1;
        }
        let next = added.get(j).copied().unwrap_or(head.len());
        let mut down = 0;
        while e + down < next && head[e + down] == head[s + down] {
            down += 1;
        }
        if up + down > 0 {
            let starts_entry = |start: usize| head[start].starts_with("- ");
            let best = (s - up..=s + down)
                .rev()
                .find(|&st| starts_entry(st))
                .or_else(|| {
                    (s - up..=s + down)
                        .rev()
                        .find(|&st| st > 0 && head[st - 1].trim().is_empty())
                })
                .unwrap_or(s + down);
            for (k, slot) in added[i..j].iter_mut().enumerate() {
                *slot = best + k;
            }
        }
        i = j;
    }
}

// ---------------------------------------------------------------------
// The PR gate.

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

// ---------------------------------------------------------------------
// Strict byte rules (lint findings).

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

pub(crate) mod yaml {
    //! A small YAML tree whose every node carries its line and column,
    //! built on serde-saphyr's `Spanned`. Shared by the changelog, golden-AL
    //! and threshold parsers, which need positions of keys and list items
    //! and must report schema problems per entry rather than per file.

    use std::fmt;

    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_saphyr::Spanned;

    use crate::recipe::{Loc, ParseError};

    /// One YAML node with its 1-based position.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Node {
        pub value: Value,
        pub line: usize,
        pub column: usize,
    }

    /// The value of a node. Mapping keys keep their order and positions.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Value {
        Null,
        Bool(bool),
        Int(i64),
        Float(f64),
        Str(String),
        Seq(Vec<Node>),
        Map(Vec<(Node, Node)>),
    }

    impl Node {
        pub(crate) fn as_str(&self) -> Option<&str> {
            match &self.value {
                Value::Str(s) => Some(s),
                _ => None,
            }
        }

        pub(crate) fn as_seq(&self) -> Option<&[Node]> {
            match &self.value {
                Value::Seq(v) => Some(v),
                _ => None,
            }
        }

        pub(crate) fn as_map(&self) -> Option<&[(Node, Node)]> {
            match &self.value {
                Value::Map(v) => Some(v),
                _ => None,
            }
        }

        pub(crate) fn as_bool(&self) -> Option<bool> {
            match self.value {
                Value::Bool(b) => Some(b),
                _ => None,
            }
        }

        pub(crate) fn as_i64(&self) -> Option<i64> {
            match self.value {
                Value::Int(i) => Some(i),
                _ => None,
            }
        }

        /// A number as `f64` (integers included).
        pub(crate) fn as_f64(&self) -> Option<f64> {
            match self.value {
                Value::Int(i) => Some(i as f64),
                Value::Float(f) => Some(f),
                _ => None,
            }
        }

        /// The value under a string key of a mapping.
        pub(crate) fn get(&self, key: &str) -> Option<&Node> {
            self.as_map()?
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v)
        }

        /// A short name of the node's type, for error messages.
        pub(crate) fn kind(&self) -> &'static str {
            match self.value {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Int(_) => "an integer",
                Value::Float(_) => "a float",
                Value::Str(_) => "a string",
                Value::Seq(_) => "a list",
                Value::Map(_) => "a mapping",
            }
        }

        pub(crate) fn loc(&self, file: &str) -> Loc {
            Loc::new(file, self.line, self.column)
        }

        /// Renders a scalar key as text (`1` for an integer key).
        pub(crate) fn key_text(&self) -> Option<String> {
            match &self.value {
                Value::Str(s) => Some(s.clone()),
                Value::Int(i) => Some(i.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                Value::Float(f) => Some(f.to_string()),
                _ => None,
            }
        }
    }

    struct ValueVisitor;

    impl<'de> Visitor<'de> for ValueVisitor {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any YAML value")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
            Ok(Value::Int(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
            Ok(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int))
        }
        fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
            Ok(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int))
        }
        fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
            Ok(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
            Ok(Value::Float(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
            Ok(Value::Str(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
            Ok(Value::Str(v))
        }
        fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
            Ok(Value::Str(String::from_utf8_lossy(v).into_owned()))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(ValueVisitor)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<Node>()? {
                items.push(item);
            }
            Ok(Value::Seq(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut entries = Vec::new();
            while let Some(entry) = map.next_entry::<Node, Node>()? {
                entries.push(entry);
            }
            Ok(Value::Map(entries))
        }
    }

    impl<'de> Deserialize<'de> for Value {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
            d.deserialize_any(ValueVisitor)
        }
    }

    impl<'de> Deserialize<'de> for Node {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
            let s = Spanned::<Value>::deserialize(d)?;
            Ok(Node {
                value: s.value,
                line: usize::try_from(s.referenced.line()).unwrap_or(0),
                column: usize::try_from(s.referenced.column()).unwrap_or(0),
            })
        }
    }

    /// Parses one YAML document. Duplicate keys are errors (serde-saphyr's
    /// default). An empty document is `Null`.
    pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<Node, ParseError> {
        let text = utf8(file, bytes)?;
        if text.trim().is_empty()
            || text
                .lines()
                .all(|l| l.trim_start().starts_with('#') || l.trim().is_empty())
        {
            return Ok(Node {
                value: Value::Null,
                line: 1,
                column: 1,
            });
        }
        serde_saphyr::from_str_with_options::<Node>(text, options(text.len()))
            .map_err(|e| saphyr_error(file, &e))
    }

    /// serde-saphyr's defaults, except: comment text is never used (not
    /// capturing it is much faster), and the node and event caps grow with
    /// the input, so a large but honest file (16× the real master
    /// configs) parses while alias bombs stay bounded by the alias caps.
    pub(crate) fn options(len: usize) -> serde_saphyr::Options {
        let mut o = serde_saphyr::Options::default();
        o.emit_comments = false;
        o.budget = Some(budget(len));
        o
    }

    /// The default budget with node and event caps of at least one node
    /// and four events per input byte.
    pub(crate) fn budget(len: usize) -> serde_saphyr::Budget {
        let mut b = serde_saphyr::Budget::default();
        b.max_nodes = b.max_nodes.max(len);
        b.max_events = b.max_events.max(len.saturating_mul(4));
        b
    }

    /// Checks UTF-8 and says where it breaks.
    pub(crate) fn utf8<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, ParseError> {
        std::str::from_utf8(bytes).map_err(|e| {
            let (line, column) = line_col(bytes, e.valid_up_to());
            ParseError::new(Loc::new(file, line, column), "not valid UTF-8")
        })
    }

    /// 1-based line and column (in bytes) of a byte offset.
    pub(crate) fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
        let before = &bytes[..offset.min(bytes.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        (line, column)
    }

    /// Converts a serde-saphyr error, keeping its position and a message
    /// without the source snippet or a repeated "at line …" suffix.
    pub(crate) fn saphyr_error(file: &str, e: &serde_saphyr::Error) -> ParseError {
        let (line, column) = e
            .location()
            .map(|l| {
                (
                    usize::try_from(l.line()).unwrap_or(1).max(1),
                    usize::try_from(l.column()).unwrap_or(1).max(1),
                )
            })
            .unwrap_or((1, 1));
        let mut message = e.without_snippet().to_string();
        if let Some(i) = message.rfind(" at line ") {
            message.truncate(i);
        }
        ParseError::new(Loc::new(file, line, column), message)
    }
}
