//! `perf-changelog.yaml`: the list of entries that select config keys to
//! sweep, and its two rule sets (docs/reference-automation.md §2.1–§2.2):
//!
//! * the **PR gate** (`pr_gate`): what `check-changelog` enforces before a
//!   sweep may run. It reads only the lines added by `git diff base head`,
//!   rejects any removed line with content, and validates the added entries.
//!   Position, link format and separators are *not* part of it.
//! * the **strict byte rules** (`strict_findings`): what the merge helper
//!   and recovery tool require (append at the tail, byte-identical history,
//!   one blank line between entries, canonical links). Reported as lint
//!   findings, never blocking.

mod diff;
mod document;
mod gate;
mod strict;
pub(crate) mod yaml;

pub use document::{
    Changelog, DEFAULT_PLACEHOLDERS, Document, Entry, EntryError, Flag, PrLink, ScenarioType, Text,
    classify_link, parse, read,
};
pub(crate) use document::{key_matches, may_anchor_in_line, read_appended};
pub use gate::{GateOptions, GateReport, GateRule, GateViolation, Side, pr_gate};
pub use strict::{Finding, StrictMode, StrictOptions, StrictRule, strict_findings};
