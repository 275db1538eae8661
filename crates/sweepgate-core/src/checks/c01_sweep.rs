//! Check 1 — Sweep on an in-PR commit (`docs/rules.md` §2 Check 1,
//! `docs/contracts.md` §6): some commit of the PR has, per required job family,
//! a successful check run and none that failed, reading the latest check run
//! per name (`filter=latest`, so jobs re-run in a later attempt count).
use super::snapshot::CheckRun;
use super::{CheckResult, Evidence, Snapshot, sha8};
use crate::config::RepoConfig;

const N: u8 = 1;

/// Families whose runs count as evals.
pub(crate) const EVAL_FAMILIES: [&str; 4] = [
    "eval /",
    "agentic eval /",
    "multi-node eval /",
    "multi-node agentic eval /",
];

const BAD: [&str; 5] = [
    "failure",
    "timed_out",
    "cancelled",
    "action_required",
    "startup_failure",
];

fn family_name(isl: Option<i64>, osl: Option<i64>) -> &'static str {
    match (isl, osl) {
        (Some(1024), Some(1024)) => "1k1k",
        (Some(1024), Some(8192)) => "1k8k",
        _ => "8k1k",
    }
}

/// The benchmark families the changed keys need.
pub(crate) fn required_families(s: &Snapshot, cfg: &RepoConfig) -> Vec<String> {
    let facts = s.facts(cfg);
    let evals_only =
        !facts.new_entries.is_empty() && facts.new_entries.iter().all(|e| e.is_evals_only());
    let mut out: Vec<String> = Vec::new();
    if evals_only {
        return out;
    }
    for k in &facts.changed {
        let multi = k.entry.is_multinode();
        for r in k.entry.rows() {
            let fam = match (multi, r.agentic) {
                (false, true) => "agentic /".to_owned(),
                (true, true) => "multi-node agentic /".to_owned(),
                (false, false) => format!("single-node {} /", family_name(r.isl, r.osl)),
                (true, false) => format!("multi-node {} /", family_name(r.isl, r.osl)),
            };
            if !out.contains(&fam) {
                out.push(fam);
            }
        }
    }
    out
}

fn in_family(run: &CheckRun, fam: &str) -> bool {
    run.name.starts_with(fam)
}

fn is_aggregator(run: &CheckRun) -> bool {
    run.name.contains("collect-evals") || run.name.contains("collect-results")
}

/// Run id from a check run's `details_url`.
pub fn run_id_of(url: &str) -> Option<u64> {
    let i = url.find("/actions/runs/")?;
    let rest = &url[i + "/actions/runs/".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

struct Qualified {
    sha: String,
    counts: Vec<(String, usize)>,
    run: Option<u64>,
}

fn qualifies(runs: &[CheckRun], required: &[String]) -> Option<Qualified> {
    let runs: Vec<&CheckRun> = runs.iter().filter(|r| !is_aggregator(r)).collect();
    let mut counts = Vec::new();
    let bench_families: Vec<String> = if required.is_empty() {
        // No key to derive families from: any benchmark family present.
        let mut fams: Vec<String> = Vec::new();
        for r in &runs {
            if let Some((f, _)) = r.name.split_once(" /") {
                let f = format!("{f} /");
                if !EVAL_FAMILIES.contains(&f.as_str()) && f != "canary /" && !fams.contains(&f) {
                    fams.push(f);
                }
            }
        }
        fams
    } else {
        required.to_vec()
    };
    for fam in &bench_families {
        let of: Vec<&&CheckRun> = runs.iter().filter(|r| in_family(r, fam)).collect();
        let ok = of
            .iter()
            .filter(|r| r.conclusion.as_deref() == Some("success"))
            .count();
        if ok == 0
            || of
                .iter()
                .any(|r| r.conclusion.as_deref().is_some_and(|c| BAD.contains(&c)))
        {
            return None;
        }
        counts.push((fam.clone(), ok));
    }
    let mut eval_ok = 0;
    let mut run = None;
    for fam in EVAL_FAMILIES {
        let of: Vec<&&CheckRun> = runs.iter().filter(|r| in_family(r, fam)).collect();
        if of
            .iter()
            .any(|r| r.conclusion.as_deref().is_some_and(|c| BAD.contains(&c)))
        {
            return None;
        }
        let good: Vec<&&&CheckRun> = of
            .iter()
            .filter(|r| r.conclusion.as_deref() == Some("success"))
            .collect();
        if !good.is_empty() {
            counts.push((fam.to_owned(), good.len()));
            eval_ok += good.len();
            run = run.or_else(|| {
                good.iter()
                    .find_map(|r| r.details_url.as_deref().and_then(run_id_of))
            });
        }
    }
    if eval_ok == 0 {
        return None;
    }
    Some(Qualified {
        sha: String::new(),
        counts,
        run,
    })
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    if !facts.benchmark_affecting(s, cfg) {
        return CheckResult::na(N, "no benchmark-affecting change; no sweep required.");
    }
    let Some(all) = &s.check_runs else {
        return CheckResult::review(
            N,
            "check runs were not provided (local range); cannot confirm a green sweep on an in-PR commit.",
        );
    };
    let required = required_families(s, cfg);
    // Newest commit first.
    let found = s.commits.iter().rev().find_map(|c| {
        let runs = all.get(&c.sha)?;
        qualifies(runs, &required).map(|mut q| {
            q.sha = c.sha.clone();
            q
        })
    });
    let Some(q) = found else {
        let fams = if required.is_empty() {
            String::new()
        } else {
            format!(" (needs {} and an eval family)", required.join(", "))
        };
        return CheckResult::fail(
            N,
            format!("No passing sweep/eval was found on any commit in this PR{fams}."),
        );
    };
    let counts: Vec<String> = q.counts.iter().map(|(f, n)| format!("{n} {f}")).collect();
    let run = q.run.map_or(String::new(), |id| format!(" in run {id}"));
    let head = if q.sha != s.pr.head_sha && !s.pr.head_sha.is_empty() {
        format!("; head {} has no sweep of its own", sha8(&s.pr.head_sha))
    } else {
        String::new()
    };
    let mut r = CheckResult::pass(
        N,
        format!(
            "commit {} (in the PR) has {} check-runs at success{run}{head}.",
            sha8(&q.sha),
            counts.join(", ")
        ),
    );
    if let Some(id) = q.run {
        r = r.with(Evidence::Run { id });
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::{ChangedFile, Commit};

    fn cr(name: &str, c: &str) -> CheckRun {
        CheckRun {
            name: name.into(),
            status: "completed".into(),
            conclusion: Some(c.into()),
            details_url: Some("https://github.com/o/r/actions/runs/77/job/1".into()),
        }
    }

    fn snap(runs: Vec<CheckRun>) -> Snapshot {
        let mut s = Snapshot::default();
        s.files = vec![ChangedFile {
            path: "benchmarks/x.sh".into(),
            status: "modified".into(),
            ..Default::default()
        }];
        s.commits = vec![Commit {
            sha: "a".repeat(40),
            message: String::new(),
        }];
        s.pr.head_sha = "a".repeat(40);
        s.check_runs = Some([("a".repeat(40), runs)].into_iter().collect());
        s
    }

    #[test]
    fn green_runs_pass_with_run_id() {
        let s = snap(vec![
            cr("single-node 8k1k / bench (tp8)", "success"),
            cr("eval / gsm8k", "success"),
            cr("collect-results", "failure"),
        ]);
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "commit aaaaaaaa (in the PR) has 1 single-node 8k1k /, 1 eval / check-runs at success in run 77."
        );
    }

    #[test]
    fn failed_job_disqualifies() {
        let s = snap(vec![
            cr("single-node 8k1k / bench (tp8)", "success"),
            cr("single-node 8k1k / bench (tp4)", "failure"),
            cr("eval / gsm8k", "success"),
        ]);
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "No passing sweep/eval was found on any commit in this PR."
        );
    }

    #[test]
    fn no_benchmark_change_is_na_and_missing_runs_review() {
        let mut s = snap(vec![]);
        s.files[0].path = "README.md".into();
        assert_eq!(
            check(&s, &RepoConfig::default()).outcome,
            Outcome::NotApplicable
        );
        let mut s = snap(vec![]);
        s.check_runs = None;
        assert_eq!(check(&s, &RepoConfig::default()).outcome, Outcome::Review);
    }
}
