//! The result-links comment of a completed sweep run: job families with
//! their outcomes and the canary's (`docs/contracts.md` §4).

/// A job of the run (latest attempt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFacts {
    pub name: String,
    pub conclusion: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Family {
    pub name: String,
    pub passed: u32,
    pub failed: u32,
    pub cancelled: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Canary {
    None,
    Passed,
    Failed,
    Cancelled,
}

/// The family of a matrix job: the caller prefix before ` / ` (`single-node
/// 8k1k`, `agentic`, `eval`, `canary`…). Jobs without one are the run's own
/// plumbing (`setup`, `check-changelog`) and are not counted.
pub(crate) fn family_of(job_name: &str) -> Option<&str> {
    let (prefix, _) = job_name.split_once(" / ")?;
    let prefix = prefix.trim();
    (!prefix.is_empty()).then_some(prefix)
}

/// Families in first-seen order, and the canary's outcome.
pub fn summarize(jobs: &[JobFacts]) -> (Vec<Family>, Canary) {
    let mut families: Vec<Family> = Vec::new();
    let mut canary = Canary::None;
    for j in jobs {
        let Some(name) = family_of(&j.name) else {
            continue;
        };
        // Skipped jobs did not run.
        if j.conclusion.as_deref() == Some("skipped") {
            continue;
        }
        let idx = match families.iter().position(|f| f.name == name) {
            Some(i) => i,
            None => {
                families.push(Family {
                    name: name.to_owned(),
                    ..Family::default()
                });
                families.len() - 1
            }
        };
        let f = &mut families[idx];
        let outcome = match j.conclusion.as_deref() {
            Some("success") => {
                f.passed += 1;
                Canary::Passed
            }
            Some("cancelled") => {
                f.cancelled += 1;
                Canary::Cancelled
            }
            // GitHub counts neutral as passing.
            Some("neutral") => {
                f.passed += 1;
                Canary::Passed
            }
            _ => {
                f.failed += 1;
                Canary::Failed
            }
        };
        if name == "canary" {
            canary = outcome;
        }
    }
    (families, canary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(n: &str, c: &str) -> JobFacts {
        JobFacts {
            name: n.into(),
            conclusion: Some(c.into()),
        }
    }

    #[test]
    fn families_are_counted_and_plumbing_skipped() {
        let jobs = [
            job("check-changelog", "success"),
            job("canary / p1 | dsv4 fp8 h200 vllm TP8 c4", "success"),
            job(
                "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c4",
                "success",
            ),
            job(
                "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c8",
                "failure",
            ),
            job(
                "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c16",
                "cancelled",
            ),
            job("eval / p1 | dsv4 fp8 h200 vllm TP8 c16 | eval", "timed_out"),
            job("agentic / x", "skipped"),
        ];
        let (fams, canary) = summarize(&jobs);
        assert_eq!(canary, Canary::Passed);
        let names: Vec<_> = fams.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["canary", "single-node 8k1k", "eval"]);
        assert_eq!(
            (fams[1].passed, fams[1].failed, fams[1].cancelled),
            (1, 1, 1)
        );
        assert_eq!(fams[2].failed, 1);
    }
}
