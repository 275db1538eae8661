//! Reading master files into raw, not yet validated entries, merging them
//! in order, and the entry points that validate the merged document.

use std::collections::HashMap;
use std::sync::Arc;

use super::model::{At, MasterConfig, UnvalidatedEntry};
use super::validate::validate_entry;
use super::yaml::{self, Node, Pos, Value};
use crate::recipe::ParseError;

/// One top-level key of a master file, not yet validated.
#[derive(Debug, Clone)]
pub(crate) struct RawEntry {
    pub file: Arc<str>,
    pub key: String,
    pub pos: Pos,
    pub node: Node,
}

/// Master files read and merged but not yet validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct MasterDocument {
    pub entries: Vec<RawEntry>,
    index: HashMap<String, usize>,
}

/// Reads one master file: YAML syntax, a top-level mapping, string keys
/// without `*`. Messages are the reference's.
pub(crate) fn parse_document(file: &str, bytes: &[u8]) -> Result<MasterDocument, ParseError> {
    let root = yaml::parse(file, bytes)?;
    let Value::Map(pairs) = root.value else {
        return Err(ParseError::new(
            root.pos.loc(file),
            format!("Config file '{file}' must contain a dictionary"),
        ));
    };
    let file_arc: Arc<str> = Arc::from(file);
    let mut doc = MasterDocument::default();
    for (k, v) in pairs {
        let Value::Str(key) = k.value else {
            return Err(ParseError::new(
                k.pos.loc(file),
                format!(
                    "Master config keys must be strings, got {}",
                    yaml::key_text(&k.value)
                ),
            ));
        };
        if key.contains('*') {
            return Err(ParseError::new(
                k.pos.loc(file),
                format!("Wildcard '*' is not allowed in master config keys: '{key}'"),
            ));
        }
        doc.index.insert(key.clone(), doc.entries.len());
        doc.entries.push(RawEntry {
            file: file_arc.clone(),
            key,
            pos: k.pos,
            node: v,
        });
    }
    Ok(doc)
}

impl MasterDocument {
    /// Appends the keys of another file; fails if any is already present.
    pub(crate) fn merge(&mut self, other: MasterDocument) -> Result<(), ParseError> {
        let mut dups: Vec<&RawEntry> = other
            .entries
            .iter()
            .filter(|e| self.index.contains_key(&e.key))
            .collect();
        if let Some(first) = dups.first() {
            let loc = first.pos.loc(&first.file);
            let file = first.file.to_string();
            dups.sort_by(|a, b| a.key.cmp(&b.key));
            let names: Vec<&str> = dups.iter().map(|e| e.key.as_str()).collect();
            return Err(ParseError::new(
                loc,
                format!(
                    "Duplicate configuration keys found in '{file}': {}",
                    names.join(", ")
                ),
            ));
        }
        for e in other.entries {
            self.index.insert(e.key.clone(), self.entries.len());
            self.entries.push(e);
        }
        Ok(())
    }

    /// Validates every entry in merged order; the first invalid entry stops
    /// with "Master config entry '<key>' failed validation:" and its issues.
    pub(crate) fn validate(&self) -> Result<MasterConfig, ParseError> {
        let mut out = MasterConfig::default();
        for raw in &self.entries {
            let entry = validate_entry(raw).map_err(|issues| entry_error(raw, &issues))?;
            out.index.insert(entry.key.clone(), out.entries.len());
            out.entries.push(entry);
        }
        Ok(out)
    }

    /// Validates each entry on its own: one invalid entry (an older
    /// schema) no longer hides the others. The entries that validate are
    /// read as [`validate`](Self::validate) reads them; the others are kept,
    /// in merged order, with their error and their readable string fields.
    pub(crate) fn validate_each(&self) -> MasterConfig {
        let mut out = MasterConfig::default();
        for raw in &self.entries {
            match validate_entry(raw) {
                Ok(entry) => {
                    out.index.insert(entry.key.clone(), out.entries.len());
                    out.entries.push(entry);
                }
                Err(issues) => out
                    .unvalidated
                    .push(unvalidated(raw, entry_error(raw, &issues))),
            }
        }
        out
    }
}

/// The top-level string fields of an entry that failed validation.
fn unvalidated(raw: &RawEntry, error: ParseError) -> UnvalidatedEntry {
    let field = |name: &str| {
        raw.node
            .get(name)
            .and_then(|n| n.as_str().map(|v| At::new(v.to_owned(), n.pos)))
    };
    UnvalidatedEntry {
        file: raw.file.clone(),
        key: raw.key.clone(),
        pos: raw.pos,
        image: field("image"),
        model: field("model"),
        model_prefix: field("model-prefix"),
        framework: field("framework"),
        runner: field("runner"),
        error,
    }
}

/// Parses and merges several master files, then validates entry by entry
/// ([`MasterDocument::validate_each`]); a file that cannot be read as a
/// master document at all is still an error.
pub fn parse_many_each<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<MasterConfig, ParseError> {
    Ok(merged(files)?.validate_each())
}

/// Parses and validates one master file.
pub fn parse(file: &str, bytes: &[u8]) -> Result<MasterConfig, ParseError> {
    parse_document(file, bytes)?.validate()
}

/// Parses, merges (in the given order) and validates several master files.
pub fn parse_many<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<MasterConfig, ParseError> {
    merged(files)?.validate()
}

/// Master files read and merged in the given order.
fn merged<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<MasterDocument, ParseError> {
    let mut doc = MasterDocument::default();
    for (file, bytes) in files {
        doc.merge(parse_document(file, bytes)?)?;
    }
    Ok(doc)
}

/// One schema violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issue {
    pub pos: Pos,
    /// Dotted field path inside the entry, e.g. `scenarios.fixed-seq-len.0.search-space.2.tp`.
    pub path: String,
    pub message: String,
}

fn entry_error(raw: &RawEntry, issues: &[Issue]) -> ParseError {
    let first = issues.first().map_or(raw.pos, |i| i.pos);
    let mut details = format!(
        "{} validation error{} for {}",
        issues.len(),
        if issues.len() == 1 { "" } else { "s" },
        raw.key
    );
    for i in issues {
        let path = if i.path.is_empty() {
            "(entry)"
        } else {
            i.path.as_str()
        };
        details.push_str(&format!(
            "\n{path}\n  {} [at {}]",
            i.message,
            i.pos.loc(&raw.file)
        ));
    }
    ParseError::new(
        first.loc(&raw.file),
        format!(
            "Master config entry '{}' failed validation:\n{details}",
            raw.key
        ),
    )
}
