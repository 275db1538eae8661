//! The building blocks of validation: field paths, collected issues, and
//! the pydantic-like readers of mappings and scalar fields.

use std::fmt;

use super::document::Issue;
use super::model::{At, RawMap};
use super::yaml::{self, Node, Pos, Value};

// Validation mirrors pydantic: every field of a mapping is checked, errors
// in different list elements are all reported, and a mapping's cross-field
// rules run only when its fields (and nested models) are valid.

/// A field path built on the stack; rendered only when an issue is recorded.
#[derive(Clone, Copy)]
pub(super) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Key(p, k) => {
                if matches!(p, Path::Root) {
                    write!(f, "{k}")
                } else {
                    write!(f, "{p}.{k}")
                }
            }
            Path::Index(p, i) => {
                if matches!(p, Path::Root) {
                    write!(f, "{i}")
                } else {
                    write!(f, "{p}.{i}")
                }
            }
        }
    }
}

#[derive(Default)]
pub(super) struct Issues(pub(super) Vec<Issue>);

impl Issues {
    pub(super) fn push(&mut self, pos: Pos, path: &Path, message: impl Into<String>) {
        self.0.push(Issue {
            pos,
            path: path.to_string(),
            message: message.into(),
        });
    }
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

/// A mapping being validated: tracks which keys were read so the rest can
/// be rejected as extra.
pub(super) struct Fields<'n> {
    pos: Pos,
    pairs: &'n [(Node, Node)],
    used: Vec<bool>,
}

impl<'n> Fields<'n> {
    /// `None` (with an issue) when the node is not a mapping.
    pub(super) fn of(node: &'n Node, path: &Path, issues: &mut Issues) -> Option<Self> {
        match &node.value {
            Value::Map(pairs) => Some(Fields {
                pos: node.pos,
                pairs,
                used: vec![false; pairs.len()],
            }),
            _ => {
                issues.push(node.pos, path, "Input should be a valid dictionary");
                None
            }
        }
    }

    pub(super) fn get(&mut self, key: &str) -> Option<&'n Node> {
        for (i, (k, v)) in self.pairs.iter().enumerate() {
            if k.value.as_str() == Some(key) {
                self.used[i] = true;
                return Some(v);
            }
        }
        None
    }

    pub(super) fn has(&self, key: &str) -> bool {
        self.pairs
            .iter()
            .any(|(k, _)| k.value.as_str() == Some(key))
    }

    /// Rejects every key that was not read.
    pub(super) fn finish(self, path: &Path, issues: &mut Issues) {
        for (i, (k, _)) in self.pairs.iter().enumerate() {
            if !self.used[i] {
                let name = yaml::key_text(&k.value);
                issues.push(
                    k.pos,
                    &Path::Key(path, &name),
                    "Extra inputs are not permitted",
                );
            }
        }
    }
}

pub(super) fn required<'n>(
    f: &mut Fields<'n>,
    key: &str,
    path: &Path,
    issues: &mut Issues,
) -> Option<&'n Node> {
    let n = f.get(key);
    if n.is_none() {
        issues.push(f.pos, &Path::Key(path, key), "Field required");
    }
    n
}

/// An optional field: absent and null are both `None`.
fn optional<'n>(f: &mut Fields<'n>, key: &str) -> Option<&'n Node> {
    f.get(key).filter(|n| n.value != Value::Null)
}

pub(super) fn as_string(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<String>> {
    match &n.value {
        Value::Str(s) => Some(At::new(s.clone(), n.pos)),
        _ => {
            issues.push(n.pos, path, "Input should be a valid string");
            None
        }
    }
}

pub(super) fn as_nonempty_string(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<String>> {
    let s = as_string(n, path, issues)?;
    if s.value.is_empty() {
        issues.push(n.pos, path, "String should have at least 1 character");
        return None;
    }
    Some(s)
}

pub(super) fn as_int(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<i64>> {
    match &n.value {
        Value::Int(i) => Some(At::new(*i, n.pos)),
        _ => {
            issues.push(n.pos, path, "Input should be a valid integer");
            None
        }
    }
}

/// `StrictInt` with `gt=0`.
fn as_positive_int(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<i64>> {
    let v = as_int(n, path, issues)?;
    if v.value <= 0 {
        issues.push(n.pos, path, "Input should be greater than 0");
        return None;
    }
    Some(v)
}

pub(super) fn as_bool(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<bool>> {
    match &n.value {
        Value::Bool(b) => Some(At::new(*b, n.pos)),
        _ => {
            issues.push(n.pos, path, "Input should be a valid boolean");
            None
        }
    }
}

pub(super) fn as_list<'n>(n: &'n Node, path: &Path, issues: &mut Issues) -> Option<&'n [Node]> {
    match &n.value {
        Value::Seq(v) => Some(v),
        _ => {
            issues.push(n.pos, path, "Input should be a valid list");
            None
        }
    }
}

/// An optional field that must validate when present; `Err(())` = invalid.
pub(super) fn opt_field<T>(
    f: &mut Fields,
    key: &str,
    path: &Path,
    issues: &mut Issues,
    conv: impl Fn(&Node, &Path, &mut Issues) -> Option<T>,
) -> Result<Option<T>, ()> {
    match optional(f, key) {
        None => Ok(None),
        Some(n) => conv(n, &Path::Key(path, key), issues).map(Some).ok_or(()),
    }
}

/// A strict positive int with default (the value is only stored when written).
pub(super) fn opt_positive(
    f: &mut Fields,
    key: &str,
    path: &Path,
    issues: &mut Issues,
) -> Result<Option<At<i64>>, ()> {
    // Not Optional in the schema: an explicit null is an error.
    match f.get(key) {
        None => Ok(None),
        Some(n) => as_positive_int(n, &Path::Key(path, key), issues)
            .map(Some)
            .ok_or(()),
    }
}

pub(super) fn not_image_version(v: &At<String>, path: &Path, issues: &mut Issues) -> bool {
    if v.value.starts_with("image:") {
        issues.push(
            v.pos,
            path,
            "Value error, version must not start with 'image:'",
        );
        return false;
    }
    true
}

pub(super) fn raw_map(n: &Node) -> RawMap {
    RawMap::new(raw_entries(n))
}

/// The pairs of a mapping node as JSON, in document order.
pub(super) fn raw_entries(n: &Node) -> Vec<(String, serde_json::Value)> {
    match &n.value {
        Value::Map(pairs) => pairs
            .iter()
            .map(|(k, v)| (yaml::key_text(&k.value), v.value.to_json()))
            .collect(),
        _ => Vec::new(),
    }
}
