//! The YAML layer shared by the master and runner parsers: a generic node
//! tree with positions, read by serde-saphyr with YAML 1.1-like scalars.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

use crate::recipe::{Loc, ParseError};

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
pub(crate) struct Node {
    pub pos: Pos,
    pub value: Value,
}

/// The resolved value of a node. Mappings keep document order; a key
/// repeated in one mapping keeps the first position and the last value,
/// as PyYAML does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
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
    o.budget = Some(crate::recipe::changelog::yaml::budget(len));
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

/// Parses one YAML document. An empty document (only whitespace and
/// comments) is `Value::Null`, as with PyYAML.
pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<Node, ParseError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_col(bytes, e.valid_up_to());
        ParseError::new(
            Loc::new(file, line, column),
            format!("not valid UTF-8: {e}"),
        )
    })?;
    if is_empty_document(text) {
        return Ok(Node {
            pos: Pos { line: 1, column: 1 },
            value: Value::Null,
        });
    }
    serde_saphyr::from_str_with_options::<Node>(text, options(text.len())).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line() as usize, l.column() as usize))
            .unwrap_or((0, 0));
        let message = e.without_snippet().to_string();
        ParseError::new(
            Loc::new(file, line, column),
            format!("invalid YAML: {message}"),
        )
    })
}

fn is_empty_document(text: &str) -> bool {
    text.trim_start_matches('\u{feff}').lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---" || t == "..."
    })
}

fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}
