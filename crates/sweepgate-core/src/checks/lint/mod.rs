//! Recipe lint: the careful reviewer's static findings on a PR, anchored to
//! file and line (`docs/rules.md` §3, L01–L29, plus L30: a backend
//! value unknown to the pinned engine, and L31: a repeated YAML key). One file per rule; every rule is a
//! pure function of the [`Context`] parsed once from a [`LintInput`].
//!
//! Knowledge that changes over time lives in `lint-data/` ([`LintData`]),
//! overridable per target repository.

pub mod baseline;
mod cache;
pub mod context;
pub mod data;
pub(crate) mod image;
pub mod input;
pub mod sarif;
pub(crate) mod spec;

mod l01_script_exists;
mod l02_same_script;
mod l03_runner_labels;
mod l04_recipe_exists;
mod l05_recipe_container;
mod l06_unused_variable;
mod l07_eval_context;
mod l08_spec_name;
mod l09_parallelism;
mod l10_abbreviated_flags;
mod l11_nested_config;
mod l12_unpinned_install;
mod l13_image_digest;
mod l14_public_image;
mod l15_upstream_image;
mod l16_changelog;
mod l17_changelog_claims;
mod l18_model_prefix;
mod l19_golden_al;
mod l20_synthetic_non_agentic;
mod l21_spec_arm;
mod l22_synthetic_gated;
mod l23_engine_patch;
mod l24_draft_precision;
mod l25_chat_template;
mod l26_benchmark_flags;
mod l27_thinking_mode;
mod l28_injector_length;
mod l29_references;
mod l30_backends;
mod l31_duplicate_keys;

use std::fmt;

pub use baseline::{BaselineState, Judged, has_new_errors, lint_judged};
pub(crate) use context::Context;
pub use context::clear_parse_caches;
pub use data::LintData;
pub use input::{ChangedPath, LintInput, Scope, Unread};

use crate::config::layout::Input;

/// How much a finding matters (`docs/rules.md` §3: E, W, I).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// `L01` … `L31` (`L00`: an input file could not be read).
    pub rule: &'static str,
    pub severity: Severity,
    pub file: String,
    /// 1-based.
    pub line: usize,
    pub message: String,
    /// The mechanical fix, when there is one.
    pub fix: Option<String>,
    /// What the finding is about, stable across line shifts (a config key,
    /// variable, flag or entry): part of its fingerprint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What makes two findings the same problem, when that is less than
    /// the subject and message: it replaces them in the fingerprint. A PR
    /// that swaps one engine patch for another, or bumps a non-upstream
    /// image to another non-upstream build, keeps the problem the base
    /// already had (`docs/precision.md`, adjudicated items).
    #[serde(skip)]
    pub identity: Option<String>,
    /// The base had the problem in a form its rule cannot read there (an
    /// image the legacy sweep workflows ran): pre-existing, whatever the
    /// fingerprints say.
    #[serde(skip)]
    pub known_at_base: bool,
}

impl Finding {
    pub(crate) fn new(
        rule: &'static str,
        severity: Severity,
        file: &str,
        line: usize,
        message: impl Into<String>,
    ) -> Self {
        Self {
            rule,
            severity,
            file: file.to_string(),
            line: line.max(1),
            message: message.into(),
            fix: None,
            subject: None,
            identity: None,
            known_at_base: false,
        }
    }

    pub(crate) fn known_at_base(mut self, known: bool) -> Self {
        self.known_at_base = known;
        self
    }

    pub(crate) fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    pub(crate) fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    pub(crate) fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

impl fmt::Display for Finding {
    /// `file:line: severity[Lnn] message (fix: …)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}[{}] {}",
            self.file, self.line, self.severity, self.rule, self.message
        )?;
        if let Some(fix) = &self.fix {
            write!(f, " (fix: {fix})")?;
        }
        Ok(())
    }
}

/// A lint rule: its id, a one-line description and the check.
pub(crate) struct Rule {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub check: fn(&Context<'_>) -> Vec<Finding>,
}

/// Every rule, in id order.
pub(crate) fn rules() -> Vec<Rule> {
    vec![
        l01_script_exists::RULE,
        l02_same_script::RULE,
        l03_runner_labels::RULE,
        l04_recipe_exists::RULE,
        l05_recipe_container::RULE,
        l06_unused_variable::RULE,
        l07_eval_context::RULE,
        l08_spec_name::RULE,
        l09_parallelism::RULE,
        l10_abbreviated_flags::RULE,
        l11_nested_config::RULE,
        l12_unpinned_install::RULE,
        l13_image_digest::RULE,
        l14_public_image::RULE,
        l15_upstream_image::RULE,
        l16_changelog::RULE,
        l17_changelog_claims::RULE,
        l18_model_prefix::RULE,
        l19_golden_al::RULE,
        l20_synthetic_non_agentic::RULE,
        l21_spec_arm::RULE,
        l22_synthetic_gated::RULE,
        l23_engine_patch::RULE,
        l24_draft_precision::RULE,
        l25_chat_template::RULE,
        l26_benchmark_flags::RULE,
        l27_thinking_mode::RULE,
        l28_injector_length::RULE,
        l29_references::RULE,
        l30_backends::RULE,
        l31_duplicate_keys::RULE,
    ]
}

/// The description of a rule id (`L00` included).
pub(crate) fn rule_description(id: &str) -> Option<(&'static str, &'static str)> {
    if id == "L00" {
        return Some((
            "unreadable-input",
            "An input file could not be parsed, so the rules that need it did not run.",
        ));
    }
    rules()
        .into_iter()
        .find(|r| r.id == id)
        .map(|r| (r.name, r.description))
}

/// The inputs a rule reads beyond the files a PR changes
/// (`config::layout`): where one did not exist yet at a commit, the rule
/// does not run there.
pub fn rule_inputs(id: &str) -> &'static [Input] {
    use Input::*;
    match id {
        "L01" | "L02" | "L21" => &[MasterConfigs, Runners, ScenarioScripts],
        "L03" => &[MasterConfigs, Runners],
        "L04" | "L05" => &[MasterConfigs, SrtRecipes],
        "L13" | "L14" | "L15" | "L20" | "L28" | "L30" => &[MasterConfigs],
        "L16" | "L17" => &[MasterConfigs, Changelog],
        "L18" => &[MasterConfigs, ModelsPolicy],
        "L19" => &[MasterConfigs, GoldenCurves],
        "L24" => &[SrtRecipes],
        "L27" => &[GoldenCurves],
        "L29" => &[ModelsPolicy],
        _ => &[],
    }
}

/// The rules that run on an input: those whose inputs all exist at its
/// commit.
pub fn rules_run(input: &LintInput) -> Vec<&'static str> {
    rules()
        .into_iter()
        .map(|r| r.id)
        .filter(|id| {
            rule_inputs(id)
                .iter()
                .all(|i| !input.inputs_not_yet.contains(i))
        })
        .collect()
}

/// Run every rule on the context; findings sorted by severity, file, line.
pub(crate) fn run_context(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out: Vec<Finding> = ctx.problems.clone();
    let on = rules_run(ctx.input);
    for r in rules().into_iter().filter(|r| on.contains(&r.id)) {
        out.extend((r.check)(ctx));
    }
    out.sort_by(|a, b| {
        (a.severity, &a.file, a.line, a.rule, &a.message)
            .cmp(&(b.severity, &b.file, b.line, b.rule, &b.message))
    });
    out.dedup();
    out
}

/// Lint a PR.
pub fn lint(input: &LintInput) -> Vec<Finding> {
    run_context(&Context::build(input))
}

/// Any finding is an error (new or not; see [`has_new_errors`]).
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}
