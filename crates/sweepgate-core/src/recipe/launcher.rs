//! Which benchmark script (or srt-slurm recipe) a config runs, per launcher.
//!
//! The sweep workflow runs `runners/launch_${RUNNER_NAME%%_*}.sh`; each
//! launcher builds the script path from the config's model prefix,
//! precision, framework, spec-decoding and scenario with its own rule and
//! fallback (docs/rules.md §1.8, docs/reference-automation.md §3.4). A config's
//! runner label can reach several launchers, and its script must resolve
//! under every one (L01, L02). The rules are data ([`LauncherTable`]) so a
//! repository whose launchers differ can describe its own.

use std::collections::{BTreeSet, HashSet};

/// The scenario a config runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Scenario {
    FixedSeqLen,
    AgenticCoding,
}

impl Scenario {
    /// The master-config name (`fixed-seq-len`, `agentic-coding`).
    pub fn from_config(s: &str) -> Option<Self> {
        match s {
            "fixed-seq-len" => Some(Self::FixedSeqLen),
            "agentic-coding" => Some(Self::AgenticCoding),
            _ => None,
        }
    }

    /// `SCENARIO_SUBDIR` as the workflow sets it.
    pub(crate) fn subdir(self) -> &'static str {
        match self {
            Self::FixedSeqLen => "fixed_seq_len/",
            Self::AgenticCoding => "agentic/",
        }
    }
}

/// The fields of one config (and one search-space arm) that decide the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptQuery<'a> {
    pub key: &'a str,
    pub model_prefix: &'a str,
    pub precision: &'a str,
    pub runner: &'a str,
    pub framework: &'a str,
    /// `mtp`, `draft_model` or `none`; only `mtp` adds `_mtp`.
    pub spec_decoding: &'a str,
    pub scenario: Scenario,
    pub multinode: bool,
    /// `CONFIG_FILE=` / `EVAL_CONFIG_FILE=` values of the arm's `additional-settings`.
    pub config_files: &'a [&'a str],
}

impl ScriptQuery<'_> {
    fn spec_suffix(&self) -> &'static str {
        if self.spec_decoding == "mtp" {
            "_mtp"
        } else {
            ""
        }
    }
}

/// How a launcher builds the single-node script name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Family {
    /// `<sku>_<framework><spec>.sh`, else `<sku>[_<legacy> if framework == legacy]<spec>.sh`.
    /// b200-*, b300-nv, h200-dgxc-slurm (legacy `trt`); mi355x-amds (legacy `atom`).
    FrameworkThenLegacy { legacy: String },
    /// `<sku>[_<legacy> if framework == legacy]<spec>.sh` only (h200-cw, h200-nb).
    LegacyOnly { legacy: String },
    /// `<sku><spec>.sh`: the framework is ignored (h100-*, mi300x, mi325x).
    FrameworkIgnored,
    /// `<sku>_<framework><spec>.sh`, else `<sku><spec>.sh`, else exit 1 (rtx6000pro-lat).
    FrameworkThenBare,
    /// The launcher runs multi-node jobs only (gb200-nv, gb300-nv, b200-nscale-slurm).
    MultiNodeOnly,
}

/// A multi-node route that runs an in-repo wrapper script.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MultiNodeScript {
    /// Frameworks taking this route.
    pub frameworks: Vec<String>,
    /// Only when the arm has no `CONFIG_FILE`.
    pub without_config_file: bool,
    /// Path template under the repository root: `{prefix}`, `{prec}`, `{sku}`,
    /// `{framework}`, `{agentic}` (`agentic/` for agentic-coding, else empty).
    pub template: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LauncherRule {
    /// Node prefix: `h200-cw` for runners `h200-cw_00`, `h200-cw_01`.
    pub name: String,
    /// The SKU hard-coded in the launcher.
    pub sku: String,
    pub family: Family,
    /// Multi-node routes to wrapper scripts, tried in order.
    pub multi_node_scripts: Vec<MultiNodeScript>,
    /// Multi-node frameworks that fall back to the single-node script dir
    /// (mi355x-amds runs `fixed_seq_len/<…>_mi355x_<framework>.sh`).
    pub multi_node_single_fallback: bool,
}

/// Repository paths the rules build on (configuration defaults).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Layout {
    pub single_node_root: String,
    /// `{name}` is the launcher name.
    pub launcher_pattern: String,
    /// Where local srt-slurm recipes overlay upstream `recipes/…`.
    pub srt_recipes_root: String,
    /// Where bare llm-d recipe names live.
    pub llmd_recipes_root: String,
}

impl Default for Layout {
    fn default() -> Self {
        Self {
            single_node_root: "benchmarks/single_node/".into(),
            launcher_pattern: "runners/launch_{name}.sh".into(),
            srt_recipes_root: "benchmarks/multi_node/srt-slurm-recipes/".into(),
            llmd_recipes_root: "benchmarks/multi_node/llm-d-recipes/".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LauncherTable {
    pub layout: Layout,
    pub rules: Vec<LauncherRule>,
}

impl Default for LauncherTable {
    /// The launchers of the reference repository at `843c6254`.
    fn default() -> Self {
        let rule = |name: &str, sku: &str, family: Family| LauncherRule {
            name: name.into(),
            sku: sku.into(),
            family,
            multi_node_scripts: Vec::new(),
            multi_node_single_fallback: false,
        };
        let a = |legacy: &str| Family::FrameworkThenLegacy {
            legacy: legacy.into(),
        };
        let mn = |fws: &[&str], without_config_file: bool, template: &str| MultiNodeScript {
            frameworks: fws.iter().map(|s| s.to_string()).collect(),
            without_config_file,
            template: template.into(),
        };
        let mut rules = vec![
            rule("b200-cw", "b200", a("trt")),
            rule("b200-nb", "b200", a("trt")),
            rule("b200-dgxc", "b200", a("trt")),
            // A byte-identical copy (symlink) of launch_b200-dgxc.sh.
            rule("b200-dgxc-slurm", "b200", a("trt")),
            rule("b300-nv", "b300", a("trt")),
            rule("h200-dgxc-slurm", "h200", a("trt")),
            rule(
                "h200-cw",
                "h200",
                Family::LegacyOnly {
                    legacy: "trt".into(),
                },
            ),
            rule(
                "h200-nb",
                "h200",
                Family::LegacyOnly {
                    legacy: "trt".into(),
                },
            ),
            rule("h100-cw", "h100", Family::FrameworkIgnored),
            rule("h100-cr", "h100", Family::FrameworkIgnored),
            rule("h100-dgxc-slurm", "h100", Family::FrameworkIgnored),
            rule("mi300x-amds", "mi300x", Family::FrameworkIgnored),
            rule("mi325x-amds", "mi325x", Family::FrameworkIgnored),
            rule("mi325x-tw", "mi325x", Family::FrameworkIgnored),
            rule("mi355x-amds", "mi355x", a("atom")),
            rule("rtx6000pro-lat", "rtx6000pro", Family::FrameworkThenBare),
            rule("gb200-nv", "gb200", Family::MultiNodeOnly),
            rule("gb300-nv", "gb300", Family::MultiNodeOnly),
            rule("b200-nscale-slurm", "b200", Family::MultiNodeOnly),
        ];
        for r in &mut rules {
            match r.name.as_str() {
                "b200-dgxc" | "b200-dgxc-slurm" => r.multi_node_scripts.push(mn(
                    &["tilert"],
                    false,
                    "benchmarks/multi_node/{prefix}_{prec}_{sku}_tilert-disagg.sh",
                )),
                "gb200-nv" => {
                    r.multi_node_scripts.push(mn(
                        &["llmd-vllm"],
                        false,
                        "benchmarks/multi_node/{prefix}_{prec}_{sku}_llmd-vllm-disagg.sh",
                    ));
                    r.multi_node_scripts.push(mn(
                        &["dynamo-sglang"],
                        true,
                        "benchmarks/multi_node/{prefix}_{prec}_{sku}_dynamo-sglang.sh",
                    ));
                }
                "mi355x-amds" => {
                    r.multi_node_scripts.push(mn(
                        &["sglang-disagg", "vllm-disagg", "atom-disagg"],
                        false,
                        "benchmarks/multi_node/{agentic}{prefix}_{prec}_{sku}_{framework}.sh",
                    ));
                    r.multi_node_single_fallback = true;
                }
                _ => {}
            }
        }
        Self {
            layout: Layout::default(),
            rules,
        }
    }
}

/// The files of a revision, as far as resolution needs them.
pub trait Tree {
    fn has(&self, path: &str) -> bool;
}

impl Tree for BTreeSet<String> {
    fn has(&self, path: &str) -> bool {
        self.contains(path)
    }
}

impl Tree for HashSet<String> {
    fn has(&self, path: &str) -> bool {
        self.contains(path)
    }
}

impl<T: Tree + ?Sized> Tree for &T {
    fn has(&self, path: &str) -> bool {
        (**self).has(path)
    }
}

/// How a `CONFIG_FILE` value was spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum RecipeSpelling {
    /// `recipes/<x>`: the upstream srt-slurm clone, overlaid by the local tree.
    Upstream,
    /// A repository-relative path.
    RepoRelative,
    /// A bare file name (llm-d).
    Bare,
}

/// One `CONFIG_FILE` reference and where it lives in this repository.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RecipeRef {
    /// As written in `additional-settings`, `:override…` suffix included.
    pub given: String,
    pub spelling: RecipeSpelling,
    /// The in-repo path checked (`benchmarks/multi_node/srt-slurm-recipes/<x>`).
    pub local_path: String,
    pub exists: bool,
}

impl RecipeRef {
    /// Missing locally, but an upstream `recipes/…` path may still exist in
    /// the srt-slurm clone (L04 then warns instead of failing).
    pub fn may_live_upstream(&self) -> bool {
        !self.exists && self.spelling == RecipeSpelling::Upstream
    }
}

/// Where one launcher sends the config.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Route {
    /// A benchmark script, tried in order; the first that exists runs.
    Script {
        candidates: Vec<String>,
        resolved: Option<String>,
        /// The path the launcher runs when none exists (bash then fails on
        /// it): the name to rename the script to.
        expected: String,
    },
    /// srt-slurm / llm-d recipes from `CONFIG_FILE`.
    Recipes(Vec<RecipeRef>),
    /// The launcher cannot run this config at all.
    Unsupported(String),
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Resolution {
    /// The launcher (node prefix), `h200-cw`.
    pub launcher: String,
    /// `runners/launch_h200-cw.sh`
    pub launcher_path: String,
    pub launcher_exists: bool,
    pub route: Route,
}

impl Resolution {
    /// The script or every recipe resolved.
    pub fn ok(&self) -> bool {
        match &self.route {
            Route::Script { resolved, .. } => resolved.is_some(),
            Route::Recipes(refs) => !refs.is_empty() && refs.iter().all(|r| r.exists),
            Route::Unsupported(_) => false,
        }
    }

    /// The resolved script, if this is a script route.
    pub fn script(&self) -> Option<&str> {
        match &self.route {
            Route::Script { resolved, .. } => resolved.as_deref(),
            _ => None,
        }
    }

    /// The name this launcher expects, for a "rename to" fix.
    pub fn expected(&self) -> Option<&str> {
        match &self.route {
            Route::Script { expected, .. } => Some(expected),
            _ => None,
        }
    }
}

/// Resolution of one config over every launcher its runner label reaches.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LabelResolution {
    pub key: String,
    pub runner: String,
    pub per_launcher: Vec<Resolution>,
    /// Launchers the label reaches that the table does not know.
    pub unknown_launchers: Vec<String>,
}

impl LabelResolution {
    /// Launchers whose script or recipe does not resolve (L01).
    pub fn failures(&self) -> Vec<&Resolution> {
        self.per_launcher.iter().filter(|r| !r.ok()).collect()
    }

    /// Distinct scripts that resolve; more than one breaks L02.
    pub fn distinct_scripts(&self) -> BTreeSet<&str> {
        self.per_launcher
            .iter()
            .filter_map(|r| r.script())
            .collect()
    }

    /// Script names every launcher of the label would run (the intersection
    /// of their candidate lists): renaming to one of these fixes L01 for all.
    pub fn accepted_by_all(&self) -> Vec<String> {
        let mut lists = self.per_launcher.iter().filter_map(|r| match &r.route {
            Route::Script { candidates, .. } => Some(candidates),
            _ => None,
        });
        let Some(first) = lists.next() else {
            return Vec::new();
        };
        let rest: Vec<&Vec<String>> = lists.collect();
        first
            .iter()
            .filter(|c| rest.iter().all(|l| l.contains(c)))
            .cloned()
            .collect()
    }
}

/// SKU of a runner label: drop `cluster:`, cut at the first `-` (§0.4.4).
pub(crate) fn sku_of(label: &str) -> &str {
    let l = label.strip_prefix("cluster:").unwrap_or(label);
    l.split('-').next().unwrap_or(l)
}

/// The launcher name of a concrete runner: `${RUNNER_NAME%%_*}`.
pub fn launcher_of_runner(runner_name: &str) -> &str {
    runner_name.split('_').next().unwrap_or(runner_name)
}

/// Strip the `:override…` suffix srt-slurm accepts after a recipe path.
/// A `CONFIG_FILE` value without its srt-slurm override selector
/// (`…/glm5-mtp.yaml:zip_override_mtp_8k1k_hightpt[0]`, `807fb7b` #2115).
pub(crate) fn strip_override(given: &str) -> &str {
    match given.find(':') {
        Some(i) if given[..i].ends_with(".yaml") || given[..i].ends_with(".yml") => &given[..i],
        _ => given,
    }
}

impl LauncherTable {
    pub(crate) fn rule(&self, launcher: &str) -> Option<&LauncherRule> {
        self.rules.iter().find(|r| r.name == launcher)
    }

    /// Launchers a runner label reaches. `nodes` are the label's runner
    /// names from `runners.yaml`; a label missing there maps by its name
    /// (`cluster:mi325x-tw` → `mi325x-tw`) or else by SKU to every launcher
    /// of that SKU.
    pub(crate) fn launchers_for_label(&self, label: &str, nodes: Option<&[String]>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        if let Some(nodes) = nodes {
            for n in nodes {
                let l = launcher_of_runner(n).to_string();
                if !out.contains(&l) {
                    out.push(l);
                }
            }
            return out;
        }
        let bare = label.strip_prefix("cluster:").unwrap_or(label);
        if self.rule(bare).is_some() {
            return vec![bare.to_string()];
        }
        // `h200-dgxc` names the fleet whose runners are `h200-dgxc-slurm_*`.
        let fleet: Vec<String> = self
            .rules
            .iter()
            .filter(|r| r.name.starts_with(&format!("{bare}-")))
            .map(|r| r.name.clone())
            .collect();
        if !fleet.is_empty() {
            return fleet;
        }
        let sku = sku_of(label);
        self.rules
            .iter()
            .filter(|r| r.sku == sku && r.family != Family::MultiNodeOnly)
            .map(|r| r.name.clone())
            .collect()
    }

    /// Resolve the config on one launcher.
    pub fn resolve(
        &self,
        launcher: &str,
        q: &ScriptQuery<'_>,
        tree: &dyn Tree,
    ) -> Option<Resolution> {
        let rule = self.rule(launcher)?;
        let launcher_path = self.layout.launcher_pattern.replace("{name}", launcher);
        let route = if q.multinode {
            self.multi_node_route(rule, q, tree)
        } else {
            self.single_node_route(rule, q, tree)
        };
        Some(Resolution {
            launcher: launcher.to_string(),
            launcher_exists: tree.has(&launcher_path),
            launcher_path,
            route,
        })
    }

    /// Resolve the config on every launcher its runner label reaches.
    pub fn resolve_label(
        &self,
        q: &ScriptQuery<'_>,
        nodes: Option<&[String]>,
        tree: &dyn Tree,
    ) -> LabelResolution {
        let mut per_launcher = Vec::new();
        let mut unknown_launchers = Vec::new();
        for l in self.launchers_for_label(q.runner, nodes) {
            match self.resolve(&l, q, tree) {
                Some(r) => per_launcher.push(r),
                None => unknown_launchers.push(l),
            }
        }
        LabelResolution {
            key: q.key.to_string(),
            runner: q.runner.to_string(),
            per_launcher,
            unknown_launchers,
        }
    }

    fn single_node_route(
        &self,
        rule: &LauncherRule,
        q: &ScriptQuery<'_>,
        tree: &dyn Tree,
    ) -> Route {
        let base = format!(
            "{}{}{}_{}_{}",
            self.layout.single_node_root,
            q.scenario.subdir(),
            q.model_prefix,
            q.precision,
            rule.sku
        );
        let spec = q.spec_suffix();
        let tagged = format!("{base}_{}{spec}.sh", q.framework);
        let legacy = |tag: &str| {
            if q.framework == tag {
                format!("{base}_{tag}{spec}.sh")
            } else {
                format!("{base}{spec}.sh")
            }
        };
        let candidates = match &rule.family {
            Family::FrameworkThenLegacy { legacy: tag } => {
                let mut v = vec![tagged];
                let l = legacy(tag);
                if !v.contains(&l) {
                    v.push(l);
                }
                v
            }
            Family::LegacyOnly { legacy: tag } => vec![legacy(tag)],
            Family::FrameworkIgnored => vec![format!("{base}{spec}.sh")],
            Family::FrameworkThenBare => vec![tagged, format!("{base}{spec}.sh")],
            Family::MultiNodeOnly => {
                return Route::Unsupported(format!(
                    "{} runs multi-node jobs only; a single-node config cannot run there",
                    rule.name
                ));
            }
        };
        script_route(candidates, tree)
    }

    fn multi_node_route(&self, rule: &LauncherRule, q: &ScriptQuery<'_>, tree: &dyn Tree) -> Route {
        let has_config = !q.config_files.is_empty();
        for m in &rule.multi_node_scripts {
            if m.frameworks.iter().any(|f| f == q.framework)
                && (!m.without_config_file || !has_config)
            {
                let path = m
                    .template
                    .replace("{prefix}", q.model_prefix)
                    .replace("{prec}", q.precision)
                    .replace("{sku}", &rule.sku)
                    .replace("{framework}", q.framework)
                    .replace(
                        "{agentic}",
                        if q.scenario == Scenario::AgenticCoding {
                            "agentic/"
                        } else {
                            ""
                        },
                    );
                return script_route(vec![path], tree);
            }
        }
        if has_config {
            return Route::Recipes(
                q.config_files
                    .iter()
                    .map(|c| self.recipe_ref(c, tree))
                    .collect(),
            );
        }
        if rule.multi_node_single_fallback {
            let path = format!(
                "{}fixed_seq_len/{}_{}_{}_{}.sh",
                self.layout.single_node_root, q.model_prefix, q.precision, rule.sku, q.framework
            );
            return script_route(vec![path], tree);
        }
        Route::Unsupported(format!(
            "{} has no multi-node route for framework {} without CONFIG_FILE",
            rule.name, q.framework
        ))
    }

    /// Where a `CONFIG_FILE` value lives in this repository.
    pub(crate) fn recipe_ref(&self, given: &str, tree: &dyn Tree) -> RecipeRef {
        let path = strip_override(given.trim());
        let (spelling, local_path) = if let Some(rest) = path.strip_prefix("recipes/") {
            (
                RecipeSpelling::Upstream,
                format!("{}{rest}", self.layout.srt_recipes_root),
            )
        } else if path.contains('/') {
            (RecipeSpelling::RepoRelative, path.to_string())
        } else {
            (
                RecipeSpelling::Bare,
                format!("{}{path}", self.layout.llmd_recipes_root),
            )
        };
        RecipeRef {
            given: given.to_string(),
            spelling,
            exists: tree.has(&local_path),
            local_path,
        }
    }
}

fn script_route(candidates: Vec<String>, tree: &dyn Tree) -> Route {
    let resolved = candidates.iter().find(|c| tree.has(c)).cloned();
    let expected = candidates.last().cloned().unwrap_or_default();
    Route::Script {
        candidates,
        resolved,
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    fn q<'a>(framework: &'a str, spec: &'a str, runner: &'a str) -> ScriptQuery<'a> {
        ScriptQuery {
            key: "k",
            model_prefix: "dsv4",
            precision: "fp8",
            runner,
            framework,
            spec_decoding: spec,
            scenario: Scenario::FixedSeqLen,
            multinode: false,
            config_files: &[],
        }
    }

    #[test]
    fn families_build_their_names() {
        let t = LauncherTable::default();
        let empty = tree(&[]);
        let path = |l: &str, q: ScriptQuery| {
            t.resolve(l, &q, &empty)
                .unwrap()
                .expected()
                .unwrap()
                .to_string()
        };
        assert_eq!(
            path("h200-cw", q("trt", "mtp", "h200")),
            "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_trt_mtp.sh"
        );
        assert_eq!(
            path("h100-cw", q("sglang", "draft_model", "h100")),
            "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h100.sh"
        );
        assert_eq!(
            path("mi355x-amds", q("atom", "none", "mi355x")),
            "benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi355x_atom.sh"
        );
        let r = t
            .resolve("rtx6000pro-lat", &q("sglang", "mtp", "rtx6000pro"), &empty)
            .unwrap();
        assert!(matches!(r.route, Route::Script { ref candidates, .. } if candidates.len() == 2));
        let gb = t
            .resolve("gb300-nv", &q("sglang", "none", "gb300"), &empty)
            .unwrap();
        assert!(matches!(gb.route, Route::Unsupported(_)));
    }

    #[test]
    fn labels_map_by_nodes_name_or_sku() {
        let t = LauncherTable::default();
        let nodes = vec![
            "h200-cw_00".to_string(),
            "h200-cw_01".into(),
            "h200-dgxc-slurm_3".into(),
        ];
        assert_eq!(
            t.launchers_for_label("h200", Some(&nodes)),
            vec!["h200-cw", "h200-dgxc-slurm"]
        );
        assert_eq!(
            t.launchers_for_label("cluster:mi325x-tw", None),
            vec!["mi325x-tw"]
        );
        assert_eq!(
            t.launchers_for_label("h200-dgxc", None),
            vec!["h200-dgxc-slurm"]
        );
        assert_eq!(
            t.launchers_for_label("h200-new", None),
            vec!["h200-dgxc-slurm", "h200-cw", "h200-nb"]
        );
        assert_eq!(sku_of("cluster:b200-dgxc"), "b200");
        assert_eq!(
            strip_override("recipes/a/b.yaml:override[1]"),
            "recipes/a/b.yaml"
        );
    }
}
