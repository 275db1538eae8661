//! The one YAML layer of sweepgate: every YAML file of the benchmark
//! repository (master configs and runners for lint, verifier and matrix,
//! the changelog, golden curves, thresholds, srt recipes) is read here into
//! a node tree with positions, by serde-saphyr with YAML 1.1 scalars as
//! PyYAML (the reference tools' reader) sees them.
//!
//! One duplicate-key policy: within a mapping the last value of a repeated
//! key wins and the key keeps its first position, as PyYAML reads it; every
//! repeat is also returned ([`parse_with_duplicates`]) so a rule can report
//! it at its file and line.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

use crate::recipe::{Loc, ParseError};

mod fast;

/// A line/column position (1-based; 0 when unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

impl Pos {
    pub(crate) fn loc(self, file: &str) -> Loc {
        Loc::new(file, self.line as usize, self.column as usize)
    }
}

/// One YAML node with the position where it is referenced.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub pos: Pos,
    pub value: Value,
}

/// A key repeated in one mapping: the later value replaced the earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The key as text.
    pub key: String,
    /// Where it is repeated.
    pub line: usize,
    pub column: usize,
    /// Where it first appears.
    pub first_line: usize,
}

impl Node {
    /// 1-based line.
    pub(crate) fn line(&self) -> usize {
        self.pos.line as usize
    }

    /// 1-based column.
    pub(crate) fn column(&self) -> usize {
        self.pos.column as usize
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        self.value.as_str()
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
        self.pos.loc(file)
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

thread_local! {
    /// Repeated keys seen by the visitor of the parse running on this thread.
    static DUPLICATES: std::cell::RefCell<Vec<Duplicate>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The resolved value of a node. Mappings keep document order; a key
/// repeated in one mapping keeps the first position and the last value,
/// as PyYAML does.
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

impl Value {
    /// The Python type name the reference would print for this value.
    pub(crate) fn py_type(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Seq(_) => "list",
            Value::Map(_) => "dict",
        }
    }

    /// Python truthiness.
    pub(crate) fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Seq(v) => !v.is_empty(),
            Value::Map(m) => !m.is_empty(),
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as JSON, as the reference's `json.dumps` would print it.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::Seq(v) => {
                serde_json::Value::Array(v.iter().map(|n| n.value.to_json()).collect())
            }
            Value::Map(m) => {
                let mut out = serde_json::Map::new();
                for (k, v) in m {
                    out.insert(key_text(&k.value), v.value.to_json());
                }
                serde_json::Value::Object(out)
            }
        }
    }
}

/// The text of a mapping key (non-string keys as Python's `str()`).
pub(crate) fn key_text(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Seq(_) | Value::Map(_) => format!("<{}>", v.py_type()),
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        i64::try_from(v)
            .map(Value::Int)
            .map_err(|_| E::custom(format!("integer {v} is out of range")))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        i64::try_from(v)
            .map(Value::Int)
            .map_err(|_| E::custom(format!("integer {v} is out of range")))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        i64::try_from(v)
            .map(Value::Int)
            .map_err(|_| E::custom(format!("integer {v} is out of range")))
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
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(n) = seq.next_element::<Node>()? {
            out.push(n);
        }
        Ok(Value::Seq(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out: Vec<(Node, Node)> = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((k, v)) = map.next_entry::<Node, Node>()? {
            // PyYAML: a repeated key keeps its first position, last value.
            if let Some(slot) = out.iter_mut().find(|(ek, _)| ek.value == k.value) {
                DUPLICATES.with(|d| {
                    d.borrow_mut().push(Duplicate {
                        key: key_text(&k.value),
                        line: k.line(),
                        column: k.column(),
                        first_line: slot.0.line(),
                    });
                });
                slot.1 = v;
            } else {
                out.push((k, v));
            }
        }
        Ok(Value::Map(out))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Spanned::<Value>::deserialize(d)?;
        Ok(Node {
            pos: Pos {
                line: u32::try_from(s.referenced.line()).unwrap_or(u32::MAX),
                column: u32::try_from(s.referenced.column()).unwrap_or(u32::MAX),
            },
            value: s.value,
        })
    }
}

fn options(len: usize) -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    // Caps that grow with the input (16× the real configs must parse).
    o.budget = Some(budget(len));
    // PyYAML semantics: repeated keys are resolved in the visitor.
    o.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
    // YAML 1.1: `010` is octal.
    o.legacy_octal_numbers = true;
    // PyYAML safe_load refuses tags it has no constructor for.
    o.reject_unsupported_tags = true;
    // Comment text is never used; not capturing it is much faster.
    o.emit_comments = false;
    o
}

/// Parses one YAML document (errors as `invalid YAML: …`, the master
/// config and runner wording). An empty document (only whitespace and
/// comments) is `Value::Null`, as with PyYAML.
pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<Node, ParseError> {
    parse_with_duplicates(file, bytes)
        .map(|(n, _)| n)
        .map_err(|e| match e {
            Failure::Utf8(p) => p,
            Failure::Yaml(err) => {
                let (line, column) = err
                    .location()
                    .map(|l| (l.line() as usize, l.column() as usize))
                    .unwrap_or((0, 0));
                let message = err.without_snippet().to_string();
                ParseError::new(
                    Loc::new(file, line, column),
                    format!("invalid YAML: {message}"),
                )
            }
        })
}

/// [`parse`] with errors as the changelog, golden-curve and threshold
/// parsers word them (serde-saphyr's message without the position suffix).
pub(crate) fn parse_plain(file: &str, bytes: &[u8]) -> Result<Node, ParseError> {
    utf8(file, bytes)?;
    parse_with_duplicates(file, bytes)
        .map(|(n, _)| n)
        .map_err(|e| match e {
            Failure::Utf8(p) => p,
            Failure::Yaml(err) => saphyr_error(file, &err),
        })
}

/// [`parse_plain`] for a file whose reference tool reads it with a loader
/// that refuses repeated keys (the changelog validator's
/// `UniqueKeyLoader`): the first repeat is the error, at its position.
pub(crate) fn parse_unique(file: &str, bytes: &[u8]) -> Result<Node, ParseError> {
    utf8(file, bytes)?;
    let (node, dups) = parse_with_duplicates(file, bytes).map_err(|e| match e {
        Failure::Utf8(p) => p,
        Failure::Yaml(err) => saphyr_error(file, &err),
    })?;
    match dups.first() {
        Some(d) => Err(ParseError::new(
            Loc::new(file, d.line, d.column),
            format!("duplicate key `{}` (first at line {})", d.key, d.first_line),
        )),
        None => Ok(node),
    }
}

/// Why a document could not be read.
pub(crate) enum Failure {
    Utf8(ParseError),
    Yaml(serde_saphyr::Error),
}

/// Parses one document and returns every repeated key with it.
pub(crate) fn parse_with_duplicates(
    file: &str,
    bytes: &[u8],
) -> Result<(Node, Vec<Duplicate>), Failure> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_col(bytes, e.valid_up_to());
        Failure::Utf8(ParseError::new(
            Loc::new(file, line, column),
            format!("not valid UTF-8: {e}"),
        ))
    })?;
    if is_empty_document(text) {
        return Ok((
            Node {
                pos: Pos { line: 1, column: 1 },
                value: Value::Null,
            },
            Vec::new(),
        ));
    }
    // The repository's own files take the direct reader; anything else
    // (and every error) is serde-saphyr's.
    if let Some(done) = fast::parse(text) {
        return Ok(done);
    }
    saphyr_parse(text).map_err(Failure::Yaml)
}

/// One non-empty document read by serde-saphyr.
fn saphyr_parse(text: &str) -> Result<(Node, Vec<Duplicate>), serde_saphyr::Error> {
    DUPLICATES.with(|d| d.borrow_mut().clear());
    let parsed = serde_saphyr::from_str_with_options::<Node>(text, options(text.len()));
    let dups = DUPLICATES.with(|d| std::mem::take(&mut *d.borrow_mut()));
    parsed.map(|n| (n, dups))
}

/// The default budget with node and event caps of at least one node
/// and four events per input byte (a large but honest file, 16× the real
/// master configs, parses; alias bombs stay bounded by the alias caps).
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

fn is_empty_document(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---" || t == "..."
    })
}

/// 1-based line and column (in bytes) of a byte offset.
pub(crate) fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_keep_the_last_value_and_are_reported() {
        let (n, dups) = parse_with_duplicates("r.yaml", b"a:\n  x: 1\n  y: 2\n  x: 3\nb: 010\n")
            .ok()
            .unwrap();
        assert_eq!(
            n.get("a").and_then(|a| a.get("x")).and_then(Node::as_i64),
            Some(3)
        );
        // The key keeps its first position; YAML 1.1 octal, as PyYAML reads it.
        assert_eq!(
            n.get("a").and_then(|a| a.as_map()).map(|m| m[0].0.line()),
            Some(2)
        );
        assert_eq!(n.get("b").and_then(Node::as_i64), Some(8));
        assert_eq!(
            dups,
            vec![Duplicate {
                key: "x".into(),
                line: 4,
                column: 3,
                first_line: 2
            }]
        );
        // A later parse on the same thread starts clean.
        let (_, none) = parse_with_duplicates("s.yaml", b"a: 1\n").ok().unwrap();
        assert!(none.is_empty());
    }
}
