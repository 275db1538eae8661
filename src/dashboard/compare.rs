//! sweepgate's verdict beside the old verifier's, check by check: on the
//! PR page (the same commit's two verdicts), and on `/compare`, which
//! counts agreement per check across pull requests. The old verdicts are
//! the ones `handlers::legacy` recorded (`docs/shadow.md`).
use super::{DashState, page, time, unavailable};
use crate::store::{ActivityRow, StoreError};
use askama::Template;
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use std::collections::BTreeMap;
use sweepgate_core::checks::CheckResult;
use sweepgate_core::legacy::{self, LegacyVerdict, RowComparison};

/// A recorded old verdict.
#[derive(Deserialize)]
pub(crate) struct StoredLegacy {
    pub legacy: LegacyVerdict,
    #[serde(default)]
    pub comment_url: Option<String>,
}

pub(crate) fn stored_legacy(a: &ActivityRow) -> Option<StoredLegacy> {
    (a.kind == "legacy-verdict")
        .then(|| serde_json::from_str(&a.detail).ok())
        .flatten()
}

/// The newest old verdict of commit `sha` in a PR's activity.
pub(crate) fn legacy_for(activity: &[ActivityRow], sha: &str) -> Option<StoredLegacy> {
    activity
        .iter()
        .rev()
        .filter(|a| a.head_sha.as_deref() == Some(sha))
        .find_map(stored_legacy)
}

/// One row of the side-by-side table.
pub(crate) struct BesideLine {
    pub number: u8,
    pub name: String,
    /// `same`, `different`, or `only one`.
    pub agreement: String,
    pub ours: String,
    pub ours_reason: String,
    pub theirs: String,
    pub theirs_reason: String,
}

pub(crate) fn beside(rows: &[RowComparison]) -> Vec<BesideLine> {
    rows.iter()
        .map(|r| {
            let (ours, ours_reason) = r
                .ours
                .clone()
                .unwrap_or_else(|| ("—".into(), String::new()));
            let (theirs, theirs_reason) = r
                .theirs
                .clone()
                .unwrap_or_else(|| ("—".into(), String::new()));
            BesideLine {
                number: r.number,
                name: r.name.clone(),
                agreement: match (&r.ours, &r.theirs, r.same) {
                    (_, _, true) => "same",
                    (Some(_), Some(_), false) => "different",
                    _ => "only one",
                }
                .into(),
                ours,
                // The same outcome needs no second reason.
                ours_reason: if r.same { String::new() } else { ours_reason },
                theirs,
                theirs_reason: if r.same { String::new() } else { theirs_reason },
            }
        })
        .collect()
}

/// sweepgate's rows beside the old verdict.
pub(crate) fn compare_rows(ours: &[CheckResult], theirs: &LegacyVerdict) -> Vec<RowComparison> {
    legacy::compare(ours, theirs)
}

/// Per check, across pull requests.
struct CheckCount {
    number: u8,
    name: String,
    compared: usize,
    same: usize,
    different: usize,
    rate: String,
}

/// Below this many compared pull requests no rate is shown: it would say
/// more than the data does.
const MIN_FOR_RATE: usize = 20;

#[derive(Template)]
#[template(path = "dashboard/compare.html")]
struct ComparePage {
    base: String,
    prs: usize,
    min_for_rate: usize,
    checks: Vec<CheckCount>,
    pairs: Vec<PairLine>,
}

struct PairLine {
    repository: String,
    number: i64,
    sha: String,
    same: usize,
    different: usize,
    at: String,
}

pub(crate) async fn overview(State(st): State<DashState>) -> Response {
    match compare_page(&st).await {
        Ok(p) => page(&p),
        Err(e) => unavailable(&e),
    }
}

async fn compare_page(st: &DashState) -> Result<ComparePage, StoreError> {
    let mut counts: BTreeMap<u8, CheckCount> = BTreeMap::new();
    let mut pairs = Vec::new();
    for p in st.store.recent_prs(1000).await? {
        let activity = st
            .store
            .pr_activity(&p.repository, p.pr_number, 10_000)
            .await?;
        // The newest sweepgate verdict that has an old verdict of its commit.
        let pair = activity.iter().rev().find_map(|a| {
            let v = super::stored_verdict(a).filter(|_| a.kind == "verdict")?;
            let old = legacy_for(&activity, &v.verdict.head_sha)?;
            Some((a.at, v, old))
        });
        let Some((at, v, old)) = pair else {
            continue;
        };
        let rows = compare_rows(&v.verdict.rows, &old.legacy);
        for r in &rows {
            let c = counts.entry(r.number).or_insert_with(|| CheckCount {
                number: r.number,
                name: r.name.clone(),
                compared: 0,
                same: 0,
                different: 0,
                rate: String::new(),
            });
            if r.ours.is_some() && r.theirs.is_some() {
                c.compared += 1;
                if r.same {
                    c.same += 1;
                } else {
                    c.different += 1;
                }
            }
        }
        pairs.push(PairLine {
            repository: p.repository.clone(),
            number: p.pr_number,
            sha: v.verdict.head_sha.chars().take(12).collect(),
            same: rows.iter().filter(|r| r.same).count(),
            different: rows
                .iter()
                .filter(|r| !r.same && r.ours.is_some() && r.theirs.is_some())
                .count(),
            at: time(at),
        });
    }
    let prs = pairs.len();
    let checks = counts
        .into_values()
        .map(|mut c| {
            c.rate = if c.compared >= MIN_FOR_RATE {
                format!("{:.0} %", 100.0 * c.same as f64 / c.compared as f64)
            } else {
                String::new()
            };
            c
        })
        .collect();
    Ok(ComparePage {
        base: st.base.clone(),
        prs,
        min_for_rate: MIN_FOR_RATE,
        checks,
        pairs,
    })
}
