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
