//! The durable queue on both back ends: leases, reclaim, retries with
//! backoff, dead letters, per-PR serialization across consumers, shutdown.
use crate::common;

use async_trait::async_trait;
use common::{TestDb, on_both};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use sweepgate::queue::{JobFailure, JobRunner, QueueConfig, WorkerPool};
use sweepgate::store::{self, JobRow, JobState, NewJob, SqliteSync, Store, now_ms};
use sweepgate_core::ids::JobId;
use tokio::sync::Notify;

fn job(kind: &str, key: Option<&str>, payload: &str) -> NewJob {
    NewJob {
        kind: kind.into(),
        serial_key: key.map(String::from),
        payload: payload.into(),
        max_attempts: 3,
        run_after: 0,
    }
}

fn fast() -> QueueConfig {
    QueueConfig {
        workers: 3,
        lease: Duration::from_millis(600),
        poll: Duration::from_millis(20),
        max_attempts: 3,
        backoff_base: Duration::from_millis(10),
        backoff_max: Duration::from_millis(40),
        drain: Duration::from_millis(200),
    }
}

/// A pool of `cfg`'s workers over `s` running `runner`.
fn pool(s: &Store, runner: Arc<Scripted>, cfg: QueueConfig) -> WorkerPool {
    WorkerPool::start(s.clone(), runner, cfg, Arc::new(Notify::new()), "t")
}

async fn wait_for<F: Fn(&JobRow) -> bool>(store: &Store, id: JobId, pred: F) -> JobRow {
    let start = Instant::now();
    loop {
        let row = store.job(id).await.unwrap().unwrap();
        if pred(&row) {
            return row;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "job never reached the state: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Counts runs per job and fails according to a script.
#[derive(Default)]
struct Scripted {
    runs: Mutex<HashMap<i64, usize>>,
    /// Transient failures before success, per payload.
    fail_first: HashMap<String, usize>,
    permanent: Vec<String>,
    retry_after: Option<Duration>,
    block: bool,
    /// Payloads whose every run panics.
    panics: Vec<String>,
}

#[async_trait]
impl JobRunner for Scripted {
    async fn run(&self, _store: &Store, job: &JobRow) -> Result<String, JobFailure> {
        let n = {
            let mut runs = self.runs.lock().unwrap();
            let n = runs.entry(job.id).or_default();
            *n += 1;
            *n
        };
        if self.block {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        if self.panics.contains(&job.payload) {
            panic!("index out of bounds in {}", job.payload);
        }
        if self.permanent.contains(&job.payload) {
            return Err(JobFailure::permanent("cannot ever work"));
        }
        if n <= self.fail_first.get(&job.payload).copied().unwrap_or(0) {
            return Err(JobFailure::transient(
                format!("flaky {n}"),
                self.retry_after,
            ));
        }
        Ok(format!("ok after {n}"))
    }
}

impl Scripted {
    fn runs(&self, id: JobId) -> usize {
        self.runs
            .lock()
            .unwrap()
            .get(&(id.0 as i64))
            .copied()
            .unwrap_or(0)
    }
}

#[tokio::test]
async fn a_lost_lease_is_reclaimed_and_the_job_completes_exactly_once() {
    on_both(|db: TestDb| async move {
        let s = db.store.clone();
        let id = s
            .enqueue(&job("k", Some("o/r#1"), "p"), now_ms())
            .await
            .unwrap();
        // A worker claims it and dies without a word.
        let crashed = s
            .claim("crashed", now_ms(), Duration::from_millis(300))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(crashed.job.id, id.0 as i64);
        // While the lease holds, nobody else gets it.
        assert!(
            s.claim("other", now_ms(), Duration::from_secs(5))
                .await
                .unwrap()
                .is_none()
        );

        let runner = Arc::new(Scripted::default());
        let pool = WorkerPool::start(
            s.clone(),
            runner.clone(),
            fast(),
            Arc::new(Notify::new()),
            "t",
        );
        let row = wait_for(&s, id, |r| r.state == "done").await;
        pool.shutdown().await;
        assert_eq!(runner.runs(id), 1, "{}", db.name);
        assert_eq!(row.attempts, 2);
        assert_eq!(row.outcome.as_deref(), Some("ok after 1"));
        // The crashed worker's late answer is refused.
        assert!(!s.complete(&crashed, now_ms(), "late").await.unwrap());
        assert_eq!(
            s.job(id).await.unwrap().unwrap().outcome.as_deref(),
            Some("ok after 1")
        );
        db
    })
    .await;
}

#[tokio::test]
async fn transient_failures_retry_with_backoff_then_succeed() {
    on_both(|db: TestDb| async move {
        let s = db.store.clone();
        let id = s.enqueue(&job("k", None, "flaky"), now_ms()).await.unwrap();
        let runner = Arc::new(Scripted {
            fail_first: HashMap::from([("flaky".to_string(), 2)]),
            ..Scripted::default()
        });
        let pool = WorkerPool::start(
            s.clone(),
            runner.clone(),
            fast(),
            Arc::new(Notify::new()),
            "t",
        );
        let row = wait_for(&s, id, |r| r.state == "done").await;
        pool.shutdown().await;
        assert_eq!(row.attempts, 3);
        assert_eq!(runner.runs(id), 3);
        assert_eq!(row.last_error.as_deref(), Some("flaky 2"));
        db
    })
    .await;
}

#[tokio::test]
async fn retry_after_is_honoured() {
    on_both(|db: TestDb| async move {
        let s = db.store.clone();
        let id = s
            .enqueue(&job("k", None, "limited"), now_ms())
            .await
            .unwrap();
        let runner = Arc::new(Scripted {
            fail_first: HashMap::from([("limited".to_string(), 1)]),
            retry_after: Some(Duration::from_secs(30)),
            ..Scripted::default()
        });
        let before = now_ms();
        let pool = WorkerPool::start(
            s.clone(),
            runner.clone(),
            fast(),
            Arc::new(Notify::new()),
            "t",
        );
        let row = wait_for(&s, id, |r| r.state == "pending" && r.attempts == 1).await;
        pool.shutdown().await;
        assert!(
            row.run_after >= before + 30_000,
            "run_after {} too soon",
            row.run_after - before
        );
        db
    })
    .await;
}

#[tokio::test]
async fn exhausted_and_permanent_failures_are_dead_lettered_and_can_be_retried() {
    on_both(|db: TestDb| async move {
        let s = db.store.clone();
        let always = s
            .enqueue(&job("k", None, "always"), now_ms())
            .await
            .unwrap();
        let perm = s.enqueue(&job("k", None, "perm"), now_ms()).await.unwrap();
        let runner = Arc::new(Scripted {
            fail_first: HashMap::from([("always".to_string(), 3)]),
            permanent: vec!["perm".into()],
            ..Scripted::default()
        });
        let pool = WorkerPool::start(
            s.clone(),
            runner.clone(),
            fast(),
            Arc::new(Notify::new()),
            "t",
        );
        let dead = wait_for(&s, always, |r| r.state == "dead").await;
        let dead_perm = wait_for(&s, perm, |r| r.state == "dead").await;
        assert_eq!(dead.attempts, 3);
        assert_eq!(dead.last_error.as_deref(), Some("flaky 3"));
        assert_eq!(dead_perm.attempts, 1);
        assert_eq!(dead_perm.last_error.as_deref(), Some("cannot ever work"));
        assert_eq!(s.jobs(Some(JobState::Dead), 10).await.unwrap().len(), 2);
        // An operator retries it; the fourth run succeeds.
        assert!(s.retry_dead(always, now_ms()).await.unwrap());
        let row = wait_for(&s, always, |r| r.state == "done").await;
        pool.shutdown().await;
        assert_eq!(runner.runs(always), 4);
        assert_eq!(row.attempts, 1);
        assert!(
            !s.retry_dead(always, now_ms()).await.unwrap(),
            "only dead jobs are retried"
        );
        db
    })
    .await;
}

#[tokio::test]
async fn shutdown_gives_back_unfinished_jobs() {
    on_both(|db: TestDb| async move {
        let s = db.store.clone();
        let id = s.enqueue(&job("k", None, "slow"), now_ms()).await.unwrap();
        let runner = Arc::new(Scripted {
            block: true,
            ..Scripted::default()
        });
        let pool = WorkerPool::start(
            s.clone(),
            runner.clone(),
            fast(),
            Arc::new(Notify::new()),
            "t",
        );
        wait_for(&s, id, |r| r.state == "running").await;
        pool.shutdown().await;
        let row = s.job(id).await.unwrap().unwrap();
        assert_eq!(row.state, "pending");
        assert_eq!(row.attempts, 0, "a released attempt does not count");
        db
    })
    .await;
}

#[tokio::test]
async fn a_job_whose_worker_crashed_on_every_attempt_is_dead_lettered_not_run_again() {
    on_both(|db: TestDb| async move {
        let s = db.store.clone();
        let poison = s
            .enqueue(&job("k", Some("o/r#9"), "poison"), now_ms())
            .await
            .unwrap();
        let next = s
            .enqueue(&job("k", Some("o/r#9"), "next"), now_ms())
            .await
            .unwrap();
        // Three processes took it and died with it (`max_attempts` is 3).
        for _ in 0..3 {
            let c = s
                .claim("doomed", now_ms(), Duration::from_millis(1))
                .await
                .unwrap()
                .expect("the job is claimable again after its lease expired");
            assert_eq!(c.job.id, poison.0 as i64);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let runner = Arc::new(Scripted::default());
        let workers = pool(&s, runner.clone(), fast());
        let dead = wait_for(&s, poison, |r| r.state == "dead").await;
        // The PR's next job is not stuck behind it.
        wait_for(&s, next, |r| r.state == "done").await;
        workers.shutdown().await;
        assert_eq!(runner.runs(poison), 0, "{}: a fourth run", db.name);
        assert_eq!(dead.attempts, 3);
        assert_eq!(
            dead.last_error.as_deref(),
            Some("the worker crashed on it (the lease of attempt 3 of 3 expired)")
        );
        db
    })
    .await;
}

#[tokio::test]
async fn a_panicking_job_is_retried_then_dead_lettered_and_the_worker_goes_on() {
    on_both(|db: TestDb| async move {
        let s = db.store.clone();
        let boom = s.enqueue(&job("k", None, "boom"), now_ms()).await.unwrap();
        let runner = Arc::new(Scripted {
            panics: vec!["boom".into()],
            ..Scripted::default()
        });
        // One worker: if the panic ended it, nothing after would run.
        let workers = pool(
            &s,
            runner.clone(),
            QueueConfig {
                workers: 1,
                ..fast()
            },
        );
        let dead = wait_for(&s, boom, |r| r.state == "dead").await;
        let after = s.enqueue(&job("k", None, "fine"), now_ms()).await.unwrap();
        let done = wait_for(&s, after, |r| r.state == "done").await;
        workers.shutdown().await;
        assert_eq!(runner.runs(boom), 3, "{}", db.name);
        assert_eq!(dead.attempts, 3);
        assert_eq!(
            dead.last_error.as_deref(),
            Some("the job panicked: index out of bounds in boom")
        );
        assert_eq!(done.outcome.as_deref(), Some("ok after 1"));
        db
    })
    .await;
}

/// Records when each job of each PR ran, to find overlaps.
#[derive(Default)]
struct Timeline {
    spans: Mutex<Vec<(String, i64, Instant, Instant)>>,
    active: Mutex<HashMap<String, usize>>,
    overlaps: AtomicUsize,
}

#[async_trait]
impl JobRunner for Timeline {
    async fn run(&self, _store: &Store, job: &JobRow) -> Result<String, JobFailure> {
        let key = job.serial_key.clone().unwrap_or_default();
        {
            let mut active = self.active.lock().unwrap();
            let n = active.entry(key.clone()).or_default();
            *n += 1;
            if *n > 1 {
                self.overlaps.fetch_add(1, Ordering::SeqCst);
            }
        }
        let start = Instant::now();
        tokio::time::sleep(Duration::from_millis(5 + (job.id % 4) as u64 * 3)).await;
        let end = Instant::now();
        *self.active.lock().unwrap().get_mut(&key).unwrap() -= 1;
        self.spans.lock().unwrap().push((key, job.id, start, end));
        Ok("ran".into())
    }
}

#[tokio::test]
async fn two_consumers_never_overlap_one_pr_and_never_run_a_job_twice() {
    on_both(|db: TestDb| async move {
        let s = db.store.clone();
        // A second consumer with its own connection pool, as another replica.
        let s2 = store::open(&db.url, SqliteSync::Normal).await.unwrap();
        let mut ids = Vec::new();
        for i in 0..60 {
            let key = format!("o/r#{}", i % 6);
            ids.push(
                s.enqueue(&job("k", Some(&key), &i.to_string()), now_ms())
                    .await
                    .unwrap(),
            );
        }
        let timeline = Arc::new(Timeline::default());
        let cfg = QueueConfig {
            workers: 4,
            ..fast()
        };
        let a = WorkerPool::start(
            s.clone(),
            timeline.clone(),
            cfg.clone(),
            Arc::new(Notify::new()),
            "a",
        );
        let b = WorkerPool::start(
            s2.clone(),
            timeline.clone(),
            cfg,
            Arc::new(Notify::new()),
            "b",
        );
        for id in &ids {
            wait_for(&s, *id, |r| r.state == "done").await;
        }
        a.shutdown().await;
        b.shutdown().await;
        let spans = timeline.spans.lock().unwrap().clone();
        assert_eq!(spans.len(), 60, "{}: every job ran exactly once", db.name);
        let mut seen: Vec<i64> = spans.iter().map(|s| s.1).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 60);
        assert_eq!(timeline.overlaps.load(Ordering::SeqCst), 0, "{}", db.name);
        // Per PR, jobs ran in the order they arrived.
        let mut by_key: HashMap<&str, Vec<(Instant, i64)>> = HashMap::new();
        for (k, id, start, _) in &spans {
            by_key.entry(k).or_default().push((*start, *id));
        }
        for (k, mut runs) in by_key {
            runs.sort();
            let order: Vec<i64> = runs.iter().map(|r| r.1).collect();
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(order, sorted, "{k} ran out of order");
        }
        db
    })
    .await;
}

/// Sets a job's state behind the store's back (what another replica's
/// commits look like from here).
async fn force_state(db: &TestDb, id: JobId, state: &str, lease_until: i64) {
    let sql = format!(
        "UPDATE jobs SET state = '{state}', lease_until = {lease_until} WHERE id = {}",
        id.0
    );
    db.execute(&[&sql]).await;
}

#[tokio::test]
async fn a_job_visible_after_a_later_one_of_its_pr_started_waits_for_it() {
    // On PostgreSQL with replicas, job ids are drawn before their
    // transactions commit: the later job of a PR can be claimed and running
    // when the earlier one becomes visible. The earlier one must wait.
    on_both(|db: TestDb| async move {
        let s = db.store.clone();
        let early = s
            .enqueue(&job("k", Some("o/r#11"), "early"), now_ms())
            .await
            .unwrap();
        let late = s
            .enqueue(&job("k", Some("o/r#11"), "late"), now_ms())
            .await
            .unwrap();
        force_state(&db, late, "running", now_ms() + 60_000).await;
        let c = s
            .claim("w", now_ms(), Duration::from_secs(60))
            .await
            .unwrap();
        assert!(
            c.is_none(),
            "{}: claimed {:?} while a job of its PR runs",
            db.name,
            c.map(|c| c.job.id)
        );
        force_state(&db, late, "done", 0).await;
        let c = s
            .claim("w", now_ms(), Duration::from_secs(60))
            .await
            .unwrap()
            .expect("claimable once the running job is done");
        assert_eq!(c.job.id, early.0 as i64, "{}", db.name);
        db
    })
    .await;
}
