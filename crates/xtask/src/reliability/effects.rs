//! What a run expects the bot to have done, and the count of every way the
//! sandbox's record of effects and the store can disagree with it.
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashSet};

use sweepgate::comments::reply_marker;
use sweepgate::store::{JobState, Store};
use sweepgate_sandbox::process::Effects;

/// The activity a run created.
#[derive(Debug, Default, Clone)]
pub(crate) struct Expected {
    /// `(pr, comment id)` of every command comment: each gets one reply.
    pub commands: Vec<(u64, u64)>,
    /// `/use` comments by the maintainer: each stages its run once.
    pub uses: Vec<u64>,
    /// `/use` comments by someone without a role: refused, never staged.
    pub refused_uses: Vec<u64>,
    /// PRs that got the sweep label: each gets exactly one sweep.
    pub labelled: BTreeSet<u64>,
    pub use_run: u64,
}

/// Every figure is a count; the `lost_*`, `duplicate_*`, `unauthorized_*`
/// and `missing_*` ones must be zero.
#[derive(Debug, Default, Clone, Serialize)]
pub struct EffectCounts {
    pub commands: usize,
    pub replies: usize,
    pub lost_replies: usize,
    pub duplicate_replies: usize,
    pub bot_comments: usize,
    /// Bot comments sharing a PR and a marker with another.
    pub duplicate_comments: usize,
    pub sweeps_stored: usize,
    pub workflow_dispatches: usize,
    pub duplicate_dispatches: usize,
    /// Labelled PRs without exactly one sweep.
    pub missing_sweeps: usize,
    pub undispatched_sweeps: usize,
    pub unknown_dispatches: usize,
    pub staging_requests: usize,
    pub staged_keys: usize,
    pub lost_stagings: usize,
    pub unauthorized_stagings: usize,
    /// What each violation was about.
    pub details: Vec<String>,
}

impl EffectCounts {
    pub(crate) fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut check = |n: usize, what: &str| {
            if n > 0 {
                v.push(format!("{n} {what}"));
            }
        };
        check(self.lost_replies, "command comments without a reply");
        check(
            self.duplicate_replies,
            "command comments with several replies",
        );
        check(self.duplicate_comments, "duplicate bot comments");
        check(self.duplicate_dispatches, "duplicate workflow dispatches");
        check(
            self.missing_sweeps,
            "labelled PRs without exactly one sweep",
        );
        check(self.lost_stagings, "authorized /use never staged");
        check(self.unauthorized_stagings, "stagings nobody authorized");
        check(self.undispatched_sweeps, "stored sweeps never dispatched");
        check(self.unknown_dispatches, "dispatches of no stored sweep");
        v.extend(self.details.iter().cloned());
        v
    }
}

/// Compares the sandbox's effects and the stored sweeps with `expected`.
pub(crate) async fn count(
    effects: &Effects,
    expected: &Expected,
    store: &Store,
    repo: &str,
) -> anyhow::Result<EffectCounts> {
    let mut c = EffectCounts {
        commands: expected.commands.len(),
        ..EffectCounts::default()
    };
    let bot: Vec<_> = effects.comments.iter().filter(|cm| cm.by_app).collect();
    c.bot_comments = bot.len();
    let mut by_marker: BTreeMap<(u64, String), Vec<u64>> = BTreeMap::new();
    for cm in &bot {
        if let Some(m) = &cm.marker {
            by_marker.entry((cm.pr, m.clone())).or_default().push(cm.id);
        }
    }
    c.duplicate_comments = by_marker.values().map(|ids| ids.len() - 1).sum();
    let mut reply_of: BTreeMap<u64, u64> = BTreeMap::new();
    for &(pr, comment) in &expected.commands {
        match by_marker
            .get(&(pr, reply_marker(comment)))
            .map(Vec::as_slice)
        {
            None | Some([]) => c.lost_replies += 1,
            Some([one]) => {
                c.replies += 1;
                reply_of.insert(comment, *one);
            }
            Some(_) => c.duplicate_replies += 1,
        }
    }

    let mut sweeps = BTreeMap::new();
    let prs: BTreeSet<u64> = effects.comments.iter().map(|cm| cm.pr).collect();
    let dispatched: HashSet<&str> = effects
        .workflow_dispatches
        .iter()
        .filter_map(|d| d.sweep_id.as_deref())
        .collect();
    let mut stored_ids = HashSet::new();
    for pr in prs.union(&expected.labelled) {
        let stored = store.pr_sweeps(repo, *pr as i64).await?;
        sweeps.insert(*pr, stored.len());
        for s in stored {
            if !dispatched.contains(s.sweep_id.as_str()) {
                c.undispatched_sweeps += 1;
                c.details.push(format!(
                    "PR #{pr}: sweep {} ({}, run {:?}, {}) was never dispatched",
                    s.sweep_id,
                    s.state,
                    s.run_id,
                    s.reason.as_deref().unwrap_or("")
                ));
            }
            stored_ids.insert(s.sweep_id);
        }
    }
    c.sweeps_stored = sweeps.values().sum();
    c.unknown_dispatches = dispatched
        .iter()
        .filter(|id| !stored_ids.contains(**id))
        .count();
    c.missing_sweeps = expected
        .labelled
        .iter()
        .filter(|pr| sweeps.get(pr) != Some(&1))
        .count();
    c.workflow_dispatches = effects.workflow_dispatches.len();
    let distinct: HashSet<Option<&str>> = effects
        .workflow_dispatches
        .iter()
        .map(|d| d.sweep_id.as_deref())
        .collect();
    c.duplicate_dispatches = c.workflow_dispatches - distinct.len();

    c.staging_requests = effects.staging_requests.len();
    c.staged_keys = effects.staged_keys;
    let authorized: HashSet<String> = expected
        .uses
        .iter()
        .filter_map(|u| reply_of.get(u))
        .map(|reply| format!("{}:1:{reply}", expected.use_run))
        .collect();
    let staged: HashSet<&String> = effects.staging_requests.iter().collect();
    c.lost_stagings =
        expected.uses.len() - authorized.iter().filter(|k| staged.contains(k)).count();
    c.unauthorized_stagings = staged.iter().filter(|k| !authorized.contains(**k)).count();
    Ok(c)
}

/// What the store holds of the acknowledged deliveries and the queue.
#[derive(Debug, Default, Clone, Serialize)]
pub struct StoreCounts {
    pub acknowledged: usize,
    /// Acknowledged but not stored.
    pub lost: usize,
    /// Every job in the store, and how they ended.
    pub jobs: usize,
    pub jobs_done: usize,
    pub jobs_dead: usize,
    pub jobs_unfinished: usize,
}

/// Reads the store in bulk and checks every acknowledged delivery.
pub(crate) async fn stored<'a>(
    store: &Store,
    acknowledged: impl IntoIterator<Item = &'a str>,
) -> anyhow::Result<StoreCounts> {
    let rows = store.recent_deliveries(i64::MAX / 2).await?;
    let ids: HashSet<&str> = rows.iter().map(|r| r.delivery_id.as_str()).collect();
    let mut c = StoreCounts::default();
    for id in acknowledged {
        c.acknowledged += 1;
        if !ids.contains(id) {
            c.lost += 1;
        }
    }
    for job in store.jobs(None, i64::MAX / 2).await? {
        c.jobs += 1;
        match job.state() {
            Some(JobState::Done) => c.jobs_done += 1,
            Some(JobState::Dead) => c.jobs_dead += 1,
            _ => c.jobs_unfinished += 1,
        }
    }
    Ok(c)
}
