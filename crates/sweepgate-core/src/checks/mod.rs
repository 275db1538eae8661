//! Checks: pure functions over the PR facts. `lint` holds the recipe lint
//! rules (one file each).
//!
//! The verifier checks 0–17 (`docs/rules.md` §2, `docs/contracts.md` §6)
//! live one per file (`c00_codeowner` … `c17_metrics`). Each is
//! `fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult`: it reads the
//! [`Snapshot`] (built once, at a pinned head SHA) and never does I/O.
pub mod lint;

pub mod c00_codeowner;
pub mod c01_sweep;
pub(crate) mod c02_evals;
pub mod c03_upstream;
pub mod c04_reuse;
pub(crate) mod c05_checklist;
pub(crate) mod c06_image;
pub(crate) mod c07_deprecated;
pub(crate) mod c08_arch;
pub(crate) mod c09_chat;
pub(crate) mod c10_patches;
pub(crate) mod c11_golden;
pub(crate) mod c12_append;
pub(crate) mod c13_draft;
pub mod c14_pareto;
pub mod c15_description;
pub(crate) mod c16_nvidia;
pub(crate) mod c17_metrics;
pub(crate) mod engine_first;
pub mod snapshot;
pub mod verifier;

use serde::{Deserialize, Serialize};

pub use c07_deprecated::is_unregistered_prefix;
pub(crate) use snapshot::Snapshot;

/// Check names, exactly as `docs/contracts.md` §6 spells them.
pub const CHECK_NAMES: [&str; 18] = [
    "CODEOWNER",
    "Sweep on in-PR commit",
    "Evals",
    "Upstream recipe",
    "Reuse command",
    "Checklist template",
    "Upstream image / ordering",
    "Deprecated models",
    "No architecture hacks",
    "Chat template",
    "No engine patches",
    "Golden AL",
    "Append-only",
    "Draft precision",
    "Pareto coverage",
    "PR description",
    "NVIDIA overview",
    "Metrics publication",
];

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    Fail,
    #[serde(rename = "n/a")]
    NotApplicable,
    /// The deterministic part ran; a person must judge the rest. Blocks
    /// until acknowledged with `/ack-check`.
    Review,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail => "FAIL",
            Outcome::NotApplicable => "N/A",
            Outcome::Review => "REVIEW",
        }
    }
}

/// Where a reason can be checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Evidence {
    /// A file at the assessed commit (1-based line; 0 when the whole file).
    File { path: String, line: usize },
    /// A workflow run.
    Run { id: u64 },
    /// A comment, review, pull request or page.
    Link { url: String },
}

/// An accepted `/ack-check` on a REVIEW row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acknowledgement {
    pub user: String,
    pub reason: String,
    pub url: String,
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub number: u8,
    pub name: String,
    pub outcome: Outcome,
    /// One line: the root issue first, then the evidence.
    pub reason: String,
    pub evidence: Vec<Evidence>,
    /// Set when a REVIEW row was acknowledged; the outcome is then PASS.
    pub acknowledged: Option<Acknowledgement>,
    /// Check 16 is information only: it never blocks.
    pub advisory: bool,
    /// What a FAIL row is about, stable across line shifts (a config key,
    /// file, knob or changelog entry): part of its fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

impl CheckResult {
    pub(crate) fn new(number: u8, outcome: Outcome, reason: impl Into<String>) -> Self {
        Self {
            number,
            name: CHECK_NAMES
                .get(usize::from(number))
                .copied()
                .unwrap_or("unknown")
                .to_owned(),
            outcome,
            reason: one_line(&reason.into()),
            evidence: Vec::new(),
            acknowledged: None,
            advisory: false,
            subject: None,
        }
    }
    pub(crate) fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }
    pub fn pass(number: u8, reason: impl Into<String>) -> Self {
        Self::new(number, Outcome::Pass, reason)
    }
    pub fn fail(number: u8, reason: impl Into<String>) -> Self {
        Self::new(number, Outcome::Fail, reason)
    }
    pub fn na(number: u8, reason: impl Into<String>) -> Self {
        Self::new(number, Outcome::NotApplicable, reason)
    }
    pub fn review(number: u8, reason: impl Into<String>) -> Self {
        Self::new(number, Outcome::Review, reason)
    }
    pub(crate) fn with(mut self, e: Evidence) -> Self {
        if !self.evidence.contains(&e) {
            self.evidence.push(e);
        }
        self
    }
    pub(crate) fn with_all(mut self, es: impl IntoIterator<Item = Evidence>) -> Self {
        for e in es {
            self = self.with(e);
        }
        self
    }
    pub fn file(self, path: &str, line: usize) -> Self {
        self.with(Evidence::File {
            path: path.to_owned(),
            line,
        })
    }
    /// Blocks the verdict: FAIL, or REVIEW not acknowledged (never for an
    /// advisory check).
    pub fn is_blocking(&self) -> bool {
        !self.advisory && matches!(self.outcome, Outcome::Fail | Outcome::Review)
    }
}

/// Reasons are one line.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for ch in s.chars() {
        if ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ' {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(ch);
        }
    }
    out
}

/// The configuration choices behind the open points of `docs/rules.md`
/// §5, with the recommended defaults: `[verifier]` of the repository
/// configuration (formerly [`VERIFIER_SETTINGS_PATH`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct VerifierSettings {
    /// §5.1: repository roles that stand in for core-team membership when
    /// the team cannot be read.
    pub core_team_proxy_roles: Vec<String>,
    /// §5.2: Check 6(a) covers the whole vLLM/SGLang family (`extended`,
    /// recommended) or only `vllm`/`sglang` (`strict`).
    pub upstream_image_scope: ImageScope,
    /// §5.3: an announced but not-yet-enacted A/B retirement fails newly
    /// added arms (recommended) rather than giving REVIEW.
    pub announced_retirement_fails_new_arms: bool,
    /// §5.5: the srt-slurm default of `benchmark.use_chat_template` on
    /// `sa-bench`; unset means unknown (REVIEW).
    pub sa_bench_chat_template_default: Option<bool>,
    /// §5.6: config keys allowed to use synthetic acceptance on a
    /// non-agentic config (sanctioned exceptions).
    pub synthetic_acceptance_allow: Vec<String>,
    /// Synthetic-acceptance injectors by framework and where they take the
    /// length from (`explicit` or `golden-curve`).
    pub injectors: Vec<InjectorSetting>,
    /// Command spellings accepted for Check 4.
    pub reuse_commands: Vec<String>,
    /// Check 14: frontier points per curve needed to pass.
    pub pareto_min_points: usize,
    /// Check 14: agentic latency percentiles on the x axis.
    pub agentic_latency_percentiles: Vec<String>,
    /// Check 9: srt-slurm `benchmark.type` values that drive the chat
    /// endpoint by construction (AgentX trace replay).
    pub chat_endpoint_benchmark_types: Vec<String>,
    /// Check 5: Jaccard similarity on content words for an item to match.
    pub checklist_similarity: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ImageScope {
    #[default]
    Extended,
    Strict,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct InjectorSetting {
    pub framework: String,
    #[serde(default)]
    pub length: InjectorLength,
    /// Where the injector lives (cited in reasons).
    #[serde(default)]
    pub script: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum InjectorLength {
    #[default]
    Explicit,
    GoldenCurve,
}

/// Where the settings lived before `[verifier]` (still read while the
/// section is absent).
pub const VERIFIER_SETTINGS_PATH: &str = ".github/sweepgate-verifier.toml";

impl Default for VerifierSettings {
    fn default() -> Self {
        Self {
            core_team_proxy_roles: vec!["admin".into(), "maintain".into()],
            upstream_image_scope: ImageScope::Extended,
            announced_retirement_fails_new_arms: true,
            sa_bench_chat_template_default: None,
            synthetic_acceptance_allow: Vec::new(),
            injectors: ["dynamo-vllm", "dynamo-sglang"]
                .into_iter()
                .map(|f| InjectorSetting {
                    framework: f.into(),
                    length: InjectorLength::Explicit,
                    script: "runners/inject_synthetic_acceptance.py".into(),
                })
                .collect(),
            reuse_commands: vec!["/use".into(), "/reuse-sweep-run".into()],
            pareto_min_points: 5,
            agentic_latency_percentiles: vec!["p90".into(), "p75".into()],
            chat_endpoint_benchmark_types: vec!["custom".into(), "agentx".into()],
            checklist_similarity: 0.6,
        }
    }
}

/// A settings file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct SettingsError {
    pub file: String,
    pub message: String,
}

impl VerifierSettings {
    pub fn from_toml(file: &str, text: &str) -> Result<Self, SettingsError> {
        toml::from_str(text).map_err(|e| SettingsError {
            file: file.to_owned(),
            message: e.to_string(),
        })
    }

    /// The golden-AL injectors in the model's terms.
    pub(crate) fn golden_injectors(&self) -> Vec<crate::recipe::golden::Injector> {
        use crate::recipe::golden::{Injector, LengthSource};
        self.injectors
            .iter()
            .map(|i| Injector {
                framework: i.framework.clone(),
                length: match i.length {
                    InjectorLength::Explicit => LengthSource::Explicit,
                    InjectorLength::GoldenCurve => LengthSource::GoldenCurve,
                },
            })
            .collect()
    }
}

// ---------------------------------------------------------------------
// Text helpers shared by the checks.

/// Lines of a unified-diff patch that were added, with their line number at
/// the head revision.
pub(crate) fn added_lines(patch: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut line = 0usize;
    for l in patch.lines() {
        if let Some(rest) = l.strip_prefix("@@") {
            // @@ -a,b +c,d @@
            line = rest
                .split_whitespace()
                .find_map(|t| t.strip_prefix('+'))
                .and_then(|t| t.split(',').next())
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(1);
            continue;
        }
        if line == 0 {
            // Headers (`---`/`+++`) before the first hunk.
            continue;
        }
        if let Some(a) = l.strip_prefix('+') {
            out.push((line, a));
            line += 1;
        } else if l.starts_with('-') || l.starts_with('\\') {
        } else {
            line += 1;
        }
    }
    out
}

/// Drops shell comment lines (first non-blank character `#`), keeping line
/// numbers (the line becomes empty).
pub(crate) fn strip_shell_comments(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with('#') {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// 1-based line of the first occurrence of `needle` in `text`.
pub(crate) fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.find(needle)
        .map(|i| text[..i].bytes().filter(|&b| b == b'\n').count() + 1)
}

/// Short SHA (8 characters), as the seeds write it.
pub(crate) fn sha8(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}

/// Joins with commas and a final "and".
pub(crate) fn join_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [a] => a.clone(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

/// Lines of a comment body that hold a command (`docs/contracts.md` §3):
/// the one reader the commands handler uses too
/// (`crate::commands::markdown`), so the verifier never counts a line the
/// handler would refuse (in `<pre>`, code, quotes or HTML comments).
/// Returns `(1-based line, text from the '/', same-line HTML comments
/// removed, trimmed)`.
pub fn command_lines(body: &str) -> Vec<(usize, String)> {
    crate::commands::markdown::slash_lines(body)
        .into_iter()
        .map(|l| (l.line, l.text.trim().to_owned()))
        .collect()
}

/// Values assigned to `name` in a script or recipe: `--name value`,
/// `--name=value`, `name: value`, `name=value` (quotes removed), with
/// 1-based lines. Shell comments should be stripped first.
pub(crate) fn setting_values(text: &str, name: &str) -> Vec<(String, usize)> {
    // Compiling the pattern cost more than matching it; names are few.
    static PATTERNS: std::sync::Mutex<std::collections::BTreeMap<String, regex::Regex>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let re = {
        let mut cache = PATTERNS.lock().unwrap_or_else(|e| e.into_inner());
        match cache.get(name) {
            Some(re) => re.clone(),
            None => {
                let pat = format!(
                    r#"(?m)(?:^|[\s'"{{,(])-{{0,2}}{}(?:\s*[:=]\s*|\s+)("[^"]*"|'[^']*'|[^\s,'"}}\\]+)"#,
                    regex::escape(name)
                );
                let Ok(re) = regex::Regex::new(&pat) else {
                    return Vec::new();
                };
                if cache.len() >= 256 {
                    cache.clear();
                }
                cache.insert(name.to_owned(), re.clone());
                re
            }
        }
    };
    re.captures_iter(text)
        .filter_map(|c| {
            let m = c.get(1)?;
            let v = m.as_str().trim_matches(['"', '\'']).to_owned();
            if v.starts_with("--") {
                return None;
            }
            let line = text[..m.start()].bytes().filter(|&b| b == b'\n').count() + 1;
            Some((v, line))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_outside_code_and_quotes() {
        // (a line right after indented code is not a command: a blank line
        // separates `/use 6`.)
        let b = "/use 1\n```\n/use 2\n```\n> /use 3\n<!--\n/use 4\n-->\n    /use 5\n\n /use 6\n";
        let got: Vec<String> = command_lines(b).into_iter().map(|(_, t)| t).collect();
        assert_eq!(got, vec!["/use 1", "/use 6"]);
    }

    /// The verifier and the commands handler read the same lines (issue 18,
    /// item 3): `<pre>`, code blocks, quotes and HTML comments hide a
    /// command from both.
    #[test]
    fn one_reader_for_the_verifier_and_the_handler() {
        let bodies = [
            "<pre>\n/ack-check 3 ok\n</pre>",
            "<pre>/ack-check 3 ok\n</pre>",
            "```\n/ack-check 3 ok\n```",
            "~~~\n/use 1\n~~~",
            "> /ack-check 3 ok",
            "<!-- /ack-check 3 ok -->",
            "<!--\n/ack-check 3 ok\n-->",
            "`x\n/ack-check 3 ok`",
            "<details>\n\n/use 5\n</details>",
            "/ack-check 3 ok",
            "ok\n/use 1 <!-- hidden -->\n",
        ];
        for b in bodies {
            let verifier: Vec<String> = command_lines(b).into_iter().map(|(_, t)| t).collect();
            let handler: Vec<String> = crate::commands::parse_comment(b)
                .into_iter()
                .map(|l| l.normalized)
                .collect();
            assert_eq!(
                verifier.len(),
                handler.len(),
                "{b:?}: {verifier:?} vs {handler:?}"
            );
        }
        assert!(command_lines("<pre>\n/ack-check 3 ok\n</pre>").is_empty());
        assert_eq!(command_lines("/ack-check 3 ok")[0].1, "/ack-check 3 ok");
    }

    #[test]
    fn added_lines_track_head_numbers() {
        let p = "@@ -1,2 +1,3 @@\n a\n+b\n c\n@@ -10,1 +11,2 @@\n x\n+y\n";
        assert_eq!(added_lines(p), vec![(2, "b"), (12, "y")]);
    }

    #[test]
    fn setting_values_in_all_spellings() {
        let t = "--speculative-num-steps 3\n  speculative-num-steps: 4\nexport SGLANG_SIMULATE_ACC_LEN=3.51\n  SGLANG_SIMULATE_ACC_LEN: \"3.5\"\n";
        let v: Vec<String> = setting_values(t, "speculative-num-steps")
            .into_iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(v, vec!["3", "4"]);
        let v = setting_values(t, "SGLANG_SIMULATE_ACC_LEN");
        assert_eq!(v, vec![("3.51".to_owned(), 3), ("3.5".to_owned(), 4)]);
    }

    #[test]
    fn reasons_are_one_line() {
        assert_eq!(one_line("a\n  b\tc "), "a b c");
    }

    #[test]
    fn blocking_rows() {
        assert!(CheckResult::fail(0, "x").is_blocking());
        assert!(CheckResult::review(3, "x").is_blocking());
        assert!(!CheckResult::pass(3, "x").is_blocking());
        assert!(!CheckResult::na(3, "x").is_blocking());
        let mut r = CheckResult::review(16, "x");
        r.advisory = true;
        assert!(!r.is_blocking());
    }

    #[test]
    fn settings_defaults_and_overrides() {
        let s = VerifierSettings::from_toml("v.toml", "").unwrap();
        assert_eq!(s, VerifierSettings::default());
        let s = VerifierSettings::from_toml(
            "v.toml",
            "[[injectors]]\nframework = \"sglang\"\nlength = \"golden-curve\"\n",
        )
        .unwrap();
        assert_eq!(s.injectors.len(), 1);
        assert!(VerifierSettings::from_toml("v.toml", "nope = 1").is_err());
    }
}
