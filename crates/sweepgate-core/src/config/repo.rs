//! Per-repository configuration: `.github/sweepgate.toml` on the target
//! repository's default branch (`docs/contracts.md` §1–§2).
//!
//! Every path, label, URL and list that sweepgate reads from the benchmark
//! repository comes from here; the defaults are the August layout of
//! `fixtures/inferencex/`. Unknown keys are an error (a typo must not be
//! silently ignored), and every error carries file, line and column. The
//! files that held `[verifier]` and `[lint]` before are read by
//! [`super::sources`] while their section is absent.
use serde::{Deserialize, Serialize};

use crate::checks::VerifierSettings;
use crate::checks::lint::data::{DataError, LintData};

/// Where the file lives on the default branch.
pub const REPO_CONFIG_PATH: &str = ".github/sweepgate.toml";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct RepoConfig {
    /// `mode = "shadow"`: sweepgate works on this repository but writes
    /// nothing to GitHub; what it would write is stored and shown on the
    /// dashboard (`docs/shadow.md`). A repository can only ask for less:
    /// a server in shadow mode stays in shadow mode whatever this says.
    pub mode: WriteMode,
    pub paths: Paths,
    pub labels: Labels,
    pub links: Links,
    pub sweep: SweepSettings,
    pub upstream: Upstream,
    pub policy: Policy,
    pub signoff: SignoffSettings,
    /// The verifier's open points (`docs/rules.md` §5).
    pub verifier: VerifierSettings,
    /// Overrides of the lint data (`lint-data/`): tables merge key by key,
    /// lists replace. Validated against the lint data when loaded.
    pub lint: toml::Table,
    /// The automation sweepgate replaces.
    pub legacy: Legacy,
}

/// Whether sweepgate's writes to GitHub are sent or only recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WriteMode {
    #[default]
    Live,
    Shadow,
}

/// File locations inside the benchmark repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Paths {
    pub master_configs: Vec<String>,
    pub runners: String,
    pub changelog: String,
    pub golden_al_dir: String,
    pub models_policy: String,
    pub checklist_template: String,
    pub eval_thresholds: String,
    pub waivers_dir: String,
    pub codeowners: String,
    /// Root of every benchmark script (a PR touching it gets the guide).
    pub benchmarks: String,
    /// Directories holding single-node benchmark scripts, by scenario.
    pub fixed_seq_len_scripts: String,
    pub agentic_scripts: String,
    /// Directory holding multi-node scripts and recipes.
    pub multi_node_scripts: String,
    /// Glob of the launcher scripts (`runners/launch_*.sh`).
    pub launchers: String,
    /// Shared benchmark helpers (`benchmarks/benchmark_lib.sh`).
    pub benchmark_lib: String,
    /// Folders whose files named the sweeps' images before the master
    /// configs held every sweep. Set only by a replay's layout
    /// (`config::layout::LEGACY_SWEEPS`), never by a repository's
    /// configuration: an image the base names there ran already, so a PR
    /// that moves it into a master config does not introduce it.
    #[serde(skip)]
    pub legacy_sweeps: Vec<String>,
}

impl Default for Paths {
    fn default() -> Self {
        Self {
            master_configs: vec![
                "configs/nvidia-master.yaml".into(),
                "configs/amd-master.yaml".into(),
            ],
            runners: "configs/runners.yaml".into(),
            changelog: "perf-changelog.yaml".into(),
            golden_al_dir: "golden_al_distribution/".into(),
            models_policy: "MODELS.md".into(),
            checklist_template: "docs/PR_REVIEW_CHECKLIST.md".into(),
            eval_thresholds: "utils/evals/thresholds.yaml".into(),
            waivers_dir: "docs/waiver/".into(),
            codeowners: ".github/CODEOWNERS".into(),
            benchmarks: "benchmarks/".into(),
            fixed_seq_len_scripts: "benchmarks/single_node/fixed_seq_len/".into(),
            agentic_scripts: "benchmarks/single_node/agentic/".into(),
            multi_node_scripts: "benchmarks/multi_node/".into(),
            launchers: "runners/launch_*.sh".into(),
            benchmark_lib: "benchmarks/benchmark_lib.sh".into(),
            legacy_sweeps: Vec::new(),
        }
    }
}

/// Sweep labels (`docs/contracts.md` §2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Labels {
    /// Primary labels that are enabled, exactly one allowed on a PR.
    pub primary: Vec<String>,
    /// Modifiers, only together with a primary label.
    pub modifiers: Vec<String>,
    /// Which label means what: code asks for a role, never for a name.
    pub roles: LabelRoles,
}

/// The meaning of the sweep labels (`[labels.roles]`), so a repository can
/// name them as it likes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct LabelRoles {
    /// Primary: canary first, and each family stops at its first failure.
    pub fail_fast: String,
    /// Primary: canary first; matrix jobs continue after a failure.
    pub full: String,
    /// Primary: no canary and no fail-fast.
    pub non_canary: String,
    /// Primary: a trimmed sweep (fewer concurrencies), not a full sweep.
    pub trimmed: String,
    /// Modifier: every eval, not only the changed configs'.
    pub all_evals: String,
    /// Modifier: evals only, no throughput jobs.
    pub evals_only: String,
    /// Modifier: the fast agentic subset.
    pub agentx_fast: String,
}

impl Default for LabelRoles {
    fn default() -> Self {
        Self {
            fail_fast: "full-sweep-fail-fast".into(),
            full: "full-sweep-enabled".into(),
            non_canary: "non-canary-full-sweep-enabled".into(),
            trimmed: "sweep-enabled".into(),
            all_evals: "all-evals".into(),
            evals_only: "evals-only".into(),
            agentx_fast: "agentx-fast".into(),
        }
    }
}

impl LabelRoles {
    /// Whether the primary label runs the canary first.
    pub fn canary(&self, primary: &str) -> bool {
        primary != self.non_canary
    }

    /// Whether a family stops at its first failure under the primary label.
    pub fn fail_fast(&self, primary: &str) -> bool {
        primary == self.fail_fast
    }

    /// Whether the primary label asks for a trimmed sweep.
    pub fn is_trimmed(&self, primary: &str) -> bool {
        primary == self.trimmed
    }

    /// Modifiers that make a run unfit to pin (`docs/contracts.md` §3).
    pub fn unpinnable(&self) -> [&str; 2] {
        [&self.evals_only, &self.agentx_fast]
    }
}

impl Default for Labels {
    fn default() -> Self {
        Self {
            primary: vec![
                "full-sweep-fail-fast".into(),
                "full-sweep-enabled".into(),
                "non-canary-full-sweep-enabled".into(),
            ],
            modifiers: vec![
                "all-evals".into(),
                "evals-only".into(),
                "agentx-fast".into(),
            ],
            roles: LabelRoles::default(),
        }
    }
}

/// Links used in comments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Links {
    pub results_site: String,
    pub rerun_docs: String,
    /// Label documentation; empty means "the README of the repository".
    pub label_docs: String,
    /// Where contributors ask a core maintainer.
    pub maintainer_contact: String,
}

impl Default for Links {
    fn default() -> Self {
        Self {
            results_site: "https://inferencex.semianalysis.com".into(),
            rerun_docs: "https://docs.github.com/en/actions/how-tos/manage-workflow-runs/re-run-workflows-and-jobs#re-running-failed-jobs-in-a-workflow".into(),
            label_docs: String::new(),
            maintainer_contact: "Slack".into(),
        }
    }
}

/// How sweeps are run (`docs/contracts.md` §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SweepMode {
    /// The repository's own workflow runs sweeps; sweepgate gates and tracks.
    #[default]
    Track,
    /// sweepgate dispatches and cancels sweeps itself.
    Dispatch,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SweepSettings {
    pub mode: SweepMode,
    /// The sweep workflow file name.
    pub workflow: String,
    /// Results repository (`owner/name`) that receives `stage-results`.
    pub results_repository: String,
    /// `repository_dispatch` event type sent for staging.
    pub staging_event: String,
    /// Largest chunk of jobs per family served by the matrix endpoint.
    pub chunk_size: usize,
    /// Logins (the GitHub-set `sender`) allowed to send staging callbacks
    /// besides sweepgate's own; never a payload field.
    pub staging_senders: Vec<String>,
}

impl Default for SweepSettings {
    fn default() -> Self {
        Self {
            mode: SweepMode::Track,
            workflow: "run-sweep.yml".into(),
            results_repository: "SemiAnalysisAI/InferenceX-app".into(),
            staging_event: "stage-results".into(),
            chunk_size: 256,
            staging_senders: Vec::new(),
        }
    }
}

/// Upstream recipe sources (Check 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Upstream {
    pub sglang_repository: String,
    pub sglang_paths: Vec<String>,
    pub vllm_recipes_repository: String,
    pub published_pages: Vec<String>,
}

impl Default for Upstream {
    fn default() -> Self {
        Self {
            sglang_repository: "sgl-project/sglang".into(),
            sglang_paths: vec!["docs_new/".into(), "docs/".into()],
            vllm_recipes_repository: "vllm-project/recipes".into(),
            published_pages: vec![
                "https://docs.sglang.io/cookbook/".into(),
                "https://recipes.vllm.ai/".into(),
            ],
        }
    }
}

/// Policy lists that change over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Policy {
    /// GPU SKUs on which upstream images are expected (Check 6).
    pub established_skus: Vec<String>,
    /// Image repositories accepted as upstream (Check 6).
    pub upstream_image_prefixes: Vec<String>,
    /// Core team; empty means "the team on the `*` line of CODEOWNERS".
    pub core_team: String,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            established_skus: [
                "h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            upstream_image_prefixes: vec!["vllm/".into(), "lmsysorg/".into()],
            core_team: String::new(),
        }
    }
}

/// Who may stand in for sweepgate and how much one actor may ask of it
/// (`docs/contracts.md` §3–§4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct SignoffSettings {
    /// The commit status context of the verdict (take over the replaced
    /// verifier's required status by naming its context).
    pub status_context: String,
    /// Deprecated spelling of `[legacy] logins`, moved there when loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legacy_logins: Option<Vec<String>>,
    /// Verifier runs one actor may cause per PR and hour.
    pub runs_per_hour: u32,
    /// Upstream pull requests one sign-off may make sweepgate read.
    pub upstream_links: usize,
}

impl Default for SignoffSettings {
    fn default() -> Self {
        Self {
            status_context: "codeowner-signoff-verify".into(),
            legacy_logins: None,
            runs_per_hour: 6,
            upstream_links: 20,
        }
    }
}

/// The automation sweepgate replaces (`docs/contracts.md` §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Legacy {
    /// Accounts whose marked comments suppress a duplicate but are never
    /// edited.
    pub logins: Vec<String>,
}

impl Default for Legacy {
    fn default() -> Self {
        Self {
            logins: vec!["github-actions[bot]".into()],
        }
    }
}

/// A configuration file that cannot be used, with its position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Reads a TOML file into `T`: not UTF-8, bad syntax, an unknown key or
/// a wrong type is an error at its line and column. Returns the text too.
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    file: &str,
    bytes: &[u8],
) -> Result<(T, String), ConfigError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_col(bytes, e.valid_up_to());
        ConfigError {
            file: file.to_owned(),
            line,
            column,
            message: "the file is not valid UTF-8".into(),
        }
    })?;
    let value: T = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| line_col(text.as_bytes(), s.start))
            .unwrap_or((1, 1));
        ConfigError {
            file: file.to_owned(),
            line,
            column,
            message: e.message().to_owned(),
        }
    })?;
    Ok((value, text.to_owned()))
}

impl RepoConfig {
    /// Parses and validates one file holding every section; `file` names
    /// it in errors. Deprecated keys are moved to their new place.
    pub fn from_toml(file: &str, bytes: &[u8]) -> Result<Self, ConfigError> {
        Ok(super::sources::resolve(Some((file, bytes)), &[])?.config)
    }

    /// The configuration as one file (what [`RepoConfig::from_toml`] reads
    /// back unchanged): the last valid configuration is kept in this form.
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(self)
    }

    /// The lint data: `lint-data/` with the `[lint]` overrides applied.
    pub fn lint_data(&self) -> Result<LintData, DataError> {
        if self.lint.is_empty() {
            return LintData::defaults();
        }
        let text = toml::to_string(&self.lint).map_err(|e| DataError {
            file: REPO_CONFIG_PATH.into(),
            message: e.to_string(),
        })?;
        LintData::with_override(REPO_CONFIG_PATH, &text)
    }

    pub(crate) fn validate(&self, file: &str, text: &str) -> Result<(), ConfigError> {
        let at = |key: &str, message: String| {
            let (line, column) = locate_key(text, key);
            ConfigError {
                file: file.to_owned(),
                line,
                column,
                message,
            }
        };
        if self.paths.master_configs.is_empty() {
            return Err(at(
                "master-configs",
                "paths.master-configs must name at least one file".into(),
            ));
        }
        if self.labels.primary.is_empty() {
            return Err(at(
                "primary",
                "labels.primary must name at least one label".into(),
            ));
        }
        if let Some(dup) = self
            .labels
            .modifiers
            .iter()
            .find(|m| self.labels.primary.contains(m))
        {
            return Err(at(
                "modifiers",
                format!("label `{dup}` is both a primary label and a modifier"),
            ));
        }
        if self.sweep.chunk_size == 0 || self.sweep.chunk_size > 256 {
            return Err(at(
                "chunk-size",
                format!(
                    "sweep.chunk-size must be between 1 and 256, not {}",
                    self.sweep.chunk_size
                ),
            ));
        }
        if !self.sweep.results_repository.contains('/') {
            return Err(at(
                "results-repository",
                format!(
                    "sweep.results-repository must be `owner/name`, not `{}`",
                    self.sweep.results_repository
                ),
            ));
        }
        if self.signoff.status_context.trim().is_empty() {
            return Err(at(
                "status-context",
                "signoff.status-context must not be empty".into(),
            ));
        }
        if self.signoff.runs_per_hour == 0 {
            return Err(at(
                "runs-per-hour",
                "signoff.runs-per-hour must be at least 1".into(),
            ));
        }
        for url in [&self.links.results_site, &self.links.rerun_docs] {
            if !url.starts_with("https://") && !url.starts_with("http://") {
                return Err(at("results-site", format!("`{url}` is not an http(s) URL")));
            }
        }
        Ok(())
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(bytes.len());
    let before = &bytes[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = offset
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    (line, col)
}

/// Position of the first line assigning `key`, or 1:1 when the key is absent
/// (the value came from a default).
fn locate_key(text: &str, key: &str) -> (usize, usize) {
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return (i + 1, line.len() - t.len() + 1);
        }
    }
    (1, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_contract_defaults() {
        let cfg = RepoConfig::from_toml("x.toml", b"").unwrap();
        assert_eq!(cfg, RepoConfig::default());
        assert_eq!(cfg.paths.changelog, "perf-changelog.yaml");
        assert_eq!(cfg.labels.primary[0], "full-sweep-fail-fast");
        assert_eq!(cfg.sweep.mode, SweepMode::Track);
    }

    #[test]
    fn october_layout_overrides_paths() {
        let text = br#"
[paths]
master-configs = ["inferencex-e2e/configs/nvidia-master.yaml"]
changelog = "inferencex-e2e/perf-changelog.yaml"
golden-al-dir = "infx/golden_al_distribution/"
"#;
        let cfg = RepoConfig::from_toml(".github/sweepgate.toml", text).unwrap();
        assert_eq!(cfg.paths.changelog, "inferencex-e2e/perf-changelog.yaml");
        assert_eq!(cfg.paths.runners, "configs/runners.yaml");
    }

    #[test]
    fn unknown_key_is_reported_with_line() {
        let text = b"[paths]\nchangelog = \"a.yaml\"\nchangelgo = \"b\"\n";
        let err = RepoConfig::from_toml(".github/sweepgate.toml", text).unwrap_err();
        assert_eq!(err.line, 3, "{err}");
        assert!(err.message.contains("changelgo"), "{err}");
        assert!(err.to_string().starts_with(".github/sweepgate.toml:3:"));
    }

    #[test]
    fn wrong_type_is_reported_with_line() {
        let text = b"[sweep]\nmode = \"track\"\nchunk-size = \"big\"\n";
        let err = RepoConfig::from_toml("c.toml", text).unwrap_err();
        assert_eq!((err.line, err.column), (3, 14), "{err}");
    }

    #[test]
    fn invalid_value_is_reported_at_its_key() {
        let text = b"[sweep]\n\nchunk-size = 1000\n";
        let err = RepoConfig::from_toml("c.toml", text).unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.message.contains("between 1 and 256"));
    }

    #[test]
    fn shadow_mode_is_a_top_level_key_and_survives_keeping() {
        let cfg =
            RepoConfig::from_toml("c.toml", b"mode = \"shadow\"\n[sweep]\nmode = \"track\"\n")
                .unwrap();
        assert_eq!(cfg.mode, WriteMode::Shadow);
        assert_eq!(RepoConfig::default().mode, WriteMode::Live);
        // The last valid configuration is kept as TOML and read back.
        let kept = cfg.to_toml().unwrap();
        let back = RepoConfig::from_toml("c.toml", kept.as_bytes()).unwrap();
        assert_eq!(back.mode, WriteMode::Shadow);
        let err = RepoConfig::from_toml("c.toml", b"mode = \"loud\"\n").unwrap_err();
        assert_eq!(err.line, 1, "{err}");
    }

    #[test]
    fn unknown_mode_is_an_error() {
        let err = RepoConfig::from_toml("c.toml", b"[sweep]\nmode = \"yolo\"\n").unwrap_err();
        assert_eq!(err.line, 2);
    }
}
