//! The workloads: real fixture files of the benchmark repository, a
//! seed-002-like PR on top of them, and synthetic growth (more changed
//! files, master configs cloned under new keys).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use chrono::NaiveDate;

use sweepgate::repo::FileStatus;
use sweepgate::snapshot::{self, GithubFacts, Trees};
use sweepgate_core::checks::VerifierSettings;
use sweepgate_core::checks::lint::{ChangedPath, LintData, LintInput};
use sweepgate_core::checks::snapshot::{RunArtifacts, Snapshot};
use sweepgate_core::config::RepoConfig;

pub(crate) const NVIDIA: &str = "configs/nvidia-master.yaml";
pub(crate) const AMD: &str = "configs/amd-master.yaml";
pub(crate) const RUNNERS: &str = "configs/runners.yaml";
pub(crate) const CHANGELOG: &str = "perf-changelog.yaml";
const SEED_KEY_PATH: &str = "benchmarks/single_node/srt-slurm-recipes/sglang/dsv41flash/gb300-fp4/agentic/agg-gb300-dspark.yaml";

/// Where the fixtures live.
#[derive(Debug, Clone)]
pub(crate) struct Dirs {
    /// The benchmark repository's real data files (`tests/data/inferencex`).
    pub inferencex: PathBuf,
    /// `tests/fixtures/verify/seed002` of this repository.
    pub seed002: PathBuf,
}

impl Dirs {
    /// `--fixtures DIR`, or the repository's own `tests/data/inferencex`.
    pub(crate) fn locate(fixtures: Option<&Path>) -> anyhow::Result<Dirs> {
        let root = crate::workspace_root();
        let inferencex = match fixtures {
            Some(p) => p.to_path_buf(),
            None => root.join("tests/data/inferencex"),
        };
        let seed002 = root.join("tests/fixtures/verify/seed002");
        for d in [&inferencex, &seed002] {
            anyhow::ensure!(
                d.is_dir(),
                "{} not found (pass --fixtures DIR)",
                d.display()
            );
        }
        Ok(Dirs {
            inferencex,
            seed002,
        })
    }
}

fn read(dir: &Path, p: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(dir.join(p))
        .with_context(|| format!("reading {}", dir.join(p).display()))
}

/// Every file under `root`, by relative path.
fn read_tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let (Ok(rel), Ok(text)) = (p.strip_prefix(root), std::fs::read_to_string(&p))
            {
                out.insert(rel.to_string_lossy().replace('\\', "/"), text);
            }
        }
    }
    out
}

/// Seed 002's October layout mapped onto the default (August) paths.
fn default_path(p: &str) -> String {
    let p = p.strip_prefix("inferencex-e2e/").unwrap_or(p);
    let p = p.strip_prefix("infx/").unwrap_or(p);
    match p {
        "evals/thresholds.yaml" => "utils/evals/thresholds.yaml".to_owned(),
        _ => p.to_owned(),
    }
}

/// The raw inputs every workload is built from.
#[derive(Debug, Clone)]
pub(crate) struct Fixtures {
    pub dirs: Dirs,
    pub nvidia: String,
    pub amd: String,
    pub runners: String,
    pub changelog: String,
    /// Default-branch policy files (CODEOWNERS, MODELS.md, checklist, golden
    /// curves, thresholds).
    pub policy: BTreeMap<String, String>,
    /// Seed 002's master entry at base and head, its changelog at base and
    /// head, and its recipe at base and head.
    seed_base: BTreeMap<String, String>,
    seed_head: BTreeMap<String, String>,
    facts_json: String,
    artifacts: RunArtifacts,
}

impl Fixtures {
    pub(crate) fn load(dirs: Dirs) -> anyhow::Result<Fixtures> {
        let x = &dirs.inferencex;
        let mut policy: BTreeMap<String, String> = BTreeMap::new();
        for p in [
            ".github/CODEOWNERS",
            "MODELS.md",
            "docs/PR_REVIEW_CHECKLIST.md",
        ] {
            policy.insert(p.to_owned(), read(x, p)?);
        }
        for (p, t) in read_tree(&x.join("golden_al_distribution")) {
            policy.insert(format!("golden_al_distribution/{p}"), t);
        }
        for (p, t) in read_tree(&dirs.seed002.join("policy")) {
            if p.contains("golden_al_distribution/") || p.ends_with("thresholds.yaml") {
                policy.insert(default_path(&p), t);
            }
        }
        let remap = |t: BTreeMap<String, String>| -> BTreeMap<String, String> {
            t.into_iter().map(|(p, t)| (default_path(&p), t)).collect()
        };
        let artifacts = snapshot::read_artifacts(&dirs.seed002.join("artifacts"))
            .map_err(|e| anyhow::anyhow!("seed 002 artifacts: {e}"))?;
        Ok(Fixtures {
            nvidia: read(x, NVIDIA)?,
            amd: read(x, AMD)?,
            runners: read(x, RUNNERS)?,
            changelog: read(x, CHANGELOG)?,
            policy,
            seed_base: remap(read_tree(&dirs.seed002.join("base"))),
            seed_head: remap(read_tree(&dirs.seed002.join("head"))),
            facts_json: read(&dirs.seed002, "github.json")?,
            artifacts,
            dirs,
        })
    }

    /// The seed's sign-off body (for the sandbox run).
    pub(crate) fn signoff_body(&self) -> String {
        serde_json::from_str::<serde_json::Value>(&self.facts_json)
            .ok()
            .and_then(|v| v["signoff"]["body"].as_str().map(str::to_owned))
            .unwrap_or_else(|| {
                format!(
                    "{} I reviewed this.",
                    sweepgate_core::signoff::TRIGGER_PHRASE
                )
            })
    }

    /// The real repository at base and at the head of a PR: seed 002's
    /// change (master entry, changelog entry, recipe) on the real master
    /// configs and changelog, `files` changed files in all (the extra ones
    /// are benchmark scripts), master configs at `scale`× their real size.
    pub(crate) fn pr(
        &self,
        files: usize,
        scale: usize,
    ) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
        let nvidia = scaled(&self.nvidia, scale);
        let amd = scaled(&self.amd, scale);
        let side = |seed: &BTreeMap<String, String>| {
            let mut t = BTreeMap::new();
            let seed_text = |p: &str| seed.get(p).map(String::as_str).unwrap_or("");
            t.insert(
                NVIDIA.to_owned(),
                format!("{nvidia}\n{}", seed_text(NVIDIA)),
            );
            t.insert(AMD.to_owned(), amd.clone());
            t.insert(RUNNERS.to_owned(), self.runners.clone());
            t.insert(
                CHANGELOG.to_owned(),
                format!("{}\n{}", self.changelog.trim_end(), seed_text(CHANGELOG)),
            );
            if let Some(r) = seed.get(SEED_KEY_PATH) {
                t.insert(SEED_KEY_PATH.to_owned(), r.clone());
            }
            t
        };
        let base = side(&self.seed_base);
        let mut head = side(&self.seed_head);
        // Seed 002 changes three files; the rest are benchmark scripts.
        for i in 0..files.saturating_sub(3) {
            head.insert(
                format!("benchmarks/single_node/fixed_seq_len/synthetic{i:04}_fp8_h200_vllm.sh"),
                synthetic_script(i),
            );
        }
        (base, head)
    }

    /// A verifier snapshot of [`Fixtures::pr`] with seed 002's GitHub facts
    /// and its eight result points.
    pub(crate) fn snapshot(&self, files: usize, scale: usize) -> anyhow::Result<Snapshot> {
        let (base, head) = self.pr(files, scale);
        let facts: GithubFacts =
            serde_json::from_str(&self.facts_json).context("seed 002 github.json")?;
        let masters: BTreeMap<String, String> = head
            .iter()
            .filter(|(p, _)| *p == NVIDIA || *p == AMD)
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect();
        let trees = Trees {
            policy: self.policy.clone(),
            base,
            head,
            files: None,
            base_sha: String::new(),
            head_sha: String::new(),
        };
        let today = NaiveDate::from_ymd_opt(2026, 10, 16).unwrap_or_default();
        let mut s = snapshot::snapshot_from_trees(
            trees,
            facts,
            Some(self.artifacts.clone()),
            VerifierSettings::default(),
            today,
        );
        s.run_files = Some(masters);
        Ok(s)
    }

    /// A lint input of [`Fixtures::pr`]: the whole base tree plus the
    /// lint's policy data.
    pub(crate) fn lint_input(&self, files: usize, scale: usize) -> anyhow::Result<LintInput> {
        let (mut base, mut head) = self.pr(files, scale);
        for t in [&mut base, &mut head] {
            for (p, x) in &self.policy {
                t.insert(p.clone(), x.clone());
            }
        }
        let mut input = LintInput::new(RepoConfig::default(), LintData::defaults()?);
        input.pr = Some(4033);
        input.head_sha = "0123456789abcdef0123456789abcdef01234567".into();
        input.base_sha = "fedcba9876543210fedcba9876543210fedcba98".into();
        for (p, h) in &head {
            let status = match base.get(p) {
                None => FileStatus::Added,
                Some(b) if b != h => FileStatus::Modified,
                Some(_) => continue,
            };
            input.changed.push(ChangedPath {
                path: p.clone(),
                previous_path: None,
                status,
            });
        }
        input.head_tree = Arc::new(head.keys().cloned().collect());
        input.base_tree = Arc::new(base.keys().cloned().collect());
        let shared = |m: BTreeMap<String, String>| {
            Arc::new(
                m.into_iter()
                    .map(|(p, t)| (p, t.into_bytes().into()))
                    .collect(),
            )
        };
        input.base_files = shared(base);
        input.head_files = shared(head);
        Ok(input)
    }
}

/// A master config `k`× its size: every top-level entry cloned `k - 1`
/// times under a new key (`<key>-x<j>`), so the keys stay parseable.
pub(crate) fn scaled(master: &str, k: usize) -> String {
    if k <= 1 {
        return master.to_owned();
    }
    let mut out = String::with_capacity(master.len() * k);
    out.push_str(master);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in master.lines() {
        let top = !line.is_empty()
            && !line.starts_with([' ', '#', '-', '\t'])
            && line.trim_end().ends_with(':');
        if top {
            blocks.push((
                line.trim_end().trim_end_matches(':').to_owned(),
                String::new(),
            ));
        } else if let Some((_, body)) = blocks.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    for j in 1..k {
        for (key, body) in &blocks {
            out.push_str(&format!("{key}-x{j}:\n{body}"));
        }
    }
    out
}

fn synthetic_script(i: usize) -> String {
    format!(
        "#!/usr/bin/env bash\n# Synthetic benchmark script {i} (cargo xtask bench).\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\ncheck_env_vars MODEL TP CONC ISL OSL RESULT_FILENAME\nvllm serve \"$MODEL\" --tensor-parallel-size \"$TP\" --max-num-seqs \"$CONC\" --port 8888 &\nwait_for_server_ready 8888\nrun_benchmark_serving --model \"$MODEL\" --input-len \"$ISL\" --output-len \"$OSL\" --max-concurrency \"$CONC\" --result-filename \"$RESULT_FILENAME\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_clones_every_entry_under_new_keys() {
        let m = "# head\na-fp4-b200-x:\n  image: i\n  runner: r\nb-fp8-h200-y:\n  image: j\n";
        let s = scaled(m, 3);
        for k in [
            "a-fp4-b200-x:",
            "a-fp4-b200-x-x1:",
            "a-fp4-b200-x-x2:",
            "b-fp8-h200-y-x2:",
        ] {
            assert!(s.contains(k), "{k} missing in {s}");
        }
        assert_eq!(scaled(m, 1), m);
    }
}
