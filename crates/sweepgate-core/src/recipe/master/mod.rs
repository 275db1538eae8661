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

mod document;
mod fields;
mod model;
mod validate;
/// The one YAML layer, as the master parser names it.
pub(crate) use super::yaml;

pub(crate) use document::{MasterDocument, parse_document};
pub use document::{parse, parse_many, parse_many_each};
pub use model::{
    AgenticBlock, At, Backend, Component, FixedBlock, KvOffloading, ListField, MasterConfig,
    MasterEntry, RawMap, Scenarios, SearchEntry, SpecDecoding, UnvalidatedEntry, Worker,
};
