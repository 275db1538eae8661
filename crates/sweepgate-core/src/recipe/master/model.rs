//! The typed model of validated master configs: entries, scenarios,
//! search-space entries, workers and the values kept verbatim for rows.

use std::collections::HashMap;
use std::sync::Arc;

use serde::ser::{SerializeMap, Serializer};

use super::yaml::Pos;
use crate::recipe::Loc;

/// A value with the position of its YAML node.
#[derive(Debug, Clone, PartialEq)]
pub struct At<T> {
    pub value: T,
    pub pos: Pos,
}

impl<T> At<T> {
    pub(super) fn new(value: T, pos: Pos) -> Self {
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
    pub(super) fn new(entries: Vec<(String, serde_json::Value)>) -> Self {
        let mut sorted: Vec<&(String, serde_json::Value)> = entries.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut canonical = String::from("{");
        for (i, (k, v)) in sorted.into_iter().enumerate() {
            if i > 0 {
                canonical.push(',');
            }
            json_str(&mut canonical, k);
            canonical.push(':');
            canonical_json(&mut canonical, v);
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

/// Appends compact JSON with sorted object keys, written in place (every
/// worker and router of the master configs gets one).
fn canonical_json(out: &mut String, v: &serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_str(out, k);
                out.push(':');
                canonical_json(out, &o[k]);
            }
            out.push('}');
        }
        serde_json::Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(out, x);
            }
            out.push(']');
        }
        serde_json::Value::String(s) => json_str(out, s),
        other => {
            use std::fmt::Write;
            let _ = write!(out, "{other}");
        }
    }
}

/// A JSON string literal, as `serde_json` writes it.
fn json_str(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::Value::from(s).to_string());
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
    pub(super) hardware_truthy: bool,
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
    pub(super) fn has_router(&self) -> bool {
        matches!(&self.router, Some(At { value: Some(_), .. }))
    }
    pub(super) fn has_kv_p2p(&self) -> bool {
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
    pub(super) index: HashMap<String, usize>,
    /// Entries that failed validation, when read entry by entry
    /// ([`super::parse_many_each`]); empty otherwise.
    pub unvalidated: Vec<UnvalidatedEntry>,
}

/// An entry that failed validation (an older era's schema, for example
/// under `.github/configs/`), with the top-level fields that are readable
/// as strings: enough for the image rules (L15, Check 6).
#[derive(Debug, Clone)]
pub struct UnvalidatedEntry {
    pub file: Arc<str>,
    pub key: String,
    pub pos: Pos,
    pub image: Option<At<String>>,
    pub model: Option<At<String>>,
    pub model_prefix: Option<At<String>>,
    pub framework: Option<At<String>>,
    pub runner: Option<At<String>>,
    /// Why it failed validation.
    pub error: crate::recipe::ParseError,
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
