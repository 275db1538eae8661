//! Which workflow runs can be pinned (`/use`, `/reuse-sweep-run`) or staged
//! (`/stage-results`): `docs/contracts.md` §3 and §5, `docs/reference-automation.md`
//! §4. Every refusal names the one fact that failed.
use crate::config::RepoConfig;
use crate::ids::RunId;
use chrono::{DateTime, Utc};
use std::collections::HashSet;
use std::fmt;

/// A workflow run as the API describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFacts {
    pub id: RunId,
    pub event: String,
    pub status: String,
    pub conclusion: Option<String>,
    /// `.github/workflows/<file>`.
    pub path: Option<String>,
    pub head_sha: String,
    pub head_branch: Option<String>,
    pub created_at: DateTime<Utc>,
    pub run_attempt: u64,
    pub html_url: String,
    /// PR numbers GitHub associates with the run.
    pub pull_requests: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactFacts {
    pub name: String,
    pub expired: bool,
}

/// A run sweepgate dispatched ran on the default branch: the commit it
/// tested is its sweep's head. Other runs keep their head. `swept` gives
/// each dispatched sweep's run id (if known) and head.
pub fn tested_head<'a>(
    run: &mut RunFacts,
    swept: impl IntoIterator<Item = (Option<i64>, &'a str)>,
) {
    if let Some((_, head)) = swept
        .into_iter()
        .find(|(id, _)| *id == Some(run.id.0 as i64))
    {
        run.head_sha = head.to_owned();
    }
}

/// A label event of the PR timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelEvent {
    pub at: DateTime<Utc>,
    pub label: String,
    pub added: bool,
    /// Who added or removed it.
    pub actor: Option<String>,
}

/// The labels the PR carried at `t`, replayed from its timeline.
pub fn labels_at(events: &[LabelEvent], t: DateTime<Utc>) -> Vec<String> {
    let mut sorted: Vec<&LabelEvent> = events.iter().filter(|e| e.at <= t).collect();
    sorted.sort_by_key(|e| e.at);
    let mut labels: Vec<String> = Vec::new();
    for e in sorted {
        labels.retain(|l| l != &e.label);
        if e.added {
            labels.push(e.label.clone());
        }
    }
    labels
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `/use <id>` or `/reuse-sweep-run <id>`.
    PinExplicit,
    /// `/reuse-sweep-run` without an id: only runs that concluded success.
    PinNewest,
    /// `/stage-results <id>`.
    StageExplicit,
    /// `/stage-results` without an id.
    StageNewest,
}

impl Purpose {
    fn explicit(self) -> bool {
        matches!(self, Purpose::PinExplicit | Purpose::StageExplicit)
    }

    fn staging(self) -> bool {
        matches!(self, Purpose::StageExplicit | Purpose::StageNewest)
    }
}

/// Why a run cannot serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    NotTheSweepWorkflow { path: String, expected: String },
    WrongEvent(String),
    NotCompleted(String),
    Conclusion(String),
    NotSuccess(String),
    HeadNotInPr(String),
    NoFullSweepLabel,
    TrimmedOrModified(String),
    NoResults,
    NoChangelogMetadata,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::NotTheSweepWorkflow { path, expected } => {
                write!(f, "it is a run of `{path}`, not of `{expected}`")
            }
            Rejection::WrongEvent(e) => write!(
                f,
                "it was started by `{e}`, not by the pull request or sweepgate's dispatch"
            ),
            Rejection::NotCompleted(s) => write!(f, "it has not completed (status `{s}`)"),
            Rejection::Conclusion(c) => write!(f, "it concluded `{c}`"),
            Rejection::NotSuccess(c) => write!(
                f,
                "it concluded `{c}`; without a run id only a successful run is picked"
            ),
            Rejection::HeadNotInPr(sha) => write!(
                f,
                "its commit `{}` is no longer among this PR's commits",
                &sha[..sha.len().min(12)]
            ),
            Rejection::NoFullSweepLabel => {
                write!(f, "the PR carried no full-sweep label when the run started")
            }
            Rejection::TrimmedOrModified(l) => {
                write!(
                    f,
                    "the run was swept under `{l}`, which a pinned run may not carry"
                )
            }
            Rejection::NoResults => write!(
                f,
                "it has no unexpired result artifact (`results_bmk`, `eval_results_all` or `bmk_agentic_*`)"
            ),
            Rejection::NoChangelogMetadata => {
                write!(f, "it has no unexpired `changelog-metadata` artifact")
            }
        }
    }
}

/// The full-sweep primary labels (every primary label but the trimmed one).
pub(crate) fn full_sweep_labels(cfg: &RepoConfig) -> impl Iterator<Item = &str> {
    cfg.labels
        .primary
        .iter()
        .map(String::as_str)
        .filter(|l| !cfg.labels.roles.is_trimmed(l))
}

pub struct Context<'a> {
    pub cfg: &'a RepoConfig,
    pub pr_number: u64,
    pub pr_commits: &'a HashSet<String>,
    /// Labels at the run's creation.
    pub labels_at_start: &'a [String],
    pub artifacts: &'a [ArtifactFacts],
}

/// Checks one run, in the order a person would: identity, state, commit,
/// labels, artifacts.
pub fn check(run: &RunFacts, ctx: &Context<'_>, purpose: Purpose) -> Result<(), Rejection> {
    let expected = format!(".github/workflows/{}", ctx.cfg.sweep.workflow);
    if let Some(path) = &run.path {
        // GitHub appends `@ref` for some triggers.
        let bare = path.split('@').next().unwrap_or(path);
        if bare != expected {
            return Err(Rejection::NotTheSweepWorkflow {
                path: bare.to_owned(),
                expected,
            });
        }
    }
    if run.event != "pull_request" && run.event != "workflow_dispatch" {
        return Err(Rejection::WrongEvent(run.event.clone()));
    }
    if run.status != "completed" {
        return Err(Rejection::NotCompleted(run.status.clone()));
    }
    let conclusion = run.conclusion.clone().unwrap_or_default();
    if !matches!(conclusion.as_str(), "success" | "failure" | "cancelled") {
        return Err(Rejection::Conclusion(conclusion));
    }
    if !purpose.explicit() && conclusion != "success" {
        return Err(Rejection::NotSuccess(conclusion));
    }
    let historical =
        purpose == Purpose::StageExplicit && run.pull_requests.contains(&ctx.pr_number);
    if !ctx.pr_commits.contains(&run.head_sha) && !historical {
        return Err(Rejection::HeadNotInPr(run.head_sha.clone()));
    }
    let had_full = full_sweep_labels(ctx.cfg).any(|l| ctx.labels_at_start.iter().any(|x| x == l));
    if !had_full {
        return Err(Rejection::NoFullSweepLabel);
    }
    if !purpose.staging()
        && let Some(m) = ctx
            .cfg
            .labels
            .roles
            .unpinnable()
            .into_iter()
            .find(|m| ctx.labels_at_start.iter().any(|l| l == m))
    {
        return Err(Rejection::TrimmedOrModified((*m).to_owned()));
    }
    let live: Vec<&str> = ctx
        .artifacts
        .iter()
        .filter(|a| !a.expired)
        .map(|a| a.name.as_str())
        .collect();
    let has_results = live
        .iter()
        .any(|n| *n == "results_bmk" || *n == "eval_results_all" || n.starts_with("bmk_agentic_"));
    if !has_results {
        return Err(Rejection::NoResults);
    }
    if purpose.staging() && !live.contains(&"changelog-metadata") {
        return Err(Rejection::NoChangelogMetadata);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn run() -> RunFacts {
        RunFacts {
            id: RunId(38614048439),
            event: "pull_request".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            path: Some(".github/workflows/run-sweep.yml".into()),
            head_sha: "a".repeat(40),
            head_branch: Some("b".into()),
            created_at: t("2026-10-14T10:00:00Z"),
            run_attempt: 1,
            html_url: String::new(),
            pull_requests: vec![7],
        }
    }

    fn artifacts(names: &[&str]) -> Vec<ArtifactFacts> {
        names
            .iter()
            .map(|n| ArtifactFacts {
                name: (*n).into(),
                expired: false,
            })
            .collect()
    }

    #[test]
    fn the_label_timeline_is_replayed() {
        let ev = |at: &str, label: &str, added| LabelEvent {
            at: t(at),
            label: label.into(),
            added,
            actor: None,
        };
        let events = [
            ev("2026-10-14T08:00:00Z", "sweep-enabled", true),
            ev("2026-10-14T09:00:00Z", "sweep-enabled", false),
            ev("2026-10-14T09:30:00Z", "full-sweep-fail-fast", true),
            ev("2026-10-14T11:00:00Z", "evals-only", true),
        ];
        assert_eq!(
            labels_at(&events, t("2026-10-14T10:00:00Z")),
            vec!["full-sweep-fail-fast"]
        );
        assert_eq!(
            labels_at(&events, t("2026-10-14T08:30:00Z")),
            vec!["sweep-enabled"]
        );
    }

    #[test]
    fn each_rule_refuses_with_its_reason() {
        let cfg = RepoConfig::default();
        let commits: HashSet<String> = [run().head_sha].into();
        let full = vec!["full-sweep-fail-fast".to_string()];
        let good = artifacts(&["results_bmk", "changelog-metadata"]);
        let ctx = |labels: &'_ [String], arts: &'_ [ArtifactFacts]| -> Result<(), Rejection> {
            check(
                &run(),
                &Context {
                    cfg: &cfg,
                    pr_number: 7,
                    pr_commits: &commits,
                    labels_at_start: labels,
                    artifacts: arts,
                },
                Purpose::PinExplicit,
            )
        };
        assert_eq!(ctx(&full, &good), Ok(()));
        assert_eq!(ctx(&[], &good), Err(Rejection::NoFullSweepLabel));
        let trimmed = vec!["sweep-enabled".to_string()];
        assert_eq!(ctx(&trimmed, &good), Err(Rejection::NoFullSweepLabel));
        let evals = vec!["full-sweep-enabled".to_string(), "evals-only".to_string()];
        assert_eq!(
            ctx(&evals, &good),
            Err(Rejection::TrimmedOrModified("evals-only".into()))
        );
        assert_eq!(
            ctx(&full, &artifacts(&["server_logs_x"])),
            Err(Rejection::NoResults)
        );
        let mut expired = good.clone();
        expired[0].expired = true;
        assert_eq!(ctx(&full, &expired), Err(Rejection::NoResults));
    }

    #[test]
    fn state_commit_and_workflow_rules() {
        let cfg = RepoConfig::default();
        let full = vec!["full-sweep-enabled".to_string()];
        let arts = artifacts(&["bmk_agentic_x", "changelog-metadata"]);
        let none: HashSet<String> = HashSet::new();
        let commits: HashSet<String> = [run().head_sha].into();
        let go = |r: &RunFacts, c: &HashSet<String>, p: Purpose| {
            check(
                r,
                &Context {
                    cfg: &cfg,
                    pr_number: 7,
                    pr_commits: c,
                    labels_at_start: &full,
                    artifacts: &arts,
                },
                p,
            )
        };
        assert!(matches!(
            go(&run(), &none, Purpose::PinExplicit),
            Err(Rejection::HeadNotInPr(_))
        ));
        // A pinned run id may stage through the historical association.
        assert_eq!(go(&run(), &none, Purpose::StageExplicit), Ok(()));
        let mut r = run();
        r.conclusion = Some("cancelled".into());
        assert_eq!(
            go(&r, &commits, Purpose::PinExplicit),
            Ok(()),
            "fail-fast runs end cancelled"
        );
        assert!(matches!(
            go(&r, &commits, Purpose::PinNewest),
            Err(Rejection::NotSuccess(_))
        ));
        r.status = "in_progress".into();
        assert!(matches!(
            go(&r, &commits, Purpose::PinExplicit),
            Err(Rejection::NotCompleted(_))
        ));
        let mut r = run();
        r.path = Some(".github/workflows/e2e-tests.yml".into());
        assert!(matches!(
            go(&r, &commits, Purpose::PinExplicit),
            Err(Rejection::NotTheSweepWorkflow { .. })
        ));
        let mut r = run();
        r.event = "push".into();
        assert!(matches!(
            go(&r, &commits, Purpose::PinExplicit),
            Err(Rejection::WrongEvent(_))
        ));
        let no_meta = artifacts(&["results_bmk"]);
        let staged = check(
            &run(),
            &Context {
                cfg: &cfg,
                pr_number: 7,
                pr_commits: &commits,
                labels_at_start: &full,
                artifacts: &no_meta,
            },
            Purpose::StageNewest,
        );
        assert_eq!(staged, Err(Rejection::NoChangelogMetadata));
    }
}
