//! `MODELS.md` (English only; `MODELS_zh.md` is a translation and is not
//! read): scenarios, dated deprecations, the model support matrix and the
//! engine submission policy.
//!
//! A deprecation notice is headed by its *last day*; it takes effect the
//! next day. Lookups take the date as an argument: the clock belongs to the
//! caller.

mod document;
mod markdown;
mod model;

pub use document::parse;
pub use model::{
    Active, Added, Deprecation, Enactment, Engine, EnginePolicy, ModelRow, ModelsMd, Origin,
    Scenario, ScenarioRow, ScenarioStatus, Target,
};

#[cfg(test)]
use chrono::NaiveDate;

/// A date written `YYYY-MM-DD`, for the unit tests of `markdown` and
/// `document`.
#[cfg(test)]
fn d(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}
