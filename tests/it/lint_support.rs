//! Test support for the lint tests: a scenario is the shared `world/` tree
//! (base) plus an overlay `<scenario>/head/` (files ending in `.append` are
//! appended to the world file of the same name; `<scenario>/deleted` lists
//! paths removed at head; `<scenario>/pr` holds the PR number). MODELS.md
//! and the golden curves come from `tests/data/inferencex/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sweepgate::repo::FileStatus;
use sweepgate_core::checks::lint::{ChangedPath, Finding, LintData, LintInput, Severity, lint};
use sweepgate_core::config::RepoConfig;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint")
}

fn walk(dir: &Path, prefix: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, prefix, out);
        } else {
            let rel = p
                .strip_prefix(prefix)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

/// Base tree, head tree and PR number of a scenario.
pub type Trees = (
    BTreeMap<String, Vec<u8>>,
    BTreeMap<String, Vec<u8>>,
    Option<u64>,
);

/// The base and head trees of a scenario, and its PR number.
pub fn trees(name: &str) -> Trees {
    let mut base = BTreeMap::new();
    walk(&root().join("world"), &root().join("world"), &mut base);
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/inferencex");
    base.insert(
        "MODELS.md".into(),
        std::fs::read(shared.join("MODELS.md")).unwrap(),
    );
    for e in std::fs::read_dir(shared.join("golden_al_distribution"))
        .unwrap()
        .flatten()
    {
        let n = e.file_name().to_string_lossy().to_string();
        base.insert(
            format!("golden_al_distribution/{n}"),
            std::fs::read(e.path()).unwrap(),
        );
    }
    let dir = root().join(name);
    let mut base_over = BTreeMap::new();
    walk(&dir.join("base"), &dir.join("base"), &mut base_over);
    apply(&mut base, base_over);
    let mut head = base.clone();
    let mut over = BTreeMap::new();
    walk(&dir.join("head"), &dir.join("head"), &mut over);
    apply(&mut head, over);
    if let Ok(d) = std::fs::read_to_string(dir.join("deleted")) {
        for l in d
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            head.remove(l);
        }
    }
    let pr = std::fs::read_to_string(dir.join("pr"))
        .ok()
        .and_then(|s| s.trim().parse().ok());
    (base, head, pr)
}

fn apply(tree: &mut BTreeMap<String, Vec<u8>>, over: BTreeMap<String, Vec<u8>>) {
    for (p, b) in over {
        if let Some(target) = p.strip_suffix(".append") {
            let mut cur = tree.get(target).cloned().unwrap_or_default();
            cur.extend_from_slice(&b);
            tree.insert(target.to_string(), cur);
        } else {
            tree.insert(p, b);
        }
    }
}

/// A LintInput built in memory from two trees.
pub fn input_from(
    base: BTreeMap<String, Vec<u8>>,
    head: BTreeMap<String, Vec<u8>>,
    pr: Option<u64>,
) -> LintInput {
    let mut input = LintInput::new(RepoConfig::default(), LintData::defaults().unwrap());
    input.pr = pr;
    input.head_sha = "0123456789abcdef0123456789abcdef01234567".into();
    input.base_sha = "fedcba9876543210fedcba9876543210fedcba98".into();
    for (p, b) in &head {
        match base.get(p) {
            None => input.changed.push(ChangedPath {
                path: p.clone(),
                previous_path: None,
                status: FileStatus::Added,
            }),
            Some(x) if x != b => input.changed.push(ChangedPath {
                path: p.clone(),
                previous_path: None,
                status: FileStatus::Modified,
            }),
            _ => {}
        }
    }
    for p in base.keys() {
        if !head.contains_key(p) {
            input.changed.push(ChangedPath {
                path: p.clone(),
                previous_path: None,
                status: FileStatus::Removed,
            });
        }
    }
    input.head_tree = std::sync::Arc::new(head.keys().cloned().collect());
    input.base_tree = std::sync::Arc::new(base.keys().cloned().collect());
    let shared = |m: BTreeMap<String, Vec<u8>>| {
        std::sync::Arc::new(m.into_iter().map(|(p, b)| (p, b.into())).collect())
    };
    input.base_files = shared(base);
    input.head_files = shared(head);
    input
}

pub fn scenario(name: &str) -> LintInput {
    let (b, h, pr) = trees(name);
    input_from(b, h, pr)
}

pub fn run(name: &str) -> Vec<Finding> {
    lint(&scenario(name))
}

/// (rule, severity, file, line) of every finding.
pub fn keys(f: &[Finding]) -> Vec<(&'static str, Severity, String, usize)> {
    f.iter()
        .map(|f| (f.rule, f.severity, f.file.clone(), f.line))
        .collect()
}

pub fn of_rule<'a>(f: &'a [Finding], rule: &str) -> Vec<&'a Finding> {
    f.iter().filter(|x| x.rule == rule).collect()
}

pub fn dump(f: &[Finding]) -> String {
    f.iter().map(|x| format!("{x}\n")).collect()
}

/// 1-based line of the first line of a fixture file containing `needle`.
pub fn line_of(tree: &BTreeMap<String, Vec<u8>>, path: &str, needle: &str) -> usize {
    let t = String::from_utf8_lossy(&tree[path]).to_string();
    t.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{needle} not in {path}"))
}
