//! The srt recipe's YAML tree: every value and mapping key with the
//! position it was written at, a view of the one YAML layer
//! (`crate::recipe::yaml`, which also decides repeated keys).

use std::fmt;

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

impl YamlNode {
    /// The recipe's view of a node of the one YAML layer
    /// (`crate::recipe::yaml`): mapping keys as text, as srt-slurm reads them.
    pub(crate) fn from_node(n: &crate::recipe::yaml::Node) -> YamlNode {
        use crate::recipe::yaml::Value;
        let value = match &n.value {
            Value::Null => Yaml::Null,
            Value::Bool(b) => Yaml::Bool(*b),
            Value::Int(i) => Yaml::Int(*i),
            Value::Float(f) => Yaml::Float(*f),
            Value::Str(s) => Yaml::Str(s.clone()),
            Value::Seq(items) => Yaml::Seq(items.iter().map(YamlNode::from_node).collect()),
            Value::Map(entries) => Yaml::Map(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let key = match &k.value {
                            Value::Null => "null".to_owned(),
                            Value::Bool(b) => b.to_string(),
                            Value::Int(i) => i.to_string(),
                            Value::Float(f) => f.to_string(),
                            Value::Str(s) => s.clone(),
                            Value::Seq(_) | Value::Map(_) => format!("{}", YamlNode::from_node(k)),
                        };
                        (
                            Located {
                                value: key,
                                line: k.line(),
                                column: k.column(),
                            },
                            YamlNode::from_node(v),
                        )
                    })
                    .collect(),
            ),
        };
        YamlNode {
            value,
            line: n.line(),
            column: n.column(),
        }
    }
}
