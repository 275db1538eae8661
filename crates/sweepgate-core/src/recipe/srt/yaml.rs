//! The srt recipe's YAML tree: every value and mapping key with the
//! position it was written at, read through serde-saphyr's `Spanned`.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// A YAML value with the position it was written at (1-based).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct YamlNode {
    pub value: Yaml,
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Yaml {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<YamlNode>),
    /// Keys in document order, with their own positions.
    Map(Vec<(Located<String>, YamlNode)>),
}

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Located<T> {
    pub value: T,
    pub line: usize,
    pub column: usize,
}

impl YamlNode {
    /// The value of `key` in a mapping.
    pub(crate) fn get(&self, key: &str) -> Option<&YamlNode> {
        match &self.value {
            Yaml::Map(entries) => entries.iter().find(|(k, _)| k.value == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Follow a path of mapping keys.
    pub(crate) fn at(&self, path: &[&str]) -> Option<&YamlNode> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Yaml::Bool(b) => Some(*b),
            Yaml::Str(s) if s == "true" || s == "false" => Some(s == "true"),
            _ => None,
        }
    }

    pub(crate) fn entries(&self) -> &[(Located<String>, YamlNode)] {
        match &self.value {
            Yaml::Map(e) => e,
            _ => &[],
        }
    }

    /// A scalar as text (`'1.49'` → `1.49`, `3` → `3`, `true` → `true`);
    /// collections render as compact JSON-like text.
    pub(crate) fn text(&self) -> String {
        self.to_string()
    }

    pub(super) fn located<T>(&self, value: T) -> Located<T> {
        Located {
            value,
            line: self.line,
            column: self.column,
        }
    }
}

impl fmt::Display for YamlNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Yaml::Null => f.write_str("null"),
            Yaml::Bool(b) => write!(f, "{b}"),
            Yaml::Int(i) => write!(f, "{i}"),
            Yaml::Float(x) => write!(f, "{x}"),
            Yaml::Str(s) => f.write_str(s),
            Yaml::Seq(items) => {
                f.write_str("[")?;
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{it}")?;
                }
                f.write_str("]")
            }
            Yaml::Map(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {v}", k.value)?;
                }
                f.write_str("}")
            }
        }
    }
}

fn to_usize(l: u64) -> usize {
    usize::try_from(l).unwrap_or(usize::MAX)
}

impl<'de> Deserialize<'de> for YamlNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Spanned::<Yaml>::deserialize(d)?;
        Ok(YamlNode {
            value: s.value,
            line: to_usize(s.referenced.line()),
            column: to_usize(s.referenced.column()),
        })
    }
}

/// A mapping key of any scalar type, read as text.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a scalar mapping key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
                Ok(Key(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
                Ok(Key("null".into()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Yaml {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Yaml;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Yaml, E> {
                Ok(Yaml::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Yaml, E> {
                Ok(Yaml::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Yaml, E> {
                Ok(i64::try_from(v).map_or(Yaml::Float(v as f64), Yaml::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Yaml, E> {
                Ok(Yaml::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Yaml, E> {
                Ok(Yaml::Str(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Yaml, E> {
                Ok(Yaml::Str(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Yaml, E> {
                Ok(Yaml::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Yaml, E> {
                Ok(Yaml::Null)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Yaml, D2::Error> {
                Yaml::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Yaml, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<YamlNode>()? {
                    out.push(v);
                }
                Ok(Yaml::Seq(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Yaml, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<Spanned<Key>>()? {
                    let v = map.next_value::<YamlNode>()?;
                    out.push((
                        Located {
                            value: k.value.0,
                            line: to_usize(k.referenced.line()),
                            column: to_usize(k.referenced.column()),
                        },
                        v,
                    ));
                }
                Ok(Yaml::Map(out))
            }
        }
        d.deserialize_any(V)
    }
}
