//! Replicas: three `serve` processes on one fresh PostgreSQL database, with
//! deliveries spread round-robin over them. Every job must run once (one
//! attempt, one "job ran" record in one process's log) and the jobs of one
//! PR (one serial key) must never overlap: each starts after the previous
//! one of its key finished.
use anyhow::Context;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Instant;

use super::crash::{Deliveries, activity};
use super::effects::{self, EffectCounts, Expected, StoreCounts};
use super::procs::{ServerProc, start_world};
use super::{Backend, Record};
use sweepgate::store::Store;

pub(crate) const REPLICAS: usize = 3;

#[derive(Debug, Clone)]
pub struct ReplicaOpts {
    pub bin: PathBuf,
    /// Rounds of activity (each: command comments, `/use`, labels, PRs).
    pub rounds: u32,
    pub seed: u64,
    pub pg_url: String,
}

/// One job's run, from a server's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JobRun {
    pub job: i64,
    pub serial_key: String,
    pub started_ms: i64,
    pub finished_ms: i64,
    pub replica: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReplicaReport {
    pub replicas: usize,
    pub rounds: u32,
    pub deliveries: Deliveries,
    /// Jobs each replica ran.
    pub jobs_per_replica: Vec<usize>,
    pub job_runs: usize,
    /// Jobs with more than one attempt or more than one logged run.
    pub jobs_run_twice: usize,
    /// Stored jobs with no logged run.
    pub jobs_never_logged: usize,
    pub serial_keys: usize,
    /// Pairs of jobs of one key whose runs overlapped.
    pub overlaps: usize,
    /// Jobs of one key that ran out of their queue order.
    pub out_of_order: usize,
    /// Consecutive jobs of one key where the later was queued before the
    /// earlier finished (the serialization had something to hold back).
    pub contended_pairs: usize,
    pub store: StoreCounts,
    pub effects: EffectCounts,
    pub duration_s: f64,
}

impl ReplicaReport {
    pub(crate) fn record(&self) -> Record {
        Record {
            order: 50,
            property: "Replicas (PostgreSQL)".into(),
            tried: format!(
                "{} serve processes on one database, {} deliveries round-robin, {} jobs on {} PRs (per replica: {})",
                self.replicas,
                self.deliveries.acknowledged_count,
                self.store.jobs,
                self.serial_keys,
                self.jobs_per_replica
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            ),
            result: format!(
                "{} lost, {} jobs run twice, {} overlapping jobs of one PR ({} queued behind a running one), {} duplicate comments, {} duplicate dispatches",
                self.store.lost,
                self.jobs_run_twice,
                self.overlaps,
                self.contended_pairs,
                self.effects.duplicate_comments + self.effects.duplicate_replies,
                self.effects.duplicate_dispatches
            ),
            command: format!("cargo xtask reliability replicas --cycles {}", self.rounds),
            ran_at: String::new(),
            duration_s: self.duration_s,
        }
    }

    pub fn violations(&self) -> Vec<String> {
        let mut v = self.effects.violations();
        v.extend(self.store.violations());
        for (n, what) in [
            (self.jobs_run_twice, "jobs ran more than once"),
            (self.jobs_never_logged, "jobs with no logged run"),
            (self.overlaps, "overlapping runs of one serial key"),
            (self.out_of_order, "jobs of one key ran out of order"),
        ] {
            if n > 0 {
                v.push(format!("{n} {what}"));
            }
        }
        if !self.deliveries.pending.is_empty() {
            v.push(format!(
                "{} deliveries never acknowledged",
                self.deliveries.pending.len()
            ));
        }
        v
    }
}

/// The "job ran" records of one server's JSON log.
pub(crate) fn job_runs(log: &str, replica: usize) -> Vec<JobRun> {
    log.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["fields"]["message"] == "job ran")
        .filter_map(|v| {
            let f = &v["fields"];
            Some(JobRun {
                job: f["job_id"].as_i64()?,
                serial_key: f["serial_key"].as_str()?.to_owned(),
                started_ms: f["started_ms"].as_i64()?,
                finished_ms: f["finished_ms"].as_i64()?,
                replica,
            })
        })
        .collect()
}

/// How the runs of each serial key relate, pair by pair (in start order).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Serialization {
    pub keys: usize,
    /// The later job started before the earlier one finished.
    pub overlaps: usize,
    /// The later job is older in the queue.
    pub out_of_order: usize,
    /// The later job was queued before the earlier one finished: it had to
    /// wait for it (what makes the check meaningful).
    pub contended: usize,
}

/// How long a job must have been queued before a later job of its key may
/// not start ahead of it (covers the commit of a concurrent enqueue).
const OVERTAKE_MARGIN_MS: i64 = 1_000;

/// `created`: each job's enqueue time, from the store.
pub(crate) fn serialization(runs: &[JobRun], created: &HashMap<i64, i64>) -> Serialization {
    let mut by_key: BTreeMap<&str, Vec<&JobRun>> = BTreeMap::new();
    for r in runs.iter().filter(|r| !r.serial_key.is_empty()) {
        by_key.entry(&r.serial_key).or_default().push(r);
    }
    let mut s = Serialization {
        keys: by_key.len(),
        ..Serialization::default()
    };
    for list in by_key.values_mut() {
        list.sort_by_key(|r| (r.started_ms, r.job));
        for pair in list.windows(2) {
            if pair[1].started_ms < pair[0].finished_ms {
                s.overlaps += 1;
            }
            // Job ids are drawn before their transaction commits, so two
            // deliveries enqueued together by two replicas may become
            // visible in either order; a job was overtaken only if it had
            // been queued for a while when the later one started.
            if pair[1].job < pair[0].job
                && created
                    .get(&pair[1].job)
                    .is_some_and(|c| *c + OVERTAKE_MARGIN_MS < pair[0].started_ms)
            {
                s.out_of_order += 1;
            }
            if created
                .get(&pair[1].job)
                .is_some_and(|c| *c < pair[0].finished_ms)
            {
                s.contended += 1;
            }
        }
    }
    s
}

pub async fn run(o: &ReplicaOpts) -> anyhow::Result<ReplicaReport> {
    let db = Backend::Postgres.fresh_db(&o.pg_url).await?;
    let result = run_on(o, &db.url, &db.store).await;
    db.cleanup().await;
    result
}

async fn run_on(o: &ReplicaOpts, db_url: &str, store: &Store) -> anyhow::Result<ReplicaReport> {
    let started = Instant::now();
    let dir = tempfile::tempdir()?;
    let (sandbox, world, spec) = start_world(&o.bin, o.seed, dir.path(), db_url).await?;
    let mut servers = Vec::new();
    for i in 0..REPLICAS {
        servers.push(ServerProc::start(&spec, Some(&format!("replica-{i}.log"))).await?);
    }
    let urls: Vec<String> = servers.iter().map(ServerProc::webhook_url).collect();
    let mut rng = StdRng::seed_from_u64(o.seed);
    let mut exp = Expected {
        use_run: world.use_run,
        ..Expected::default()
    };
    let mut prs = vec![world.use_pr];
    let mut d = Deliveries::default();
    // Activity in bursts, so several PRs have work queued at once.
    for round in 0..o.rounds {
        activity(&sandbox, &mut rng, &world, &mut prs, &mut exp, round).await?;
    }
    d.drain(&sandbox, &urls, store, 6).await?;
    let effects = sandbox.effects().await?;
    let repo = format!("{}/{}", world.owner, world.repo);
    let store_counts = effects::stored(store, d.acknowledged_ids()).await?;
    let effect_counts = effects::count(&effects, &exp, store, &repo).await?;
    let mut runs = Vec::new();
    for (i, s) in servers.into_iter().enumerate() {
        let log = s.log.clone().context("replica log")?;
        s.terminate().await?;
        let text = std::fs::read_to_string(&log)?;
        runs.extend(job_runs(&text, i));
    }
    let mut per_job: BTreeMap<i64, usize> = BTreeMap::new();
    for r in &runs {
        *per_job.entry(r.job).or_default() += 1;
    }
    let jobs = store.jobs(None, i64::MAX / 2).await?;
    let jobs_run_twice = jobs
        .iter()
        .filter(|j| j.attempts != 1 || per_job.get(&j.id).is_some_and(|n| *n > 1))
        .count();
    let jobs_never_logged = jobs.iter().filter(|j| !per_job.contains_key(&j.id)).count();
    let mut jobs_per_replica = vec![0; REPLICAS];
    for r in &runs {
        jobs_per_replica[r.replica] += 1;
    }
    let created: HashMap<i64, i64> = jobs.iter().map(|j| (j.id, j.created_at)).collect();
    let serial = serialization(&runs, &created);
    Ok(ReplicaReport {
        replicas: REPLICAS,
        rounds: o.rounds,
        deliveries: d,
        jobs_per_replica,
        job_runs: runs.len(),
        jobs_run_twice,
        jobs_never_logged,
        serial_keys: serial.keys,
        overlaps: serial.overlaps,
        out_of_order: serial.out_of_order,
        contended_pairs: serial.contended,
        store: store_counts,
        effects: effect_counts,
        duration_s: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(job: i64, key: &str, start: i64, end: i64) -> JobRun {
        JobRun {
            job,
            serial_key: key.into(),
            started_ms: start,
            finished_ms: end,
            replica: 0,
        }
    }

    #[test]
    fn overlapping_and_reordered_runs_of_one_key_are_counted() {
        let runs = [
            run(1, "a", 0, 10),
            run(2, "a", 10, 20),
            run(3, "b", 5, 30),
            run(5, "b", 29, 40),
            run(4, "b", 45, 50),
            run(6, "", 0, 100),
            // Job 7 waited in the queue for 1.5 s and was overtaken by 8.
            run(8, "c", 2000, 2100),
            run(7, "c", 2200, 2300),
        ];
        // Job 4 was enqueued after job 5 started: not overtaken.
        let created = HashMap::from([(2, 5), (5, 1), (4, 42), (7, 500)]);
        assert_eq!(
            serialization(&runs, &created),
            Serialization {
                keys: 3,
                overlaps: 1,
                out_of_order: 1,
                contended: 3
            }
        );
    }

    #[test]
    fn reads_the_queue_records_of_a_json_log() {
        let log = concat!(
            r#"{"timestamp":"t","level":"DEBUG","fields":{"message":"job ran","job_id":7,"serial_key":"o/r#3","started_ms":100,"finished_ms":180},"target":"sweepgate::queue"}"#,
            "\n",
            r#"{"timestamp":"t","level":"WARN","fields":{"message":"job failed"},"target":"sweepgate::queue"}"#,
            "\nnot json\n"
        );
        assert_eq!(
            job_runs(log, 2),
            vec![JobRun {
                replica: 2,
                ..run(7, "o/r#3", 100, 180)
            }]
        );
    }
}
