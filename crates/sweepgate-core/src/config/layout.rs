//! Where the benchmark repository kept each input over its history
//! (`tests/data/history/SOURCE.md`, `docs/layout-history.md`). The table is
//! data: a replay of an old commit resolves its paths here, and an input
//! that did not exist yet at a commit turns the rules that need it off
//! there (counted, never silently passed).
//!
//! Eras start at the merge of the PR named (first-parent history is in
//! commit-time order, so a commit time places a commit in its era).
use std::collections::BTreeSet;

use chrono::DateTime;
use serde::Serialize;

use super::repo::Paths;

/// An input of the lint and the checks whose place changed over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Input {
    /// Master configs (`nvidia-master.yaml`, `amd-master.yaml`).
    MasterConfigs,
    /// `runners.yaml`.
    Runners,
    /// `perf-changelog.yaml`.
    Changelog,
    /// Single-node scripts in `fixed_seq_len/` and `agentic/` folders, the
    /// layout the launcher model resolves (`recipe::launcher`).
    ScenarioScripts,
    /// srt-slurm recipes kept in the repository.
    SrtRecipes,
    /// `.github/CODEOWNERS`.
    Codeowners,
    /// `docs/PR_REVIEW_CHECKLIST.md`.
    ChecklistTemplate,
    /// `golden_al_distribution/`.
    GoldenCurves,
    /// `MODELS.md`.
    ModelsPolicy,
}

impl Input {
    pub fn as_str(self) -> &'static str {
        match self {
            Input::MasterConfigs => "master configs",
            Input::Runners => "runners.yaml",
            Input::Changelog => "perf-changelog.yaml",
            Input::ScenarioScripts => "scenario script folders",
            Input::SrtRecipes => "srt-slurm recipes",
            Input::Codeowners => "CODEOWNERS",
            Input::ChecklistTemplate => "checklist template",
            Input::GoldenCurves => "golden AL curves",
            Input::ModelsPolicy => "MODELS.md",
        }
    }
}

/// One row of the table: from `since` (the merge of PR `since_pr`) the
/// input lives at `paths`; an input's rows are in time order, and before
/// its first row it does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Era {
    pub input: Input,
    pub since_pr: Option<u64>,
    /// Merge time of that PR (RFC 3339, the commit's own offset).
    pub since: &'static str,
    /// Where the input lives from then on (empty: the configured default).
    pub paths: &'static [&'static str],
}

/// The layout history of `SemiAnalysisAI/InferenceX` (the corpus in
/// `tests/data/history/`).
pub const HISTORY: &[Era] = &[
    Era {
        input: Input::Codeowners,
        since_pr: Some(85),
        since: "2025-10-05T20:11:54-05:00",
        paths: &[".github/CODEOWNERS"],
    },
    Era {
        input: Input::MasterConfigs,
        since_pr: Some(145),
        since: "2025-11-03T12:05:50-06:00",
        paths: &[
            ".github/configs/nvidia-master.yaml",
            ".github/configs/amd-master.yaml",
        ],
    },
    Era {
        input: Input::Runners,
        since_pr: Some(145),
        since: "2025-11-03T12:05:50-06:00",
        paths: &[".github/configs/runners.yaml"],
    },
    Era {
        input: Input::Changelog,
        since_pr: Some(267),
        since: "2025-12-15T09:18:56-06:00",
        paths: &["perf-changelog.yaml"],
    },
    Era {
        input: Input::SrtRecipes,
        since_pr: Some(1129),
        since: "2026-04-24T20:45:16-07:00",
        paths: &["benchmarks/multi_node/srt-slurm-recipes/"],
    },
    Era {
        input: Input::ScenarioScripts,
        since_pr: Some(1571),
        since: "2026-06-02T12:15:58-05:00",
        paths: &[
            "benchmarks/single_node/fixed_seq_len/",
            "benchmarks/single_node/agentic/",
        ],
    },
    Era {
        input: Input::ChecklistTemplate,
        since_pr: Some(1886),
        since: "2026-06-22T14:50:55-04:00",
        paths: &["docs/PR_REVIEW_CHECKLIST.md"],
    },
    Era {
        input: Input::GoldenCurves,
        since_pr: Some(1926),
        since: "2026-06-26T17:13:22-04:00",
        paths: &["golden_al_distribution/"],
    },
    Era {
        input: Input::MasterConfigs,
        since_pr: Some(1992),
        since: "2026-07-02T15:51:13-05:00",
        paths: &["configs/nvidia-master.yaml", "configs/amd-master.yaml"],
    },
    Era {
        input: Input::Runners,
        since_pr: Some(1992),
        since: "2026-07-02T15:51:13-05:00",
        paths: &["configs/runners.yaml"],
    },
    Era {
        input: Input::ModelsPolicy,
        since_pr: Some(2343),
        since: "2026-07-26T22:48:43-04:00",
        paths: &["MODELS.md"],
    },
];

/// Where the sweeps' images were named before the master configs held
/// every sweep: the workflow files, for all sweeps before #145 and for the
/// multinode ones until #251 moved them in (`b1107b8`, 2025-12-05). A
/// commit up to that merge has such a base; an image its base names there
/// ran already (`c028a3a`, #145, builds `amd-master.yaml` from
/// `dsr1-tmpl.yml` and `gptoss-tmpl.yml`, "no perf changes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LegacySweeps {
    pub until_pr: u64,
    /// Merge time of that PR (RFC 3339).
    pub until: &'static str,
    pub paths: &'static [&'static str],
}

/// The legacy sweep definitions of `SemiAnalysisAI/InferenceX`.
pub const LEGACY_SWEEPS: LegacySweeps = LegacySweeps {
    until_pr: 251,
    until: "2025-12-05T14:51:47-06:00",
    paths: &[".github/workflows/"],
};

/// The layout at one commit: the paths to read, and the inputs that did
/// not exist yet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayoutAt {
    pub paths: Paths,
    pub not_yet: BTreeSet<Input>,
}

fn since_secs(era: &Era) -> i64 {
    // The table is constant and covered by a test; a typo would place the
    // era at the epoch, never panic.
    DateTime::parse_from_rfc3339(era.since).map_or(0, |t| t.timestamp())
}

/// Resolves `table` at a commit time (seconds since the epoch), starting
/// from `defaults` (the configured paths).
pub fn at(table: &[Era], time: i64, defaults: &Paths) -> LayoutAt {
    let mut paths = defaults.clone();
    let mut not_yet: BTreeSet<Input> = table.iter().map(|e| e.input).collect();
    for era in table.iter().filter(|e| since_secs(e) <= time) {
        not_yet.remove(&era.input);
        let first = era.paths.first().map(|p| (*p).to_owned());
        match (era.input, first) {
            (Input::MasterConfigs, Some(_)) => {
                paths.master_configs = era.paths.iter().map(|p| (*p).to_owned()).collect();
            }
            (Input::Runners, Some(p)) => paths.runners = p,
            (Input::Changelog, Some(p)) => paths.changelog = p,
            (Input::Codeowners, Some(p)) => paths.codeowners = p,
            (Input::ChecklistTemplate, Some(p)) => paths.checklist_template = p,
            (Input::GoldenCurves, Some(p)) => paths.golden_al_dir = p,
            (Input::ModelsPolicy, Some(p)) => paths.models_policy = p,
            _ => {}
        }
    }
    // The commit's base is its parent: up to the merge that ended the
    // legacy era, the base is still in it.
    let until = DateTime::parse_from_rfc3339(LEGACY_SWEEPS.until).map_or(0, |t| t.timestamp());
    if time <= until {
        paths.legacy_sweeps = LEGACY_SWEEPS
            .paths
            .iter()
            .map(|p| (*p).to_owned())
            .collect();
    }
    LayoutAt { paths, not_yet }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp()
    }

    #[test]
    fn every_era_time_parses_and_each_input_is_in_order() {
        for e in HISTORY {
            assert!(DateTime::parse_from_rfc3339(e.since).is_ok(), "{e:?}");
        }
        for w in HISTORY.windows(2) {
            if w[0].input == w[1].input {
                assert!(since_secs(&w[0]) < since_secs(&w[1]));
            }
        }
    }

    #[test]
    fn master_configs_move_with_1992_and_do_not_exist_before_145() {
        let d = Paths::default();
        let early = at(HISTORY, t("2025-10-01T00:00:00Z"), &d);
        assert!(early.not_yet.contains(&Input::MasterConfigs));
        assert!(early.not_yet.contains(&Input::Codeowners));
        let mid = at(HISTORY, t("2026-03-01T00:00:00Z"), &d);
        assert_eq!(
            mid.paths.master_configs,
            [
                ".github/configs/nvidia-master.yaml",
                ".github/configs/amd-master.yaml"
            ]
        );
        assert_eq!(mid.paths.runners, ".github/configs/runners.yaml");
        assert!(mid.not_yet.contains(&Input::ScenarioScripts));
        assert!(!mid.not_yet.contains(&Input::Changelog));
        // The merge of #1992 itself is in the new era.
        let moved = at(HISTORY, t("2026-07-02T15:51:13-05:00"), &d);
        assert_eq!(moved.paths.runners, "configs/runners.yaml");
        assert!(moved.not_yet.contains(&Input::ModelsPolicy));
        let late = at(HISTORY, t("2026-08-22T00:00:00Z"), &d);
        assert!(late.not_yet.is_empty());
        assert_eq!(late.paths, d);
        // #251 itself still has a base of the legacy era; its successor not.
        let multinode = at(HISTORY, t("2025-12-05T14:51:47-06:00"), &d);
        assert_eq!(multinode.paths.legacy_sweeps, [".github/workflows/"]);
        assert!(mid.paths.legacy_sweeps.is_empty());
    }
}
