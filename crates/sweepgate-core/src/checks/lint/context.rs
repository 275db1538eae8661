//! Facts parsed once from a [`LintInput`]: master configs at base and head,
//! the keys the PR changes (directly or through the files they resolve to),
//! per-launcher resolutions, script and recipe facts, changelog, MODELS.md
//! and golden curves. Pure.

use std::collections::{BTreeMap, BTreeSet};

use crate::files::FileStatus;
use crate::recipe::changelog;
use crate::recipe::golden::GoldenSet;
use crate::recipe::launcher::{LabelResolution, LauncherTable, Route, Scenario, ScriptQuery};
use crate::recipe::master::{self, MasterConfig, MasterEntry, SearchEntry};
use crate::recipe::models_md::{self, ModelsMd};
use crate::recipe::runners::{self, RunnerConfig};
use crate::recipe::script::{self, ScriptFacts};
use crate::recipe::srt::{self, SrtRecipe};

use std::sync::{Arc, LazyLock};

use crate::config::layout::Input;

use super::cache::{BlobCache, Part, Shared, part};
use super::input::{FileBytes, LintInput, Scope};
use super::{Finding, Severity};

type Parsed<T> = Result<T, crate::recipe::ParseError>;
/// A kept parse: a hit hands out the `Arc`, not a copy.
type Kept<T> = Shared<Parsed<Arc<T>>>;

/// Parse results by content, across the lint runs of the process.
static MASTERS: Kept<MasterConfig> = LazyLock::new(|| BlobCache::new(16));
static ENTRIES: Kept<BTreeMap<String, Arc<serde_json::Value>>> =
    LazyLock::new(|| BlobCache::new(32));
/// A script's facts with its text: a context hands out the kept `Arc`,
/// neither parsed nor converted to text again.
static SCRIPTS: Kept<Script> = LazyLock::new(|| BlobCache::new(4096));
static RECIPES: Kept<SrtRecipe> = LazyLock::new(|| BlobCache::new(4096));
static CHANGELOGS: Kept<changelog::Document> = LazyLock::new(|| BlobCache::new(8));
static RUNNERS: Kept<RunnerConfig> = LazyLock::new(|| BlobCache::new(8));
/// The checks' scripts and recipes, by content: a PR's changed scripts
/// and those of its changed keys, reused by the next commits. Fewer kept
/// than the lint's: sharing its 4096 took 200 MB more on a replay.
static CHECK_SCRIPTS: Kept<ScriptFacts> = LazyLock::new(|| BlobCache::new(256));
static CHECK_RECIPES: Kept<SrtRecipe> = LazyLock::new(|| BlobCache::new(256));

/// Empties the lint's parse caches (benchmarks measure a cold process).
pub fn clear_parse_caches() {
    MASTERS.clear();
    ENTRIES.clear();
    SCRIPTS.clear();
    RECIPES.clear();
    CHANGELOGS.clear();
    RUNNERS.clear();
    CHECK_SCRIPTS.clear();
    CHECK_RECIPES.clear();
}

fn cached<T>(
    cache: &BlobCache<Parsed<Arc<T>>>,
    parts: &[Part<'_>],
    parse: impl FnOnce() -> Parsed<T>,
) -> Parsed<Arc<T>> {
    cache
        .get_or(parts, || parse().map(Arc::new))
        .as_ref()
        .clone()
}

/// [`master::parse_many_each`] of these master configs through the
/// process-wide cache (the lint reads entries one by one).
fn parse_masters_each_cached(
    files: &[(&str, &FileBytes)],
) -> Result<Arc<MasterConfig>, crate::recipe::ParseError> {
    let parts: Vec<Part<'_>> = files.iter().map(|(p, b)| part(p, b)).collect();
    cached(&MASTERS, &parts, || {
        master::parse_many_each(parts.iter().map(|(p, b, _)| (*p, *b)))
    })
}

/// [`master::parse_many`] of these master configs, from the same cache
/// (the replay's gate parses the head's too): the first entry that fails
/// validation is the error, as `parse_many` gives it.
pub fn parse_masters_cached(
    files: &[(&str, &FileBytes)],
) -> Result<Arc<MasterConfig>, crate::recipe::ParseError> {
    let m = parse_masters_each_cached(files)?;
    match m.unvalidated.first() {
        Some(u) => Err(u.error.clone()),
        None => Ok(m),
    }
}

/// [`script::parse_script`] for the checks (9, 10, 11, 13), kept by
/// content: they parse the same scripts commit after commit.
pub(crate) fn parse_script_cached(path: &str, bytes: &[u8]) -> Parsed<Arc<ScriptFacts>> {
    cached(&CHECK_SCRIPTS, &[(path, bytes, None)], || {
        script::parse_script(path, bytes)
    })
}

/// [`srt::parse_recipe`] for the checks, kept likewise.
pub(crate) fn parse_recipe_cached(path: &str, bytes: &[u8]) -> Parsed<Arc<SrtRecipe>> {
    cached(&CHECK_RECIPES, &[(path, bytes, None)], || {
        srt::parse_recipe(path, bytes)
    })
}

/// How a key changed between base and head (docs/rules.md §0.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum KeyChange {
    Added,
    Changed,
    /// Unchanged itself, but a file it resolves to changed.
    Indirect,
}

/// One distinct launch variant of a key: a spec value and scenario (and
/// the recipes of its arms), with its resolution on every launcher.
#[derive(Debug, Clone)]
pub struct KeyRoute {
    pub spec: String,
    pub scenario: Scenario,
    pub config_files: Vec<String>,
    pub resolution: LabelResolution,
}

/// A script in scope, with its text.
#[derive(Debug, Clone)]
pub struct Script {
    pub facts: ScriptFacts,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct Context<'a> {
    pub input: &'a LintInput,
    pub head_master: Option<Arc<MasterConfig>>,
    /// Entry content (positions dropped) per key, base and head.
    /// Shared with the parse cache: a build copies no entry.
    pub base_entries: BTreeMap<String, Arc<serde_json::Value>>,
    pub head_entries: BTreeMap<String, Arc<serde_json::Value>>,
    pub changed_keys: Vec<(String, KeyChange)>,
    pub removed_keys: Vec<String>,
    pub runners: Option<Arc<RunnerConfig>>,
    pub base_runners: Option<Arc<RunnerConfig>>,
    pub launchers: LauncherTable,
    /// Routes of every head key.
    pub routes: BTreeMap<String, Vec<KeyRoute>>,
    pub scripts: BTreeMap<String, Arc<Script>>,
    pub recipes: BTreeMap<String, Arc<SrtRecipe>>,
    pub base_changelog: Option<Arc<changelog::Document>>,
    pub head_changelog: Option<Arc<changelog::Document>>,
    pub models: Option<ModelsMd>,
    pub golden: GoldenSet,
    /// Files that could not be read as what they should be.
    pub problems: Vec<Finding>,
}

/// How the `L00` finding of a master config begins when some of its
/// entries failed validation (the first is named): the rules read the others.
pub(crate) const UNREAD_ENTRIES: &str = "could not read every entry of this file, so the lint rules did not run on the entries that fail validation (the first one follows): ";

/// How an `L00` finding for a file the rules could not read begins.
pub(crate) const UNREAD: &str =
    "could not read this file, so the lint rules that need it did not run: ";

fn entry_json(
    file: &str,
    bytes: &FileBytes,
    out: &mut BTreeMap<String, Arc<serde_json::Value>>,
) -> Result<(), crate::recipe::ParseError> {
    let entries = cached(&ENTRIES, &[part(file, bytes)], || {
        let doc = master::parse_document(file, bytes)?;
        Ok(doc
            .entries
            .into_iter()
            .map(|e| (e.key.clone(), Arc::new(e.node.value.to_json())))
            .collect())
    })?;
    out.extend(entries.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(())
}

/// `CONFIG_FILE=` / `EVAL_CONFIG_FILE=` values of a search entry's workers.
pub(crate) fn config_files(s: &SearchEntry) -> Vec<String> {
    settings(s)
        .into_iter()
        .filter_map(|t| {
            let (k, v) = t.split_once('=')?;
            matches!(k.trim(), "CONFIG_FILE" | "EVAL_CONFIG_FILE")
                .then(|| v.trim().trim_matches('"').to_string())
        })
        .collect()
}

/// Every `additional-settings` item of a search entry's workers, with its line.
pub(crate) fn settings_at(s: &SearchEntry) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for w in [&s.prefill, &s.decode].into_iter().flatten() {
        if let Some(master::At {
            value: Some(items), ..
        }) = &w.additional_settings
        {
            for i in items {
                out.push((i.value.clone(), i.pos.line as usize));
            }
        }
    }
    out
}

pub(crate) fn settings(s: &SearchEntry) -> Vec<String> {
    settings_at(s).into_iter().map(|(t, _)| t).collect()
}

/// Search entries with their scenario.
pub(crate) fn arms(e: &MasterEntry) -> Vec<(Scenario, &SearchEntry)> {
    let mut out = Vec::new();
    for b in e.scenarios.fixed_seq_len.items() {
        for s in &b.search_space {
            out.push((Scenario::FixedSeqLen, s));
        }
    }
    for b in e.scenarios.agentic_coding.items() {
        for s in &b.search_space {
            out.push((Scenario::AgenticCoding, s));
        }
    }
    out
}

impl<'a> Context<'a> {
    pub fn build(input: &'a LintInput) -> Self {
        let cfg = &input.config;
        let mut problems = Vec::new();
        let mut problem = |file: &str, e: &crate::recipe::ParseError, lead: &str| {
            problems.push(Finding::new(
                "L00",
                Severity::Warning,
                file,
                e.loc.line.max(1),
                format!("{lead}{}", e.message),
            ));
        };

        // Parse failures of the base side: what the PR changed in those
        // files cannot be told, and that is said, not hidden.
        let mut base_errors: Vec<crate::recipe::ParseError> = Vec::new();

        // Master configs.
        let head_files: Vec<(&str, &FileBytes)> = cfg
            .paths
            .master_configs
            .iter()
            .filter_map(|p| input.head_files.get(p).map(|b| (p.as_str(), b)))
            .collect();
        let head_master = if head_files.is_empty() {
            None
        } else {
            match parse_masters_each_cached(&head_files) {
                Ok(m) => {
                    // Entry by entry: an entry of an older schema is said
                    // (its file's first, at its file:line), and the rules
                    // read the others (`c028a3a`, `0513746`).
                    let mut said: BTreeSet<&str> = BTreeSet::new();
                    for u in &m.unvalidated {
                        if said.insert(&*u.file) {
                            problem(&u.file, &u.error, UNREAD_ENTRIES);
                        }
                    }
                    Some(m)
                }
                Err(e) => {
                    problem(&e.loc.file.clone(), &e, UNREAD);
                    None
                }
            }
        };
        let mut base_entries = BTreeMap::new();
        let mut head_entries = BTreeMap::new();
        for p in &cfg.paths.master_configs {
            if let Some(b) = input.base_following(p)
                && let Err(e) = entry_json(p, b, &mut base_entries)
            {
                base_errors.push(e);
            }
            if let Some(b) = input.head_files.get(p) {
                let _ = entry_json(p, b, &mut head_entries);
            }
        }

        let read_runners = |b: &FileBytes| {
            cached(&RUNNERS, &[part(&cfg.paths.runners, b)], || {
                runners::parse(&cfg.paths.runners, b)
            })
        };
        let runners =
            input
                .head_files
                .get(&cfg.paths.runners)
                .and_then(|b| match read_runners(b) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        problem(&cfg.paths.runners, &e, UNREAD);
                        None
                    }
                });
        let base_runners = input
            .base_following(&cfg.paths.runners)
            .and_then(|b| read_runners(b).map_err(|e| base_errors.push(e)).ok());

        let launchers = LauncherTable::default();
        let mut routes = BTreeMap::new();
        // The launcher model resolves the scenario-folder layout only: on an
        // older commit no key has a route (the rules that need one are off).
        if let Some(m) = head_master
            .as_ref()
            .filter(|_| !input.inputs_not_yet.contains(&Input::ScenarioScripts))
        {
            for e in &m.entries {
                routes.insert(
                    e.key.clone(),
                    Self::routes_of(&launchers, runners.as_deref(), e, &input.head_tree),
                );
            }
        }

        // Scripts and recipes in scope: changed ones, and those resolved.
        let mut scripts = BTreeMap::new();
        let mut recipes = BTreeMap::new();
        for (path, bytes) in input.head_files.iter() {
            if Self::is_benchmark_script(input, path) {
                match cached(&SCRIPTS, &[part(path, bytes)], || {
                    script::parse_script(path, bytes).map(|facts| Script {
                        facts,
                        text: String::from_utf8_lossy(bytes).into_owned(),
                    })
                }) {
                    Ok(s) => {
                        scripts.insert(path.clone(), s);
                    }
                    Err(e) => problem(path, &e, UNREAD),
                }
            } else if Self::is_recipe_path(input, path) {
                match cached(&RECIPES, &[part(path, bytes)], || {
                    srt::parse_recipe(path, bytes)
                }) {
                    Ok(r) => {
                        recipes.insert(path.clone(), r);
                    }
                    Err(e) => problem(path, &e, UNREAD),
                }
            }
        }

        let read_changelog = |b: &FileBytes| {
            cached(&CHANGELOGS, &[part(&cfg.paths.changelog, b)], || {
                changelog::read(&cfg.paths.changelog, b)
            })
        };
        let base_changelog = input
            .base_files
            .get(&cfg.paths.changelog)
            .and_then(|b| read_changelog(b).map_err(|e| base_errors.push(e)).ok());
        let head_changelog = match input.head_files.get(&cfg.paths.changelog) {
            Some(b) => match read_changelog(b) {
                Ok(d) => Some(d),
                Err(e) => {
                    problem(&cfg.paths.changelog, &e, UNREAD);
                    None
                }
            },
            None => None,
        };
        let models = input
            .head(&cfg.paths.models_policy)
            .and_then(|b| models_md::parse(&cfg.paths.models_policy, b).ok());
        let golden_files: Vec<(&str, &[u8])> = input
            .head_files
            .iter()
            .filter(|(p, _)| p.starts_with(&cfg.paths.golden_al_dir))
            .map(|(p, b)| (p.as_str(), b.as_slice()))
            .collect();
        let golden = GoldenSet::parse_files(golden_files).unwrap_or_default();

        for e in base_errors {
            problems.push(Finding::new(
                "L00",
                Severity::Warning,
                &e.loc.file,
                e.loc.line.max(1),
                format!(
                    "could not read the base version of this file, so what the PR changes in it could not be told: {}",
                    e.message
                ),
            ));
        }
        for u in &input.unread {
            problems.push(Finding::new(
                "L00",
                Severity::Warning,
                &u.path,
                1,
                format!(
                    "could not read this file, so the lint rules that need it did not run: {}",
                    u.reason
                ),
            ));
        }
        problems.extend(absent_inputs(input));

        let mut ctx = Context {
            input,
            head_master,
            base_entries,
            head_entries,
            changed_keys: Vec::new(),
            removed_keys: Vec::new(),
            runners,
            base_runners,
            launchers,
            routes,
            scripts,
            recipes,
            base_changelog,
            head_changelog,
            models,
            golden,
            problems,
        };
        ctx.changed_keys = ctx.compute_changed_keys();
        ctx.removed_keys = ctx
            .base_entries
            .keys()
            .filter(|k| !ctx.head_entries.contains_key(*k))
            .cloned()
            .collect();
        ctx
    }

    fn is_benchmark_script(input: &LintInput, path: &str) -> bool {
        let p = &input.config.paths;
        path.ends_with(".sh") && path.starts_with(&p.benchmarks) && path != p.benchmark_lib
    }

    fn is_recipe_path(input: &LintInput, path: &str) -> bool {
        let p = &input.config.paths;
        (path.ends_with(".yaml") || path.ends_with(".yml"))
            && path.starts_with(&p.multi_node_scripts)
    }

    fn routes_of(
        launchers: &LauncherTable,
        runners: Option<&RunnerConfig>,
        e: &MasterEntry,
        tree: &BTreeSet<String>,
    ) -> Vec<KeyRoute> {
        let nodes: Option<Vec<String>> = runners
            .and_then(|r| r.label(&e.runner.value))
            .map(|l| l.runners.iter().map(|n| n.value.clone()).collect());
        let mut seen: Vec<(String, Scenario, Vec<String>)> = Vec::new();
        let mut out = Vec::new();
        for (scenario, s) in arms(e) {
            let spec = s.spec_decoding().as_str().to_string();
            let files = config_files(s);
            let id = (spec.clone(), scenario, files.clone());
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            let refs: Vec<&str> = files.iter().map(String::as_str).collect();
            let q = ScriptQuery {
                key: &e.key,
                model_prefix: &e.model_prefix.value,
                precision: &e.precision.value,
                runner: &e.runner.value,
                framework: &e.framework.value,
                spec_decoding: &spec,
                scenario,
                multinode: e.multinode.value,
                config_files: &refs,
            };
            let mut resolution = launchers.resolve_label(&q, nodes.as_deref(), tree);
            // Without a readable runner config the fleet is the built-in
            // table's guess: a launcher the commit does not have runs nothing
            // (`0a3bf92`, #1894, predates `launch_b200-nscale-slurm.sh`).
            if runners.is_none() {
                resolution.per_launcher.retain(|l| l.launcher_exists);
            }
            out.push(KeyRoute {
                spec,
                scenario,
                config_files: files,
                resolution,
            });
        }
        out
    }

    /// Every path a key's routes name (candidates, resolved scripts, recipes).
    fn route_paths(routes: &[KeyRoute]) -> Vec<String> {
        let mut out = Vec::new();
        for r in routes {
            for l in &r.resolution.per_launcher {
                match &l.route {
                    Route::Script { candidates, .. } => out.extend(candidates.iter().cloned()),
                    Route::Recipes(refs) => out.extend(refs.iter().map(|x| x.local_path.clone())),
                    Route::Unsupported(_) => {}
                }
                out.push(l.launcher_path.clone());
            }
        }
        out
    }

    fn compute_changed_keys(&self) -> Vec<(String, KeyChange)> {
        let mut out = Vec::new();
        let Some(m) = &self.head_master else {
            return out;
        };
        match &self.input.scope {
            Scope::All => {
                return m
                    .entries
                    .iter()
                    .map(|e| (e.key.clone(), KeyChange::Changed))
                    .collect();
            }
            Scope::Keys(keys) => {
                return m
                    .entries
                    .iter()
                    .filter_map(|e| keys.get(&e.key).map(|c| (e.key.clone(), *c)))
                    .collect();
            }
            Scope::Diff => {}
        }
        for e in &m.entries {
            let change = match (self.base_entries.get(&e.key), self.head_entries.get(&e.key)) {
                (None, _) => Some(KeyChange::Added),
                (Some(b), Some(h)) if b != h => Some(KeyChange::Changed),
                _ => {
                    let paths = self
                        .routes
                        .get(&e.key)
                        .map(|r| Self::route_paths(r))
                        .unwrap_or_default();
                    paths
                        .iter()
                        .any(|p| self.input.is_changed(p))
                        .then_some(KeyChange::Indirect)
                }
            };
            if let Some(c) = change {
                out.push((e.key.clone(), c));
            }
        }
        out
    }

    /// Head paths the rules want beyond the changed files: the scripts and
    /// recipes of changed keys and of keys named by new changelog entries.
    pub fn wanted_paths(&self) -> Vec<String> {
        let mut keys: BTreeSet<String> = self.changed_keys.iter().map(|(k, _)| k.clone()).collect();
        if let Some(m) = &self.head_master {
            for entry in self.new_changelog_entries() {
                for k in m.keys() {
                    if entry.selects(k) {
                        keys.insert(k.to_string());
                    }
                }
            }
        }
        let mut out = Vec::new();
        for k in keys {
            if let Some(r) = self.routes.get(&k) {
                for p in Self::route_paths(r) {
                    if self.input.head_tree.contains(&p) && !self.input.head_files.contains_key(&p)
                    {
                        out.push(p);
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    pub(crate) fn entry(&self, key: &str) -> Option<&MasterEntry> {
        self.head_master.as_ref().and_then(|m| m.get(key))
    }

    /// Added or changed keys (not the indirect ones), with their entries.
    pub(crate) fn direct_keys(&self) -> Vec<&MasterEntry> {
        self.changed_keys
            .iter()
            .filter(|(_, c)| *c != KeyChange::Indirect)
            .filter_map(|(k, _)| self.entry(k))
            .collect()
    }

    /// Entries the PR adds or changes that failed validation (an older
    /// schema), told by their content as read; only their top-level string
    /// fields are known (L15 reads them).
    pub(crate) fn direct_unvalidated(&self) -> Vec<&master::UnvalidatedEntry> {
        let Some(m) = &self.head_master else {
            return Vec::new();
        };
        m.unvalidated
            .iter()
            .filter(|u| match &self.input.scope {
                Scope::All => true,
                Scope::Keys(keys) => keys.get(&u.key).is_some_and(|c| *c != KeyChange::Indirect),
                Scope::Diff => self.base_entries.get(&u.key) != self.head_entries.get(&u.key),
            })
            .collect()
    }

    /// Every changed key, indirect ones included.
    pub(crate) fn all_changed(&self) -> Vec<&MasterEntry> {
        self.changed_keys
            .iter()
            .filter_map(|(k, _)| self.entry(k))
            .collect()
    }

    /// The changelog entries the PR adds (docs/rules.md §0.4.6).
    pub(crate) fn new_changelog_entries(&self) -> Vec<&changelog::Entry> {
        let Some(head) = &self.head_changelog else {
            return Vec::new();
        };
        let path = self.input.config.paths.changelog.as_str();
        let base: &[changelog::Entry] = self.base_changelog.as_ref().map_or(&[], |b| &b.entries);
        if self.base_changelog.is_none() && self.input.base(path).is_none() {
            // No changelog at base: every entry is the PR's.
            return head.entries.iter().collect();
        }
        // An entry is new when no base entry has its content (matched as
        // a multiset; a pr-link correction is no new entry) and, when the
        // diff is known, the PR adds its `pr-link` line (text unique to
        // the entry, unlike `- config-keys:`, which a diff may align with a
        // neighbour's). Position alone misled in the history: an entry a
        // squash merge put before others made the last entry "new"
        // (`4aec7f8`, #957), and a base that did not parse made every entry
        // new (`9550ef2`, #988; `b16e698`, #1798, which re-indents one).
        //
        // `same_except_link` is an equivalence (equal fields), so which
        // matching base entry a head entry takes does not change what the
        // later ones find: the base entries stay in file order and the
        // search starts at the first one not taken, where the head's
        // unchanged entries find theirs (one comparison each, not a scan
        // of the history per entry).
        let mut taken = vec![false; base.len()];
        let mut first_free = 0;
        let added = self.input.changed_lines.get(path);
        let diff_known = !self.input.changed_lines.is_empty();
        head.entries
            .iter()
            .filter(|e| {
                let found =
                    (first_free..base.len()).find(|&i| !taken[i] && base[i].same_except_link(e));
                if let Some(i) = found {
                    taken[i] = true;
                    while first_free < base.len() && taken[first_free] {
                        first_free += 1;
                    }
                    return false;
                }
                !diff_known || added.is_some_and(|l| l.contains(&e.pr_link.line))
            })
            .collect()
    }

    /// Scripts a key runs (resolved on any launcher).
    pub(crate) fn scripts_of(&self, key: &str) -> Vec<&Script> {
        let mut paths: BTreeSet<&str> = BTreeSet::new();
        if let Some(rs) = self.routes.get(key) {
            for r in rs {
                for l in &r.resolution.per_launcher {
                    if let Some(s) = l.script() {
                        paths.insert(s);
                    }
                }
            }
        }
        paths
            .into_iter()
            .filter_map(|p| self.scripts.get(p).map(|s| &**s))
            .collect()
    }

    /// Recipes a key runs that exist in the repository.
    pub(crate) fn recipes_of(&self, key: &str) -> Vec<&SrtRecipe> {
        let mut paths: BTreeSet<&str> = BTreeSet::new();
        if let Some(rs) = self.routes.get(key) {
            for r in rs {
                for l in &r.resolution.per_launcher {
                    if let Route::Recipes(refs) = &l.route {
                        for x in refs {
                            paths.insert(&x.local_path);
                        }
                    }
                }
            }
        }
        paths
            .into_iter()
            .filter_map(|p| self.recipes.get(p).map(|r| &**r))
            .collect()
    }

    /// Head keys that run a recipe.
    pub(crate) fn keys_running_recipe(&self, path: &str) -> Vec<&MasterEntry> {
        let Some(m) = &self.head_master else {
            return Vec::new();
        };
        m.entries
            .iter()
            .filter(|e| self.recipes_of(&e.key).iter().any(|r| r.path == path))
            .collect()
    }

    /// Head keys that run a script.
    pub(crate) fn keys_running_script(&self, path: &str) -> Vec<&MasterEntry> {
        let Some(m) = &self.head_master else {
            return Vec::new();
        };
        m.entries
            .iter()
            .filter(|e| self.scripts_of(&e.key).iter().any(|s| s.facts.path == path))
            .collect()
    }

    /// Scripts the lint looks at: changed ones and those of changed keys.
    pub(crate) fn scripts_in_scope(&self) -> Vec<&Script> {
        let mut paths: BTreeSet<&str> = BTreeSet::new();
        let all = self.input.scope == Scope::All;
        for s in self.scripts.values() {
            if all
                || self
                    .input
                    .change(&s.facts.path)
                    .is_some_and(|c| c.status != FileStatus::Removed)
            {
                paths.insert(&s.facts.path);
            }
        }
        for e in self.all_changed() {
            for s in self.scripts_of(&e.key) {
                paths.insert(&s.facts.path);
            }
        }
        paths
            .into_iter()
            .filter_map(|p| self.scripts.get(p).map(|s| &**s))
            .collect()
    }

    /// Recipes the lint looks at: changed ones and those of changed keys.
    pub(crate) fn recipes_in_scope(&self) -> Vec<&SrtRecipe> {
        let mut paths: BTreeSet<&str> = BTreeSet::new();
        let all = self.input.scope == Scope::All;
        for r in self.recipes.values() {
            if all
                || self
                    .input
                    .change(&r.path)
                    .is_some_and(|c| c.status != FileStatus::Removed)
            {
                paths.insert(&r.path);
            }
        }
        for e in self.all_changed() {
            for r in self.recipes_of(&e.key) {
                paths.insert(&r.path);
            }
        }
        paths
            .into_iter()
            .filter_map(|p| self.recipes.get(p).map(|r| &**r))
            .collect()
    }

    /// The master-config file and line of a key.
    pub(crate) fn key_loc(&self, e: &MasterEntry) -> (String, usize) {
        (e.file.to_string(), e.pos.line as usize)
    }

    /// The script is a single-node agentic script (by directory).
    pub(crate) fn is_agentic_script(&self, path: &str) -> bool {
        path.starts_with(&self.input.config.paths.agentic_scripts) || path.contains("/agentic/")
    }
}

/// The configured inputs the rules read (master configs, runners, the
/// changelog, MODELS.md) that are absent at base or head, each a finding
/// naming the path: a wrong path must not make the rules pass silently.
/// The master configs are one input (a repository may keep one file of
/// the configured set): absent when none of them is there, and a file the
/// PR deletes is named on its own. An input the layout table says did not
/// exist yet is no finding (its rules are off), and a side whose tree is
/// unknown (an input built by hand) is not judged.
fn absent_inputs(input: &LintInput) -> Vec<Finding> {
    let p = &input.config.paths;
    let known = |tree: &BTreeSet<String>| !tree.is_empty();
    let (base, head): (&BTreeSet<String>, &BTreeSet<String>) = (&input.base_tree, &input.head_tree);
    let mut out = Vec::new();
    // `file` carries the finding; `named` is every path it is about.
    let mut report = |what: Input, file: &str, named: &str, sides: Vec<&str>| {
        if sides.is_empty() || input.inputs_not_yet.contains(&what) {
            return;
        }
        out.push(
            Finding::new(
                "L00",
                Severity::Warning,
                file,
                1,
                format!(
                    "the configured {} `{named}` {} absent at {}, so the lint rules that read {} did not run",
                    what.as_str(),
                    if named.contains('`') { "are" } else { "is" },
                    sides.join(" and "),
                    if named.contains('`') { "them" } else { "it" },
                ),
            )
            .fix(format!(
                "set the path in `[paths]` of {} if the file moved",
                crate::config::repo::REPO_CONFIG_PATH
            )),
        );
    };
    let sides = |gone: &dyn Fn(&BTreeSet<String>) -> bool| -> Vec<&str> {
        [("base", base), ("head", head)]
            .into_iter()
            .filter(|(_, t)| known(t) && gone(t))
            .map(|(side, _)| side)
            .collect()
    };
    let masters = &p.master_configs;
    let none = sides(&|t| !masters.iter().any(|m| t.contains(m)));
    if !none.is_empty() {
        let first = masters.first().map_or("", String::as_str);
        report(Input::MasterConfigs, first, &masters.join("`, `"), none);
    } else {
        for m in masters {
            if base.contains(m) && known(head) && !head.contains(m) {
                report(Input::MasterConfigs, m, m, vec!["head"]);
            }
        }
    }
    for (what, path) in [
        (Input::Runners, &p.runners),
        (Input::Changelog, &p.changelog),
        (Input::ModelsPolicy, &p.models_policy),
    ] {
        report(what, path, path, sides(&|t| !t.contains(path.as_str())));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::lint::{LintData, lint};

    #[test]
    fn a_base_file_that_cannot_be_read_is_said_not_hidden() {
        let mut input = LintInput::new(Default::default(), LintData::defaults().unwrap());
        // The runners.yaml of 2026-02 (#666): a label → nodes mapping, before
        // the `labels:` mapping today's parser wants.
        Arc::make_mut(&mut input.base_files).insert(
            "configs/runners.yaml".into(),
            b"h100:\n- 'h100-cr_0'\n".to_vec().into(),
        );
        let found = lint(&input);
        assert!(
            found.iter().any(|f| f.rule == "L00"
                && f.file == "configs/runners.yaml"
                && f.message.contains("base version")),
            "{found:#?}"
        );
    }
}
