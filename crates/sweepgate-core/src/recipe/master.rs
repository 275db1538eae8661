//! Master configs (`configs/nvidia-master.yaml`, `configs/amd-master.yaml`):
//! a mapping of config key → master entry, validated like the reference
//! generator's `validation.py` (unknown keys rejected, cross-field rules),
//! with the position of every key and important field.
//!
//! Loading is split the way the reference orders its checks (matrix spec
//! §2.1): [`parse_document`] reads one file (YAML syntax, top-level mapping,
//! no `*` in keys), [`MasterDocument::merge`] appends files and rejects keys
//! already present, and only then [`MasterDocument::validate`] checks every
//! entry in merged order. [`parse`] does all three for one file.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::ser::{SerializeMap, Serializer};

use super::{Loc, ParseError};

/// The YAML layer shared by the master and runner parsers: a generic node
/// tree with positions, read by serde-saphyr with YAML 1.1-like scalars.
pub(crate) mod yaml {
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
}

pub(crate) use yaml::Pos;
use yaml::{Node, Value};

/// A value with the position of its YAML node.
#[derive(Debug, Clone, PartialEq)]
pub struct At<T> {
    pub value: T,
    pub pos: Pos,
}

impl<T> At<T> {
    fn new(value: T, pos: Pos) -> Self {
        Self { value, pos }
    }
}

/// A mapping kept verbatim (document order), for fields the generator copies
/// into rows unchanged (`router`, `kv-offload-backend`, workers).
#[derive(Debug, Clone)]
pub struct RawMap {
    pub entries: Vec<(String, serde_json::Value)>,
    /// Sorted-key compact JSON: equality regardless of key order, as the
    /// reference's dict comparison.
    pub canonical: String,
}

impl RawMap {
    fn new(entries: Vec<(String, serde_json::Value)>) -> Self {
        let mut sorted: Vec<&(String, serde_json::Value)> = entries.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut canonical = String::from("{");
        for (i, (k, v)) in sorted.into_iter().enumerate() {
            if i > 0 {
                canonical.push(',');
            }
            canonical.push_str(&serde_json::Value::String(k.clone()).to_string());
            canonical.push(':');
            canonical.push_str(&canonical_json(v));
        }
        canonical.push('}');
        Self { entries, canonical }
    }
}

impl PartialEq for RawMap {
    fn eq(&self, other: &Self) -> bool {
        self.canonical == other.canonical
    }
}
impl Eq for RawMap {}

impl std::hash::Hash for RawMap {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.canonical.hash(state);
    }
}

impl serde::Serialize for RawMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

fn canonical_json(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        serde_json::Value::String(k.clone()),
                        canonical_json(&o[k])
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        serde_json::Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(canonical_json).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// `spec-decoding` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecDecoding {
    Mtp,
    DraftModel,
    None,
}

impl SpecDecoding {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SpecDecoding::Mtp => "mtp",
            SpecDecoding::DraftModel => "draft_model",
            SpecDecoding::None => "none",
        }
    }
}

/// `kv-offloading` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KvOffloading {
    None,
    Dram,
}

impl KvOffloading {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KvOffloading::None => "none",
            KvOffloading::Dram => "dram",
        }
    }
}

/// `router`: `{name, version}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    pub pos: Pos,
    pub name: At<String>,
    pub version: At<String>,
    pub raw: RawMap,
}

/// `kv-offload-backend`: `{name, version?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    pub pos: Pos,
    pub name: At<String>,
    pub version: Option<At<String>>,
    pub raw: RawMap,
}

/// A multi-node `prefill` / `decode` worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Worker {
    pub pos: Pos,
    pub num_worker: At<i64>,
    pub tp: At<i64>,
    pub pp: Option<At<i64>>,
    pub dcp_size: Option<At<i64>>,
    pub pcp_size: Option<At<i64>>,
    pub ep: At<i64>,
    pub dp_attn: At<bool>,
    pub hardware: Option<At<String>>,
    /// `additional-settings` (`KEY=VALUE` strings); `Some(None)` when written as null.
    pub additional_settings: Option<At<Option<Vec<At<String>>>>>,
    /// The worker as a row carries it: the written keys verbatim, then `pp`,
    /// `dcp-size`, `pcp-size` set to 1 where absent (matrix spec §3.4).
    pub normalized: RawMap,
    /// Truthiness of the written `hardware` value (the pairing rule uses it).
    hardware_truthy: bool,
}

impl Worker {
    pub(crate) fn pp(&self) -> i64 {
        self.pp.as_ref().map_or(1, |v| v.value)
    }
    pub(crate) fn pcp_size(&self) -> i64 {
        self.pcp_size.as_ref().map_or(1, |v| v.value)
    }
}

/// A list-valued field that may be absent, written as null, or a list.
#[derive(Debug, Clone, PartialEq)]
pub enum ListField<T> {
    Absent,
    Null(Pos),
    List(Pos, Vec<T>),
}

impl<T> ListField<T> {
    /// The elements, treating absent and null as empty.
    pub(crate) fn items(&self) -> &[T] {
        match self {
            ListField::List(_, v) => v,
            _ => &[],
        }
    }
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, ListField::Null(_))
    }
}

/// One element of `scenarios.fixed-seq-len`.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedBlock {
    pub pos: Pos,
    pub isl: At<i64>,
    pub osl: At<i64>,
    pub search_space: Vec<SearchEntry>,
}

/// One element of `scenarios.agentic-coding`.
#[derive(Debug, Clone, PartialEq)]
pub struct AgenticBlock {
    pub pos: Pos,
    /// The float as written (an integer such as `1` is accepted as 1.0).
    pub dram_utilization: Option<At<f64>>,
    pub search_space: Vec<SearchEntry>,
}

/// A search-space entry (fixed single-node, fixed multi-node or agentic; the
/// schema of each kind decides which fields may be set).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchEntry {
    pub pos: Pos,
    pub tp: Option<At<i64>>,
    pub pp: Option<At<i64>>,
    pub dcp_size: Option<At<i64>>,
    pub pcp_size: Option<At<i64>>,
    pub ep: Option<At<i64>>,
    pub dp_attn: Option<At<bool>>,
    pub spec_decoding: Option<At<SpecDecoding>>,
    pub prefill: Option<Worker>,
    pub decode: Option<Worker>,
    /// `Some(At(None))` when the key is written as null (it then hides the
    /// top-level router in rows, as in the reference).
    pub router: Option<At<Option<Component>>>,
    pub kv_p2p_transfer: Option<At<Option<String>>>,
    pub kv_offloading: Option<At<KvOffloading>>,
    pub kv_offload_backend: Option<Backend>,
    pub conc_start: Option<At<i64>>,
    pub conc_end: Option<At<i64>>,
    /// `Some(At(None))` when written as null.
    pub conc_list: Option<At<Option<Vec<i64>>>>,
}

impl SearchEntry {
    pub(crate) fn pp(&self) -> i64 {
        self.pp.as_ref().map_or(1, |v| v.value)
    }
    pub(crate) fn dcp_size(&self) -> i64 {
        self.dcp_size.as_ref().map_or(1, |v| v.value)
    }
    pub(crate) fn pcp_size(&self) -> i64 {
        self.pcp_size.as_ref().map_or(1, |v| v.value)
    }
    pub(crate) fn ep(&self) -> i64 {
        self.ep.as_ref().map_or(1, |v| v.value)
    }
    pub(crate) fn dp_attn(&self) -> bool {
        self.dp_attn.as_ref().is_some_and(|v| v.value)
    }
    pub(crate) fn spec_decoding(&self) -> SpecDecoding {
        self.spec_decoding
            .as_ref()
            .map_or(SpecDecoding::None, |v| v.value)
    }
    /// The non-empty `conc-list`, if any (the form most paths use).
    pub(crate) fn nonempty_conc_list(&self) -> Option<&[i64]> {
        match &self.conc_list {
            Some(At { value: Some(v), .. }) if !v.is_empty() => Some(v),
            _ => None,
        }
    }
    fn has_router(&self) -> bool {
        matches!(&self.router, Some(At { value: Some(_), .. }))
    }
    fn has_kv_p2p(&self) -> bool {
        matches!(&self.kv_p2p_transfer, Some(At { value: Some(_), .. }))
    }
}

/// `scenarios`.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenarios {
    pub pos: Pos,
    pub fixed_seq_len: ListField<FixedBlock>,
    pub agentic_coding: ListField<AgenticBlock>,
}

/// One master entry.
#[derive(Debug, Clone, PartialEq)]
pub struct MasterEntry {
    /// The file the entry comes from.
    pub file: Arc<str>,
    pub key: String,
    /// Position of the config key.
    pub pos: Pos,
    pub image: At<String>,
    pub model: At<String>,
    pub model_prefix: At<String>,
    pub precision: At<String>,
    pub framework: At<String>,
    pub runner: At<String>,
    pub multinode: At<bool>,
    pub disagg: Option<At<bool>>,
    pub router: Option<Component>,
    pub kv_p2p_transfer: Option<At<String>>,
    pub scenarios: Scenarios,
}

impl MasterEntry {
    pub fn loc(&self, pos: Pos) -> Loc {
        pos.loc(&self.file)
    }
    pub fn disagg(&self) -> bool {
        self.disagg.as_ref().is_some_and(|d| d.value)
    }
    /// Every search-space entry, fixed blocks first.
    pub(crate) fn search_entries(&self) -> impl Iterator<Item = &SearchEntry> {
        self.scenarios
            .fixed_seq_len
            .items()
            .iter()
            .flat_map(|b| b.search_space.iter())
            .chain(
                self.scenarios
                    .agentic_coding
                    .items()
                    .iter()
                    .flat_map(|b| b.search_space.iter()),
            )
    }
}

/// Validated master configs (one or several merged files), in merged order.
#[derive(Debug, Clone, Default)]
pub struct MasterConfig {
    pub entries: Vec<MasterEntry>,
    index: HashMap<String, usize>,
}

impl MasterConfig {
    pub fn get(&self, key: &str) -> Option<&MasterEntry> {
        self.index.get(key).map(|&i| &self.entries[i])
    }
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.key.as_str())
    }
    /// Number of config keys.
    pub fn key_count(&self) -> usize {
        self.entries.len()
    }
    /// Number of search-space entries over all entries and blocks.
    pub fn search_entry_count(&self) -> usize {
        self.entries
            .iter()
            .map(|e| e.search_entries().count())
            .sum()
    }
}

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
}

/// Parses and validates one master file.
pub fn parse(file: &str, bytes: &[u8]) -> Result<MasterConfig, ParseError> {
    parse_document(file, bytes)?.validate()
}

/// Parses, merges (in the given order) and validates several master files.
pub fn parse_many<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<MasterConfig, ParseError> {
    let mut doc = MasterDocument::default();
    for (file, bytes) in files {
        doc.merge(parse_document(file, bytes)?)?;
    }
    doc.validate()
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

// ---------------------------------------------------------------------------
// Validation. Mirrors pydantic: every field of a mapping is checked, errors
// in different list elements are all reported, and a mapping's cross-field
// rules run only when its fields (and nested models) are valid.

/// A field path built on the stack; rendered only when an issue is recorded.
#[derive(Clone, Copy)]
enum Path<'a> {
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
struct Issues(Vec<Issue>);

impl Issues {
    fn push(&mut self, pos: Pos, path: &Path, message: impl Into<String>) {
        self.0.push(Issue {
            pos,
            path: path.to_string(),
            message: message.into(),
        });
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// A mapping being validated: tracks which keys were read so the rest can
/// be rejected as extra.
struct Fields<'n> {
    pos: Pos,
    pairs: &'n [(Node, Node)],
    used: Vec<bool>,
}

impl<'n> Fields<'n> {
    /// `None` (with an issue) when the node is not a mapping.
    fn of(node: &'n Node, path: &Path, issues: &mut Issues) -> Option<Self> {
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

    fn get(&mut self, key: &str) -> Option<&'n Node> {
        for (i, (k, v)) in self.pairs.iter().enumerate() {
            if k.value.as_str() == Some(key) {
                self.used[i] = true;
                return Some(v);
            }
        }
        None
    }

    fn has(&self, key: &str) -> bool {
        self.pairs
            .iter()
            .any(|(k, _)| k.value.as_str() == Some(key))
    }

    /// Rejects every key that was not read.
    fn finish(self, path: &Path, issues: &mut Issues) {
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

fn required<'n>(
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

fn as_string(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<String>> {
    match &n.value {
        Value::Str(s) => Some(At::new(s.clone(), n.pos)),
        _ => {
            issues.push(n.pos, path, "Input should be a valid string");
            None
        }
    }
}

fn as_nonempty_string(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<String>> {
    let s = as_string(n, path, issues)?;
    if s.value.is_empty() {
        issues.push(n.pos, path, "String should have at least 1 character");
        return None;
    }
    Some(s)
}

fn as_int(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<i64>> {
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

fn as_bool(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<bool>> {
    match &n.value {
        Value::Bool(b) => Some(At::new(*b, n.pos)),
        _ => {
            issues.push(n.pos, path, "Input should be a valid boolean");
            None
        }
    }
}

fn as_list<'n>(n: &'n Node, path: &Path, issues: &mut Issues) -> Option<&'n [Node]> {
    match &n.value {
        Value::Seq(v) => Some(v),
        _ => {
            issues.push(n.pos, path, "Input should be a valid list");
            None
        }
    }
}

/// An optional field that must validate when present; `Err(())` = invalid.
fn opt_field<T>(
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
fn opt_positive(
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

fn not_image_version(v: &At<String>, path: &Path, issues: &mut Issues) -> bool {
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

fn raw_map(n: &Node) -> RawMap {
    match &n.value {
        Value::Map(pairs) => RawMap::new(
            pairs
                .iter()
                .map(|(k, v)| (yaml::key_text(&k.value), v.value.to_json()))
                .collect(),
        ),
        _ => RawMap::new(Vec::new()),
    }
}

fn component(n: &Node, path: &Path, issues: &mut Issues) -> Option<Component> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let name = required(&mut f, "name", path, issues)
        .and_then(|v| as_nonempty_string(v, &Path::Key(path, "name"), issues));
    let version = required(&mut f, "version", path, issues)
        .and_then(|v| as_nonempty_string(v, &Path::Key(path, "version"), issues))
        .filter(|v| not_image_version(v, &Path::Key(path, "version"), issues));
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    Some(Component {
        pos: n.pos,
        name: name?,
        version: version?,
        raw: raw_map(n),
    })
}

fn backend(n: &Node, path: &Path, issues: &mut Issues) -> Option<Backend> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let name = required(&mut f, "name", path, issues)
        .and_then(|v| as_nonempty_string(v, &Path::Key(path, "name"), issues));
    let version = opt_field(&mut f, "version", path, issues, |v, p, i| {
        as_nonempty_string(v, p, i).filter(|s| not_image_version(s, p, i))
    });
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    Some(Backend {
        pos: n.pos,
        name: name?,
        version: version.ok()?,
        raw: raw_map(n),
    })
}

fn worker(n: &Node, path: &Path, issues: &mut Issues) -> Option<Worker> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let num_worker = required(&mut f, "num-worker", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "num-worker"), issues));
    let tp = required(&mut f, "tp", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "tp"), issues));
    let pp = opt_positive(&mut f, "pp", path, issues);
    let dcp = opt_positive(&mut f, "dcp-size", path, issues);
    let pcp = opt_positive(&mut f, "pcp-size", path, issues);
    let ep = required(&mut f, "ep", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "ep"), issues));
    let dp_attn = required(&mut f, "dp-attn", path, issues)
        .and_then(|v| as_bool(v, &Path::Key(path, "dp-attn"), issues));
    let hardware_node = f.get("hardware");
    let hardware = opt_field(&mut f, "hardware", path, issues, as_nonempty_string);
    let settings = match f.get("additional-settings") {
        None => Ok(None),
        Some(Node {
            value: Value::Null,
            pos,
        }) => Ok(Some(At::new(None, *pos))),
        Some(node) => {
            let p = Path::Key(path, "additional-settings");
            match as_list(node, &p, issues) {
                None => Err(()),
                Some(items) => {
                    let b = issues.len();
                    let v: Vec<At<String>> = items
                        .iter()
                        .enumerate()
                        .filter_map(|(i, s)| as_string(s, &Path::Index(&p, i), issues))
                        .collect();
                    if issues.len() == b {
                        Ok(Some(At::new(Some(v), node.pos)))
                    } else {
                        Err(())
                    }
                }
            }
        }
    };
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    let (tp, dcp) = (tp?, dcp.ok()?);
    let dcp_v = dcp.as_ref().map_or(1, |d| d.value);
    if tp.value.rem_euclid(dcp_v) != 0 {
        issues.push(
            n.pos,
            path,
            format!(
                "Value error, 'tp' ({}) must be divisible by 'dcp-size' ({dcp_v})",
                tp.value
            ),
        );
        return None;
    }
    let mut entries = raw_map(n).entries;
    for key in ["pp", "dcp-size", "pcp-size"] {
        if !entries.iter().any(|(k, _)| k == key) {
            entries.push((key.to_string(), serde_json::Value::from(1)));
        }
    }
    Some(Worker {
        pos: n.pos,
        num_worker: num_worker?,
        tp,
        pp: pp.ok()?,
        dcp_size: dcp,
        pcp_size: pcp.ok()?,
        ep: ep?,
        dp_attn: dp_attn?,
        hardware: hardware.ok()?,
        additional_settings: settings.ok()?,
        normalized: RawMap::new(entries),
        hardware_truthy: hardware_node.is_some_and(|h| h.value.truthy()),
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    SnFixed,
    MnFixed,
    Agentic,
}

fn spec_decoding(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<SpecDecoding>> {
    let v = match n.value.as_str() {
        Some("mtp") => SpecDecoding::Mtp,
        Some("draft_model") => SpecDecoding::DraftModel,
        Some("none") => SpecDecoding::None,
        _ => {
            issues.push(
                n.pos,
                path,
                "Input should be 'mtp', 'draft_model' or 'none'",
            );
            return None;
        }
    };
    Some(At::new(v, n.pos))
}

fn kv_offloading(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<KvOffloading>> {
    let v = match n.value.as_str() {
        Some("none") => KvOffloading::None,
        Some("dram") => KvOffloading::Dram,
        _ => {
            issues.push(n.pos, path, "Input should be 'none' or 'dram'");
            return None;
        }
    };
    Some(At::new(v, n.pos))
}

/// A field whose explicit null is kept as "present but null".
fn nullable<T>(
    f: &mut Fields,
    key: &str,
    path: &Path,
    issues: &mut Issues,
    conv: impl Fn(&Node, &Path, &mut Issues) -> Option<T>,
) -> Result<Option<At<Option<T>>>, ()> {
    match f.get(key) {
        None => Ok(None),
        Some(n) if n.value == Value::Null => Ok(Some(At::new(None, n.pos))),
        Some(n) => conv(n, &Path::Key(path, key), issues)
            .map(|v| Some(At::new(Some(v), n.pos)))
            .ok_or(()),
    }
}

fn search_entry(
    n: &Node,
    kind: EntryKind,
    path: &Path,
    issues: &mut Issues,
) -> Option<SearchEntry> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let sn_like = kind != EntryKind::MnFixed;
    let tp = match kind {
        EntryKind::SnFixed => required(&mut f, "tp", path, issues)
            .and_then(|v| as_int(v, &Path::Key(path, "tp"), issues))
            .map(Some)
            .ok_or(()),
        EntryKind::Agentic => opt_field(&mut f, "tp", path, issues, as_int),
        EntryKind::MnFixed => Ok(None),
    };
    // Written-ness of pp/dcp/pcp matters for multi-node agentic entries.
    let wrote_pp_family = f.has("pp") || f.has("dcp-size") || f.has("pcp-size");
    let (pp, dcp, pcp, ep, dp_attn) = if sn_like {
        (
            opt_positive(&mut f, "pp", path, issues),
            opt_positive(&mut f, "dcp-size", path, issues),
            opt_positive(&mut f, "pcp-size", path, issues),
            opt_field(&mut f, "ep", path, issues, as_int),
            opt_field(&mut f, "dp-attn", path, issues, as_bool),
        )
    } else {
        (Ok(None), Ok(None), Ok(None), Ok(None), Ok(None))
    };
    let spec = match f.get("spec-decoding") {
        None => Ok(None),
        Some(v) => spec_decoding(v, &Path::Key(path, "spec-decoding"), issues)
            .map(Some)
            .ok_or(()),
    };
    let (prefill, decode) = match kind {
        EntryKind::MnFixed => (
            required(&mut f, "prefill", path, issues)
                .and_then(|v| worker(v, &Path::Key(path, "prefill"), issues))
                .map(Some)
                .ok_or(()),
            required(&mut f, "decode", path, issues)
                .and_then(|v| worker(v, &Path::Key(path, "decode"), issues))
                .map(Some)
                .ok_or(()),
        ),
        EntryKind::Agentic => (
            opt_field(&mut f, "prefill", path, issues, worker),
            opt_field(&mut f, "decode", path, issues, worker),
        ),
        EntryKind::SnFixed => (Ok(None), Ok(None)),
    };
    let router = nullable(&mut f, "router", path, issues, component);
    let kv_p2p = if kind == EntryKind::SnFixed {
        Ok(None)
    } else {
        nullable(&mut f, "kv-p2p-transfer", path, issues, as_nonempty_string)
            .map(|o| o.map(|a| At::new(a.value.map(|s| s.value), a.pos)))
    };
    let (kv_off, backend_v) = if kind == EntryKind::Agentic {
        (
            opt_field(&mut f, "kv-offloading", path, issues, kv_offloading),
            opt_field(&mut f, "kv-offload-backend", path, issues, backend),
        )
    } else {
        (Ok(None), Ok(None))
    };
    let conc_start = opt_field(&mut f, "conc-start", path, issues, as_int);
    let conc_end = opt_field(&mut f, "conc-end", path, issues, as_int);
    let conc_list = match f.get("conc-list") {
        None => Ok(None),
        Some(Node {
            value: Value::Null,
            pos,
        }) => Ok(Some(At::new(None, *pos))),
        Some(node) => {
            let p = Path::Key(path, "conc-list");
            match as_list(node, &p, issues) {
                None => Err(()),
                Some(items) => {
                    let b = issues.len();
                    let v: Vec<i64> = items
                        .iter()
                        .enumerate()
                        .filter_map(|(i, c)| {
                            as_int(c, &Path::Index(&p, i), issues).map(|a| a.value)
                        })
                        .collect();
                    if issues.len() == b {
                        Ok(Some(At::new(Some(v), node.pos)))
                    } else {
                        Err(())
                    }
                }
            }
        }
    };
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    let e = SearchEntry {
        pos: n.pos,
        tp: tp.ok()?,
        pp: pp.ok()?,
        dcp_size: dcp.ok()?,
        pcp_size: pcp.ok()?,
        ep: ep.ok()?,
        dp_attn: dp_attn.ok()?,
        spec_decoding: spec.ok()?,
        prefill: prefill.ok()?,
        decode: decode.ok()?,
        router: router.ok()?,
        kv_p2p_transfer: kv_p2p.ok()?,
        kv_offloading: kv_off.ok()?,
        kv_offload_backend: backend_v.ok()?,
        conc_start: conc_start.ok()?,
        conc_end: conc_end.ok()?,
        conc_list: conc_list.ok()?,
    };
    match entry_rules(&e, kind, wrote_pp_family) {
        Ok(()) => Some(e),
        Err(msg) => {
            issues.push(n.pos, path, format!("Value error, {msg}"));
            None
        }
    }
}

/// The cross-field rules of one search-space entry (first failure).
fn entry_rules(e: &SearchEntry, kind: EntryKind, wrote_pp_family: bool) -> Result<(), String> {
    let has_range = e.conc_start.is_some() && e.conc_end.is_some();
    let list = e.nonempty_conc_list();
    match (has_range, list) {
        (true, Some(_)) => {
            return Err("Cannot specify both 'conc-list' list and 'conc-start'/'conc-end' range. Use either 'conc-list' or 'conc-start'/'conc-end', not both.".into());
        }
        (false, None) => {
            return Err(
                "Must specify either 'conc-list' list or both 'conc-start' and 'conc-end'.".into(),
            );
        }
        (true, None) => {
            let (s, t) = (
                e.conc_start.as_ref().map_or(0, |v| v.value),
                e.conc_end.as_ref().map_or(0, |v| v.value),
            );
            if s <= 0 || t <= 0 {
                return Err("Input 'conc-start' and 'conc-end' must be greater than 0.".into());
            }
            if s > t {
                return Err(format!("'conc-start' ({s}) must be <= 'conc-end' ({t})."));
            }
        }
        (false, Some(l)) => {
            if l.iter().any(|&c| c <= 0) {
                return Err("Input 'conc-list' entries must be greater than 0.".into());
            }
        }
    }
    let tp_divisible = |tp: i64, dcp: i64| -> Result<(), String> {
        if tp.rem_euclid(dcp) != 0 {
            Err(format!(
                "'tp' ({tp}) must be divisible by 'dcp-size' ({dcp})"
            ))
        } else {
            Ok(())
        }
    };
    let hardware_pair = |p: &Worker, d: &Worker| -> Result<(), String> {
        if p.hardware_truthy != d.hardware_truthy {
            Err("'hardware' must be specified for both 'prefill' and 'decode', or neither".into())
        } else {
            Ok(())
        }
    };
    match kind {
        EntryKind::SnFixed => {
            if let Some(tp) = &e.tp {
                tp_divisible(tp.value, e.dcp_size())?;
            }
        }
        EntryKind::MnFixed => {
            if let (Some(p), Some(d)) = (&e.prefill, &e.decode) {
                hardware_pair(p, d)?;
            }
        }
        EntryKind::Agentic => {
            let workers = e.prefill.is_some() && e.decode.is_some();
            let any_worker = e.prefill.is_some() || e.decode.is_some();
            match &e.tp {
                Some(_) if any_worker => {
                    return Err("Agentic search-space entries must specify either tp or both prefill and decode".into());
                }
                None if !workers => {
                    return Err("Agentic search-space entries must specify either tp or both prefill and decode".into());
                }
                _ => {}
            }
            if let Some(tp) = &e.tp {
                if e.kv_offloading.is_none() {
                    return Err(
                        "Single-node agentic search-space entries must specify kv-offloading"
                            .into(),
                    );
                }
                tp_divisible(tp.value, e.dcp_size())?;
            } else if let (Some(p), Some(d)) = (&e.prefill, &e.decode) {
                if wrote_pp_family {
                    return Err("Multinode agentic search-space entries cannot specify 'pp', 'dcp-size', 'pcp-size'; set them on the prefill/decode workers".into());
                }
                hardware_pair(p, d)?;
            }
            match (
                e.kv_offloading.as_ref().map(|k| k.value),
                e.kv_offload_backend.is_some(),
            ) {
                (None, true) => return Err("kv-offload-backend requires kv-offloading".into()),
                (Some(KvOffloading::None), true) => {
                    return Err(
                        "kv-offload-backend can only be set when kv-offloading is not 'none'"
                            .into(),
                    );
                }
                (Some(KvOffloading::Dram), false) => {
                    return Err(
                        "kv-offload-backend is required when kv-offloading is 'dram'".into(),
                    );
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn search_space(
    f: &mut Fields,
    kind: EntryKind,
    path: &Path,
    issues: &mut Issues,
) -> Option<Vec<SearchEntry>> {
    let node = required(f, "search-space", path, issues)?;
    let p = Path::Key(path, "search-space");
    let items = as_list(node, &p, issues)?;
    let before = issues.len();
    let out: Vec<SearchEntry> = items
        .iter()
        .enumerate()
        .filter_map(|(i, n)| search_entry(n, kind, &Path::Index(&p, i), issues))
        .collect();
    (issues.len() == before).then_some(out)
}

fn fixed_block(n: &Node, multinode: bool, path: &Path, issues: &mut Issues) -> Option<FixedBlock> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let isl = required(&mut f, "isl", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "isl"), issues));
    let osl = required(&mut f, "osl", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "osl"), issues));
    let kind = if multinode {
        EntryKind::MnFixed
    } else {
        EntryKind::SnFixed
    };
    let ss = search_space(&mut f, kind, path, issues);
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    Some(FixedBlock {
        pos: n.pos,
        isl: isl?,
        osl: osl?,
        search_space: ss?,
    })
}

fn agentic_block(n: &Node, path: &Path, issues: &mut Issues) -> Option<AgenticBlock> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let util = opt_field(&mut f, "dram-utilization", path, issues, |v, p, i| {
        let x = match v.value {
            Value::Float(x) => x,
            // pydantic's float accepts integers.
            Value::Int(x) => x as f64,
            _ => {
                i.push(v.pos, p, "Input should be a valid number");
                return None;
            }
        };
        if x.is_nan() || x <= 0.0 {
            i.push(v.pos, p, "Input should be greater than 0");
            return None;
        }
        if x > 1.0 {
            i.push(v.pos, p, "Input should be less than or equal to 1");
            return None;
        }
        Some(At::new(x, v.pos))
    });
    let ss = search_space(&mut f, EntryKind::Agentic, path, issues);
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    let b = AgenticBlock {
        pos: n.pos,
        dram_utilization: util.ok()?,
        search_space: ss?,
    };
    let uses_dram = b.search_space.iter().any(|e| {
        e.kv_offloading
            .as_ref()
            .is_some_and(|k| k.value == KvOffloading::Dram)
    });
    if uses_dram && b.dram_utilization.is_none() {
        issues.push(
            n.pos,
            path,
            "Value error, dram-utilization is required when any search-space entry uses kv-offloading: dram",
        );
        return None;
    }
    Some(b)
}

fn block_list<T>(
    f: &mut Fields,
    key: &str,
    path: &Path,
    issues: &mut Issues,
    conv: impl Fn(&Node, &Path, &mut Issues) -> Option<T>,
) -> Option<ListField<T>> {
    match f.get(key) {
        None => Some(ListField::Absent),
        Some(Node {
            value: Value::Null,
            pos,
        }) => Some(ListField::Null(*pos)),
        Some(node) => {
            let p = Path::Key(path, key);
            let items = as_list(node, &p, issues)?;
            let before = issues.len();
            let v: Vec<T> = items
                .iter()
                .enumerate()
                .filter_map(|(i, n)| conv(n, &Path::Index(&p, i), issues))
                .collect();
            (issues.len() == before).then_some(ListField::List(node.pos, v))
        }
    }
}

fn scenarios(n: &Node, multinode: bool, path: &Path, issues: &mut Issues) -> Option<Scenarios> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let fixed = block_list(&mut f, "fixed-seq-len", path, issues, |n, p, i| {
        fixed_block(n, multinode, p, i)
    });
    let agentic = block_list(&mut f, "agentic-coding", path, issues, agentic_block);
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    let s = Scenarios {
        pos: n.pos,
        fixed_seq_len: fixed?,
        agentic_coding: agentic?,
    };
    if s.fixed_seq_len.items().is_empty() && s.agentic_coding.items().is_empty() {
        issues.push(
            n.pos,
            path,
            "Value error, At least one scenario type must be specified",
        );
        return None;
    }
    Some(s)
}

fn validate_entry(raw: &RawEntry) -> Result<MasterEntry, Vec<Issue>> {
    let mut issues = Issues::default();
    let entry = validate_entry_inner(raw, &mut issues);
    match entry {
        Some(e) if issues.0.is_empty() => Ok(e),
        _ => {
            if issues.0.is_empty() {
                issues.push(raw.pos, &Path::Root, "invalid entry");
            }
            Err(issues.0)
        }
    }
}

fn validate_entry_inner(raw: &RawEntry, issues: &mut Issues) -> Option<MasterEntry> {
    let root = Path::Root;
    let node = &raw.node;
    // The schema is chosen by the truthiness of `multinode` (spec §2.1).
    let multinode = match &node.value {
        Value::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| k.value.as_str() == Some("multinode"))
            .is_some_and(|(_, v)| v.value.truthy()),
        _ => false,
    };
    let mut f = Fields::of(node, &root, issues)?;
    let s = |f: &mut Fields, key: &str, issues: &mut Issues| {
        required(f, key, &root, issues).and_then(|v| as_string(v, &Path::Key(&root, key), issues))
    };
    let image = s(&mut f, "image", issues);
    let model = s(&mut f, "model", issues);
    let model_prefix = s(&mut f, "model-prefix", issues);
    let precision = s(&mut f, "precision", issues);
    let framework = s(&mut f, "framework", issues);
    let runner = s(&mut f, "runner", issues);
    let mn = required(&mut f, "multinode", &root, issues).and_then(|v| {
        let p = Path::Key(&root, "multinode");
        match (&v.value, multinode) {
            (Value::Bool(b), _) if *b == multinode => Some(At::new(*b, v.pos)),
            (_, true) => {
                issues.push(v.pos, &p, "Input should be True");
                None
            }
            (_, false) => {
                issues.push(v.pos, &p, "Input should be False");
                None
            }
        }
    });
    let disagg = match f.get("disagg") {
        None => Ok(None),
        Some(v) => {
            let p = Path::Key(&root, "disagg");
            match (as_bool(v, &p, issues), multinode) {
                (Some(b), true) => Ok(Some(b)),
                (Some(b), false) if !b.value => Ok(Some(b)),
                (Some(_), false) => {
                    issues.push(v.pos, &p, "Input should be False");
                    Err(())
                }
                (None, _) => Err(()),
            }
        }
    };
    let router = opt_field(&mut f, "router", &root, issues, component);
    let kv_p2p = if multinode {
        opt_field(&mut f, "kv-p2p-transfer", &root, issues, as_nonempty_string)
    } else {
        Ok(None)
    };
    let scen = required(&mut f, "scenarios", &root, issues)
        .and_then(|v| scenarios(v, multinode, &Path::Key(&root, "scenarios"), issues));
    f.finish(&root, issues);
    if !issues.0.is_empty() {
        return None;
    }
    let e = MasterEntry {
        file: raw.file.clone(),
        key: raw.key.clone(),
        pos: raw.pos,
        image: image?,
        model: model?,
        model_prefix: model_prefix?,
        precision: precision?,
        framework: framework?,
        runner: runner?,
        multinode: mn?,
        disagg: disagg.ok()?,
        router: router.ok()?,
        kv_p2p_transfer: kv_p2p.ok()?,
        scenarios: scen?,
    };
    if let Err(msg) = master_rules(&e) {
        issues.push(e.pos, &root, format!("Value error, {msg}"));
        return None;
    }
    Some(e)
}

/// The cross-field rules of a master entry.
fn master_rules(e: &MasterEntry) -> Result<(), String> {
    if !e.scenarios.agentic_coding.items().is_empty() && !e.runner.value.starts_with("cluster:") {
        return Err(format!(
            "Agentic master configs must use a 'cluster:<name>' runner label, got '{}'",
            e.runner.value
        ));
    }
    if e.router.is_some() && e.search_entries().any(SearchEntry::has_router) {
        return Err("'router' must be declared either at the top level or in search-space entries, not both".into());
    }
    if e.kv_p2p_transfer.is_some() && e.search_entries().any(SearchEntry::has_kv_p2p) {
        return Err("'kv-p2p-transfer' must be declared either at the top level or in search-space entries, not both".into());
    }
    if !e.multinode.value && e.search_entries().any(SearchEntry::has_kv_p2p) {
        return Err("kv-p2p-transfer is only valid when multinode=true".into());
    }
    if e.disagg() && e.kv_p2p_transfer.is_none() {
        let mut entries = e.search_entries().peekable();
        if entries.peek().is_none() || !entries.all(SearchEntry::has_kv_p2p) {
            return Err("disagg=true requires kv-p2p-transfer at the top level or in every search-space entry".into());
        }
    }
    Ok(())
}
