//! The changelog's entries and their parsing (whole file, or only the
//! items appended to a known base), config-key patterns and `pr-link` kinds.

use std::fmt;

use super::yaml::{self, Node, Value};
use crate::recipe::{Loc, ParseError};

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

    pub(super) fn remap_lines(&mut self, f: &impl Fn(usize) -> usize) {
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
                .map_or(i.line(), |(k, _)| k.line())
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
                    line: i.line(),
                    column: i.column(),
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
                    line: k.line(),
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
                line: v.line(),
                column: v.column(),
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
            Some(n) => Some((n, k.line())),
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
        line: map.first().map_or(item.line(), |(k, _)| k.line()),
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
