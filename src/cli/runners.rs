//! `sweepgate runners --repo PATH [--format text|json]`: the self-hosted
//! runner labels and their nodes from the runner file, how many master
//! entries use each label, and the labels master entries use that no
//! runner carries (a sweep of such an entry would wait forever).
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use sweepgate_core::config::RepoConfig;
use sweepgate_core::recipe::{master, runners};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct LabelReport {
    pub label: String,
    pub nodes: Vec<String>,
    /// Master entries whose `runner` is this label.
    pub entries: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Unserved {
    pub label: String,
    /// `file:line` of every entry using it.
    pub used_at: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Report {
    pub labels: Vec<LabelReport>,
    pub unserved: Vec<Unserved>,
}

/// The report over a parsed runner file and master configs.
pub fn report(runners: &runners::RunnerConfig, master: &master::MasterConfig) -> Report {
    let mut uses: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for e in &master.entries {
        uses.entry(e.runner.value.as_str())
            .or_default()
            .push(format!("{}:{}", e.file, e.runner.pos.line));
    }
    let labels = runners
        .labels
        .iter()
        .map(|l| LabelReport {
            label: l.name.clone(),
            nodes: l.runners.iter().map(|r| r.value.clone()).collect(),
            entries: uses.get(l.name.as_str()).map_or(0, Vec::len),
        })
        .collect();
    let unserved = uses
        .into_iter()
        .filter(|(label, _)| runners.label(label).is_none_or(|l| l.runners.is_empty()))
        .map(|(label, used_at)| Unserved {
            label: label.to_owned(),
            used_at,
        })
        .collect();
    Report { labels, unserved }
}

pub(crate) fn render_text(r: &Report) -> String {
    let mut out = String::new();
    let width = r
        .labels
        .iter()
        .map(|l| l.label.len())
        .max()
        .unwrap_or(5)
        .max(5);
    out.push_str(&format!(
        "{:<width$}  nodes  entries  first nodes\n",
        "label"
    ));
    for l in &r.labels {
        let shown: Vec<&str> = l.nodes.iter().take(3).map(String::as_str).collect();
        let more = if l.nodes.len() > 3 {
            format!(", … (+{})", l.nodes.len() - 3)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{:<width$}  {:>5}  {:>7}  {}{more}\n",
            l.label,
            l.nodes.len(),
            l.entries,
            shown.join(", ")
        ));
    }
    if r.unserved.is_empty() {
        out.push_str("\nevery runner label the master configs use has a node\n");
    } else {
        out.push_str("\nlabels used by master configs that no runner carries:\n");
        for u in &r.unserved {
            out.push_str(&format!("  {}  ({})\n", u.label, u.used_at.join(", ")));
        }
    }
    out
}

/// Reads the runner file and master configs of the checkout at `repo`
/// (paths from its `.github/sweepgate.toml`, else the defaults).
pub(crate) fn read(repo: &Path) -> Result<Report, String> {
    let cfg_path = repo.join(sweepgate_core::config::repo::REPO_CONFIG_PATH);
    let cfg = match std::fs::read(&cfg_path) {
        Ok(b) => RepoConfig::from_toml(sweepgate_core::config::repo::REPO_CONFIG_PATH, &b)
            .map_err(|e| e.to_string())?,
        Err(_) => RepoConfig::default(),
    };
    let read = |p: &str| std::fs::read(repo.join(p)).map_err(|e| format!("{p}: {e}"));
    let rb = read(&cfg.paths.runners)?;
    let runners = runners::parse(&cfg.paths.runners, &rb).map_err(|e| e.to_string())?;
    let mut files = Vec::new();
    for p in &cfg.paths.master_configs {
        files.push((p.clone(), read(p)?));
    }
    let master = master::parse_many(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())))
        .map_err(|e| e.to_string())?;
    Ok(report(&runners, &master))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUNNERS: &str = "labels:\n  h200:\n    - h200-cw_00\n    - h200-cw_01\n";

    fn master_with(runner: &str) -> master::MasterConfig {
        let yaml = format!(
            "k1:\n  image: vllm/vllm-openai:v1\n  model: m/M\n  model-prefix: m\n  runner: {runner}\n  precision: fp8\n  framework: vllm\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {{ tp: 8, conc-start: 1, conc-end: 4 }}\n"
        );
        master::parse_many([("configs/m.yaml", yaml.as_bytes())]).unwrap()
    }

    #[test]
    fn a_label_without_nodes_is_reported_with_its_users() {
        let runners = runners::parse("configs/runners.yaml", RUNNERS.as_bytes()).unwrap();
        let r = report(&runners, &master_with("h200"));
        assert_eq!(r.labels[0].entries, 1);
        assert_eq!(r.labels[0].nodes, ["h200-cw_00", "h200-cw_01"]);
        assert!(r.unserved.is_empty());
        let r = report(&runners, &master_with("b200"));
        assert_eq!(r.unserved.len(), 1);
        assert_eq!(r.unserved[0].label, "b200");
        assert_eq!(r.unserved[0].used_at, ["configs/m.yaml:5"]);
        assert!(render_text(&r).contains(
            "labels used by master configs that no runner carries:\n  b200  (configs/m.yaml:5)\n"
        ));
    }
}
