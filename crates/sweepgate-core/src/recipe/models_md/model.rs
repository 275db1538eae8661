//! What `MODELS.md` says, typed: scenarios, deprecations, the support
//! matrix and the engine policy, with the date-aware lookups over them.

use chrono::NaiveDate;

use super::markdown::split_and;

/// A benchmark scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scenario {
    AgenticCoding,
    /// Fixed sequence length, `isl`/`osl` in tokens.
    Fixed {
        isl: u32,
        osl: u32,
    },
}

impl Scenario {
    /// Reads "Agentic coding", "Single-turn 8k1k", "8k1k", "1k8k", ….
    pub(crate) fn parse(text: &str) -> Option<Scenario> {
        let t = text.trim().trim_matches('*').trim();
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("agentic coding") || lower == "agentic-coding" {
            return Some(Scenario::AgenticCoding);
        }
        let name = lower.strip_prefix("single-turn ").unwrap_or(&lower);
        let name = name.split_whitespace().next()?;
        let (i, o) = name.split_once('k')?;
        let o = o.strip_suffix('k')?;
        let isl = i.parse::<u32>().ok()?.checked_mul(1024)?;
        let osl = o.parse::<u32>().ok()?.checked_mul(1024)?;
        Some(Scenario::Fixed { isl, osl })
    }

    /// `8192/1024` is 8k1k and so on.
    #[cfg(test)]
    fn from_isl_osl(isl: u32, osl: u32) -> Scenario {
        Scenario::Fixed { isl, osl }
    }

    /// "Single-turn 8k1k" / "Agentic coding".
    #[cfg(test)]
    fn name(&self) -> String {
        match *self {
            Scenario::AgenticCoding => "Agentic coding".to_owned(),
            Scenario::Fixed { isl, osl } if isl % 1024 == 0 && osl % 1024 == 0 => {
                format!("Single-turn {}k{}k", isl / 1024, osl / 1024)
            }
            Scenario::Fixed { isl, osl } => format!("Single-turn {isl}/{osl}"),
        }
    }
}

/// What a deprecation retires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Scenario(Scenario),
    /// Every recipe of a precision (`bf16`), in every scenario.
    Precision(String),
    /// The non-spec-decode arm of a scenario (A/B retirement); `arm` is the
    /// text as written ("non-MTP").
    NonSpecArm {
        scenario: Scenario,
        arm: String,
    },
    /// The whole model (retired: no active scenario left).
    Model,
    /// Text the parser could not classify.
    Other(String),
}

/// Whether a deprecation has been carried out in the master configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enactment {
    /// Announced; nothing says whether it was carried out.
    Announced,
    Enacted(NaiveDate),
    /// The text says "not yet enacted".
    NotYetEnacted,
}

/// Where a deprecation is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A table or sentence of the Deprecation Notice.
    Notice,
    /// The Scenarios table ("Deprecated for all models since …").
    Scenarios,
    /// The support matrix ("None (retired …)").
    Matrix,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    pub line: usize,
    /// `None`: every model.
    pub prefix: Option<String>,
    /// Display name as written ("MiniMax-M3").
    pub model: Option<String>,
    pub target: Target,
    /// The date in the notice heading (the last day it still runs).
    pub last_day: Option<NaiveDate>,
    /// The first day it applies; `None` when it applies from the model's
    /// first day ("deprecated from day 0").
    pub effective: Option<NaiveDate>,
    pub status: Enactment,
    pub origin: Origin,
    /// What remains or is published instead, as written.
    pub remains: Option<String>,
}

impl Deprecation {
    /// In force on `on` (enacted or not: callers decide what "not yet
    /// enacted" means for them).
    pub(crate) fn in_force(&self, on: NaiveDate) -> bool {
        self.effective.is_none_or(|d| d <= on)
    }

    fn applies_to(&self, prefix: &str) -> bool {
        self.prefix.as_deref().is_none_or(|p| p == prefix)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioStatus {
    Active,
    DeprecatedSince(NaiveDate),
    /// Status text the parser could not read.
    Unknown(String),
}

/// A row of the Scenarios table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioRow {
    pub line: usize,
    pub name: String,
    pub scenario: Option<Scenario>,
    /// `(isl, osl)` when the cell is numeric.
    pub isl_osl: Option<(u32, u32)>,
    pub status: ScenarioStatus,
    pub pr: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    Date { date: NaiveDate, pr: Option<u64> },
    Tbd,
    Unparsed(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Active {
    /// `None (retired YYYY-MM-DD, …)`.
    Retired {
        date: Option<NaiveDate>,
        pr: Option<u64>,
    },
    /// Scenario texts with their qualifiers ("Agentic coding (DSpark only)").
    Scenarios(Vec<String>),
}

/// A row of the model support matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRow {
    pub line: usize,
    pub class: String,
    pub prefixes: Vec<String>,
    pub added: Added,
    pub active: Active,
    pub deprecated: Vec<String>,
}

impl ModelRow {
    pub fn is_retired(&self) -> bool {
        matches!(self.active, Active::Retired { .. })
    }

    /// Whether an active scenario of the row is `scenario` (qualifiers such
    /// as "(DSpark only)" are kept in the text, not judged here).
    pub fn lists_active(&self, scenario: Scenario) -> bool {
        match &self.active {
            Active::Retired { .. } => false,
            Active::Scenarios(list) => list.iter().any(|s| {
                split_and(s)
                    .iter()
                    .any(|part| Scenario::parse(part) == Some(scenario))
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Vllm,
    Sglang,
}

/// A row of the engine submission policy table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnginePolicy {
    pub line: usize,
    pub model: String,
    pub prefix: String,
    pub primary: Vec<Engine>,
    /// Backticked draft model ids of the agreed (PoR) column.
    pub agreed_drafts: Vec<String>,
    pub agreed_text: String,
    pub proposed: String,
    pub additional: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelsMd {
    pub file: String,
    pub scenarios: Vec<ScenarioRow>,
    pub deprecations: Vec<Deprecation>,
    pub matrix: Vec<ModelRow>,
    pub engine_policy: Vec<EnginePolicy>,
    /// Hardware named in the brand-new-SKU exception of the engine policy.
    pub new_hardware_exceptions: Vec<String>,
}

impl ModelsMd {
    /// The matrix row that lists `prefix`.
    pub fn model(&self, prefix: &str) -> Option<&ModelRow> {
        self.matrix
            .iter()
            .find(|r| r.prefixes.iter().any(|p| p == prefix))
    }

    pub fn policy(&self, prefix: &str) -> Option<&EnginePolicy> {
        self.engine_policy.iter().find(|p| p.prefix == prefix)
    }

    /// Deprecations of `prefix` (or of every model) in force on `on`.
    pub fn deprecations_on<'a>(
        &'a self,
        prefix: &'a str,
        on: NaiveDate,
    ) -> impl Iterator<Item = &'a Deprecation> + 'a {
        self.deprecations
            .iter()
            .filter(move |d| d.applies_to(prefix) && d.in_force(on))
    }

    /// The first deprecation in force on `on` that retires this launch: the
    /// whole model, its scenario, its precision, or (when it does not use
    /// speculative decoding) the non-spec arm of its scenario.
    pub fn deprecation_for(
        &self,
        prefix: &str,
        scenario: Scenario,
        precision: &str,
        uses_spec_decoding: bool,
        on: NaiveDate,
    ) -> Option<&Deprecation> {
        let in_force = |d: &&Deprecation| d.applies_to(prefix) && d.in_force(on);
        self.deprecations
            .iter()
            .filter(in_force)
            .find(|d| match &d.target {
                Target::Model => true,
                Target::Scenario(s) => *s == scenario,
                Target::Precision(p) => p.eq_ignore_ascii_case(precision),
                Target::NonSpecArm { scenario: s, .. } => *s == scenario && !uses_spec_decoding,
                Target::Other(_) => false,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_names() {
        assert_eq!(
            Scenario::parse("Single-turn 8k1k"),
            Some(Scenario::Fixed {
                isl: 8192,
                osl: 1024
            })
        );
        assert_eq!(
            Scenario::parse("Agentic coding (DSpark only)"),
            Some(Scenario::AgenticCoding)
        );
        assert_eq!(
            Scenario::from_isl_osl(1024, 8192).name(),
            "Single-turn 1k8k"
        );
        assert_eq!(Scenario::parse("Long context"), None);
    }
}
