//! Facts derived once from a snapshot: master configs at base and head,
//! the changed keys, the new changelog entries.

use std::collections::{BTreeMap, BTreeSet};

use super::Snapshot;
use super::master::{
    MASTER_CACHE, MasterEntry, node_eq, parse_master, parse_master_cached, parse_master_reusing,
    read_changelog_cached,
};
use crate::config::RepoConfig;
use crate::recipe::changelog;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Changed,
    /// Unchanged entry whose script, recipe or launcher changed.
    Indirect,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChangedKey {
    pub key: String,
    pub kind: ChangeKind,
    pub entry: MasterEntry,
    /// Head files the key runs (recipes it references, scripts named after
    /// it), existing at head.
    pub files: Vec<String>,
}

impl ChangedKey {
    /// The launch text: every file the key runs plus its settings, shell
    /// comments stripped.
    pub(crate) fn launch_texts<'a>(&'a self, s: &'a Snapshot) -> Vec<(&'a str, &'a str)> {
        self.files
            .iter()
            .filter_map(|f| s.head_text(f).map(|t| (f.as_str(), t)))
            .collect()
    }

    /// Speculative decoding in use (§0.5).
    pub(crate) fn uses_spec(&self, s: &Snapshot) -> bool {
        self.entry.rows().iter().any(|r| r.spec != "none")
            || self.files.iter().any(|f| f.ends_with("_mtp.sh"))
            || self
                .launch_texts(s)
                .iter()
                .any(|(_, t)| has_spec_marker(&crate::checks::strip_shell_comments(t)))
    }
}

/// The spec-decoding markers of §0.5.
pub(crate) fn has_spec_marker(text: &str) -> bool {
    const MARKERS: [&str; 10] = [
        "--speculative-algorithm",
        "--speculative-algo",
        "--speculative-config",
        "speculative-config:",
        "num_speculative_tokens",
        "--num-speculative-tokens",
        "--speculative-num-steps",
        "speculative-num-steps:",
        "speculative-algorithm:",
        "speculative_config:",
    ];
    MARKERS.iter().any(|m| text.contains(m))
        || ["mtp", "eagle", "eagle3", "dspark"]
            .iter()
            .any(|m| text.contains(&format!("--method {m}")))
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub masters_base: BTreeMap<String, MasterEntry>,
    pub masters_head: BTreeMap<String, MasterEntry>,
    /// Added, changed and indirectly changed keys at head, in key order.
    pub changed: Vec<ChangedKey>,
    pub removed: Vec<String>,
    /// Changelog entries past the base length.
    pub new_entries: Vec<changelog::Entry>,
    /// New changelog items that do not validate, as `file:line: message`.
    pub new_entry_errors: Vec<(usize, String)>,
    /// Problems reading recipe files (a check that needs them says so).
    pub errors: Vec<String>,
}

impl Facts {
    pub(crate) fn derive(s: &Snapshot, cfg: &RepoConfig) -> Facts {
        let mut f = Facts::default();
        for path in &cfg.paths.master_configs {
            // A PR that moves a master config (#1992: `.github/configs/` →
            // `configs/`, `3ede7c5`) changes no key: read the base at its
            // previous path.
            let base = s.base_files.get(path).or_else(|| {
                s.files
                    .iter()
                    .find(|f| f.path == *path)
                    .and_then(|f| f.previous_path.as_ref())
                    .and_then(|prev| s.base_files.get(prev))
            });
            let head = s.head_files.get(path);
            let parsed_base = base.map(|t| parse_master_cached(path, t));
            let parsed_head = match (head, base, parsed_base.as_deref()) {
                // An unchanged file: the head's parse is the base's.
                (Some(h), Some(b), _) if b == h => parsed_base.clone(),
                // Unchanged entries are taken from the base's parse.
                (Some(h), Some(b), Some(Ok(be))) => Some(MASTER_CACHE.get_or(path, h, || {
                    parse_master_reusing(path, b, be, h).map_or_else(|| parse_master(path, h), Ok)
                })),
                (Some(h), _, _) => Some(parse_master_cached(path, h)),
                (None, _, _) => None,
            };
            for (side, parsed, out) in [
                ("base", parsed_base, &mut f.masters_base),
                ("head", parsed_head, &mut f.masters_head),
            ] {
                match parsed.as_deref() {
                    Some(Ok(es)) => {
                        for e in es {
                            out.insert(e.key.clone(), e.clone());
                        }
                    }
                    Some(Err(e)) => f.errors.push(format!("{path} at {side}: {e}")),
                    None => {}
                }
            }
        }
        let changed_paths: BTreeSet<&str> = s
            .files
            .iter()
            .flat_map(|c| std::iter::once(c.path.as_str()).chain(c.previous_path.as_deref()))
            .collect();
        for (key, head) in &f.masters_head {
            let files = key_files(s, cfg, head);
            let kind = match f.masters_base.get(key) {
                None => Some(ChangeKind::Added),
                Some(b) if !node_eq(&b.node, &head.node) => Some(ChangeKind::Changed),
                Some(_) if files.iter().any(|p| changed_paths.contains(p.as_str())) => {
                    Some(ChangeKind::Indirect)
                }
                Some(_) => None,
            };
            if let Some(kind) = kind {
                f.changed.push(ChangedKey {
                    key: key.clone(),
                    kind,
                    entry: head.clone(),
                    files,
                });
            }
        }
        f.removed = f
            .masters_base
            .keys()
            .filter(|k| !f.masters_head.contains_key(*k))
            .cloned()
            .collect();
        let cl = &cfg.paths.changelog;
        let base = s.base_files.get(cl).map(|t| read_changelog_cached(cl, t));
        // A head that only appends items: read the appended text alone.
        let appended = match (base.as_deref(), s.base_files.get(cl), s.head_files.get(cl)) {
            (Some(Ok(b)), Some(bt), Some(ht)) => changelog::read_appended(cl, bt, b.items, ht),
            _ => None,
        };
        let head = match appended {
            Some(doc) => Some(std::sync::Arc::new(Ok(doc))),
            None => s.head_files.get(cl).map(|t| read_changelog_cached(cl, t)),
        };
        match (base.as_deref(), head.as_deref()) {
            (None | Some(Ok(_)), Some(Ok(head))) => {
                let n = match base.as_deref() {
                    Some(Ok(b)) => b.items,
                    _ => 0,
                };
                f.new_entry_errors = head
                    .errors
                    .iter()
                    .filter(|e| e.index >= n)
                    .map(|e| (e.loc.line, e.message.clone()))
                    .collect();
                f.new_entries = head
                    .entries
                    .iter()
                    .filter(|e| e.index >= n)
                    .cloned()
                    .collect();
            }
            (None | Some(Ok(_)), None) => {}
            (Some(Err(e)), _) | (_, Some(Err(e))) => f.errors.push(e.to_string()),
        }
        f
    }

    /// Whether a benchmark-affecting path changed (Check 1's N/A rule).
    pub(crate) fn benchmark_affecting(&self, s: &Snapshot, cfg: &RepoConfig) -> bool {
        !self.new_entries.is_empty()
            || !self.changed.is_empty()
            || s.files.iter().any(|f| {
                cfg.paths.master_configs.contains(&f.path)
                    || f.path.starts_with(&cfg.paths.benchmarks)
                    || f.path.starts_with("runners/")
                    || f.path.contains("utils/bench_serving/")
                    || f.path.contains("utils/agentic/")
            })
    }
}

/// Files a key runs, among the head files: the recipes its settings name and
/// the benchmark scripts named after it (`<prefix>_<precision>_<sku>…`).
/// Called for every head key: what does not depend on the file is made
/// once, outside the loops over the head files.
fn key_files(s: &Snapshot, cfg: &RepoConfig, e: &MasterEntry) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for cf in e.config_files() {
        let tail = format!("/{}", cf.strip_prefix("recipes/").unwrap_or(&cf));
        let under = format!("/{cf}");
        let hit = s
            .head_files
            .keys()
            .find(|p| **p == cf || p.ends_with(&tail) || p.ends_with(&under));
        if let Some(p) = hit
            && !out.contains(p)
        {
            out.push(p.clone());
        }
    }
    let stem = format!("{}_{}_{}", e.prefix(), e.precision(), e.sku());
    let names = [
        format!("{stem}.sh"),
        format!("{stem}_mtp.sh"),
        format!("{stem}_{}", e.framework()),
    ];
    let multinode = e.is_multinode();
    let spec = e.rows().iter().any(|r| r.spec == "mtp");
    let (agentic, fixed) = (e.has_agentic(), e.has_fixed());
    for p in s.head_files.keys() {
        if !p.starts_with(&cfg.paths.benchmarks) || !p.ends_with(".sh") {
            continue;
        }
        // A multi-node key never runs a single-node script of the same
        // stem: `dsr1-fp4-b200-dynamo-trt` is not changed by
        // `single_node/dsr1_fp4_b200_mtp.sh` (`2029c5e`, #1522).
        if multinode && p.contains("/single_node/") {
            continue;
        }
        // No launcher runs a script archived under `deprecated/`
        // (`16f69e2`, #2493, moves `kimik2.5_int4_h100.sh` there).
        if p.contains("/deprecated/") {
            continue;
        }
        let name = p.rsplit('/').next().unwrap_or(p);
        let matches_spec = name.ends_with("_mtp.sh") == spec;
        let in_scenario = if agentic && !fixed {
            p.contains("/agentic/")
        } else if fixed && !agentic {
            !p.contains("/agentic/")
        } else {
            true
        };
        if name.starts_with(&stem)
            && matches_spec
            && in_scenario
            && (name == names[0] || name == names[1] || name.starts_with(&names[2]))
            && !out.contains(p)
        {
            out.push(p.clone());
        }
    }
    out
}
