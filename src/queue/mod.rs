//! The durable job queue's policy: workers that claim jobs with a lease, keep
//! the lease alive while working, retry with exponential backoff and jitter
//! (never sooner than a `Retry-After` the error carried), dead-letter after
//! the last attempt, and on shutdown finish or give back what they hold.
//! A job that panics fails like any other attempt (its worker goes on); a
//! job whose worker died on every attempt (a crash of the process, each
//! time) is dead-lettered when its last lease expires, never taken again.
//! The SQL lives in `crate::store`; event semantics live in `crate::events`.
use crate::store::{AfterFailure, Claimed, JobRow, Store, now_ms};
use async_trait::async_trait;
use futures::FutureExt;
use rand::Rng;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;

/// Runs one job. Implemented by the event router.
#[async_trait]
pub trait JobRunner: Send + Sync + 'static {
    /// Returns the outcome recorded on the job.
    async fn run(&self, store: &Store, job: &JobRow) -> Result<String, JobFailure>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFailure {
    pub message: String,
    /// Do not retry before this long (from `Retry-After` or a rate-limit reset).
    pub retry_after: Option<Duration>,
    pub permanent: bool,
}

impl JobFailure {
    pub fn transient(message: impl Into<String>, retry_after: Option<Duration>) -> Self {
        Self {
            message: message.into(),
            retry_after,
            permanent: false,
        }
    }

    pub fn permanent(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retry_after: None,
            permanent: true,
        }
    }
}

#[derive(Debug, Clone)]
pub struct QueueConfig {
    pub workers: usize,
    pub lease: Duration,
    /// How often an idle worker looks for work when nobody wakes it (other
    /// replicas, retries coming due).
    pub poll: Duration,
    pub max_attempts: u32,
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// How long shutdown waits for in-flight jobs before giving them back.
    pub drain: Duration,
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            workers: 4,
            lease: Duration::from_secs(60),
            poll: Duration::from_millis(500),
            max_attempts: 8,
            backoff_base: Duration::from_secs(2),
            backoff_max: Duration::from_secs(600),
            drain: Duration::from_secs(20),
        }
    }
}

/// Delay before attempt `attempt + 1`: exponential with full jitter in the
/// upper half, capped, and never below `retry_after`.
pub(crate) fn backoff(cfg: &QueueConfig, attempt: i64, retry_after: Option<Duration>) -> Duration {
    let exp = attempt.clamp(1, 30) as u32 - 1;
    let raw = cfg
        .backoff_base
        .saturating_mul(2u32.saturating_pow(exp))
        .min(cfg.backoff_max);
    let half = raw / 2;
    let jitter = rand::rng().random_range(0..=half.as_millis().max(1) as u64);
    let delay = half + Duration::from_millis(jitter);
    delay.max(retry_after.unwrap_or_default())
}

/// A running pool of workers.
pub struct WorkerPool {
    shutdown: watch::Sender<bool>,
    tasks: JoinSet<()>,
    wake: Arc<Notify>,
}

impl WorkerPool {
    /// Starts `cfg.workers` workers. `wake` is notified by the intake when it
    /// stores a job, so work starts without waiting for the next poll.
    pub fn start(
        store: Store,
        runner: Arc<dyn JobRunner>,
        cfg: QueueConfig,
        wake: Arc<Notify>,
        name: &str,
    ) -> Self {
        let (tx, rx) = watch::channel(false);
        let mut tasks = JoinSet::new();
        for i in 0..cfg.workers.max(1) {
            let worker = Worker {
                id: format!("{name}-{i}-{:08x}", rand::random::<u32>()),
                store: store.clone(),
                runner: runner.clone(),
                cfg: cfg.clone(),
                wake: wake.clone(),
                shutdown: rx.clone(),
            };
            tasks.spawn(worker.run());
        }
        Self {
            shutdown: tx,
            tasks,
            wake,
        }
    }

    /// Stops claiming, lets in-flight jobs finish within the drain time and
    /// gives back the rest, then returns.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        self.wake.notify_waiters();
        while self.tasks.join_next().await.is_some() {}
    }
}

struct Worker {
    id: String,
    store: Store,
    runner: Arc<dyn JobRunner>,
    cfg: QueueConfig,
    wake: Arc<Notify>,
    shutdown: watch::Receiver<bool>,
}

impl Worker {
    async fn run(mut self) {
        let mut buried_at: Option<tokio::time::Instant> = None;
        loop {
            if *self.shutdown.borrow() {
                return;
            }
            // Jobs that crashed their worker on every attempt are never
            // claimed again; dead-letter them so their PR's later jobs run.
            if buried_at.is_none_or(|t| t.elapsed() >= self.cfg.poll) {
                buried_at = Some(tokio::time::Instant::now());
                match self.store.bury_crashed(now_ms()).await {
                    Ok(0) => {}
                    Ok(n) => {
                        tracing::error!(
                            jobs = n,
                            "dead-lettered jobs whose worker crashed on every attempt"
                        );
                        crate::telemetry::jobs_crashed(n);
                    }
                    Err(e) => {
                        tracing::warn!(worker = %self.id, error = %e, "burying crashed jobs failed")
                    }
                }
            }
            match self.store.claim(&self.id, now_ms(), self.cfg.lease).await {
                Ok(Some(claimed)) => {
                    // Another job may be waiting: let a sibling look too.
                    self.wake.notify_one();
                    self.work(claimed).await;
                }
                Ok(None) => self.idle().await,
                Err(e) => {
                    tracing::warn!(worker = %self.id, error = %e, "claim failed");
                    self.idle().await;
                }
            }
        }
    }

    async fn idle(&mut self) {
        tokio::select! {
            _ = self.wake.notified() => {}
            _ = tokio::time::sleep(self.cfg.poll) => {}
            _ = self.shutdown.changed() => {}
        }
    }

    async fn work(&mut self, claimed: Claimed) {
        // A guard entered across awaits would tag other tasks' logs on this
        // thread; instrumenting the future keeps the span to this job.
        let span = tracing::info_span!(
            "job",
            job = claimed.job.id,
            kind = %claimed.job.kind,
            delivery = claimed.job.delivery_id.as_deref().unwrap_or(""),
            serial = claimed.job.serial_key.as_deref().unwrap_or(""),
            attempt = claimed.job.attempts,
        );
        tracing::Instrument::instrument(self.work_in_span(claimed), span).await
    }

    async fn work_in_span(&mut self, claimed: Claimed) {
        let started_ms = now_ms();
        // A panic fails this attempt only: the worker records it and goes on.
        let run = AssertUnwindSafe(self.runner.run(&self.store, &claimed.job))
            .catch_unwind()
            .map(|r| r.unwrap_or_else(|panic| Err(panicked(panic.as_ref()))));
        tokio::pin!(run);
        let mut heartbeat = tokio::time::interval(self.cfg.lease / 3);
        heartbeat.tick().await;
        let mut draining_since: Option<tokio::time::Instant> = None;
        let result = loop {
            tokio::select! {
                r = &mut run => break Some(r),
                _ = heartbeat.tick() => {
                    let until = now_ms() + self.cfg.lease.as_millis() as i64;
                    match self.store.extend_lease(&claimed, until).await {
                        Ok(true) => {}
                        Ok(false) => {
                            tracing::warn!("lease lost; another worker owns the job now");
                            break None;
                        }
                        Err(e) => tracing::warn!(error = %e, "lease extension failed"),
                    }
                    if let Some(t) = draining_since
                        && t.elapsed() >= self.cfg.drain
                    {
                        break None;
                    }
                }
                _ = self.shutdown.changed(), if draining_since.is_none() => {
                    draining_since = Some(tokio::time::Instant::now());
                    heartbeat = tokio::time::interval(self.cfg.drain.min(self.cfg.lease / 3));
                    heartbeat.tick().await;
                }
            }
        };
        let now = now_ms();
        let seconds = (now - claimed.job.updated_at).max(0) as f64 / 1000.0;
        let Some(result) = result else {
            // Shut down before the job finished, or the lease was lost: give
            // it back (a no-op when someone else holds it now).
            if let Err(e) = self.store.release(&claimed, now).await {
                tracing::warn!(error = %e, "release failed");
            }
            return;
        };
        // Claim and end times: `cargo xtask reliability replicas` reads these
        // from several processes' logs to check per-key serialization.
        tracing::debug!(
            job_id = claimed.job.id,
            serial_key = claimed.job.serial_key.as_deref().unwrap_or(""),
            started_ms,
            finished_ms = now,
            "job ran"
        );
        let label = if result.is_ok() { "done" } else { "failed" };
        crate::telemetry::job_finished(&claimed.job.kind, label, seconds);
        let outcome = match result {
            Ok(outcome) => self.store.complete(&claimed, now, &outcome).await,
            Err(failure) => {
                let next = if failure.permanent || claimed.job.attempts >= claimed.job.max_attempts
                {
                    AfterFailure::Dead
                } else {
                    let delay = backoff(&self.cfg, claimed.job.attempts, failure.retry_after);
                    AfterFailure::RetryAt(now + delay.as_millis() as i64)
                };
                tracing::warn!(error = %failure.message, ?next, "job failed");
                self.store.fail(&claimed, now, &failure.message, next).await
            }
        };
        match outcome {
            Ok(true) => {}
            Ok(false) => tracing::warn!("job finished after its lease was taken over"),
            Err(e) => tracing::warn!(error = %e, "could not record the job's end"),
        }
    }
}

/// A panic as a failed attempt, with its message.
fn panicked(panic: &(dyn std::any::Any + Send)) -> JobFailure {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    JobFailure::transient(format!("the job panicked: {message}"), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_honours_retry_after() {
        let cfg = QueueConfig::default();
        for attempt in 1..12 {
            let d = backoff(&cfg, attempt, None);
            let raw = cfg
                .backoff_base
                .saturating_mul(2u32.pow(attempt as u32 - 1))
                .min(cfg.backoff_max);
            assert!(
                d >= raw / 2 && d <= raw,
                "attempt {attempt}: {d:?} vs {raw:?}"
            );
        }
        let d = backoff(&cfg, 1, Some(Duration::from_secs(90)));
        assert!(d >= Duration::from_secs(90));
    }
}
