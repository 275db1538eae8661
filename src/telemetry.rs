//! Metrics in Prometheus format. One process-wide recorder, installed on
//! first use; the names are the contract operators build dashboards on.
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

pub(crate) const DELIVERIES: &str = "sweepgate_deliveries_total";
pub(crate) const JOB_SECONDS: &str = "sweepgate_job_duration_seconds";
pub(crate) const JOBS_FINISHED: &str = "sweepgate_jobs_finished_total";
pub(crate) const JOBS_CRASHED: &str = "sweepgate_jobs_crashed_total";
pub(crate) const REDELIVERIES: &str = "sweepgate_redeliveries_requested_total";
pub(crate) const REDELIVERY_PASSES: &str = "sweepgate_redelivery_passes_total";
pub(crate) const DELIVERIES_MISSING: &str = "sweepgate_deliveries_missing";
pub(crate) const QUEUE_DEPTH: &str = "sweepgate_queue_jobs";
pub(crate) const GITHUB_CALLS: &str = "sweepgate_github_requests_total";
pub(crate) const RATE_LIMIT_REMAINING: &str = "sweepgate_github_rate_limit_remaining";
pub(crate) const FOREIGN_EDITS: &str = "sweepgate_foreign_edits_total";
pub(crate) const REFUSED_SIGNOFFS: &str = "sweepgate_refused_signoffs_total";

/// Installs the recorder if no other was installed; `None` when another
/// recorder owns the process (then nothing is exported).
pub fn handle() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    metrics_exporter_prometheus::Matcher::Full(JOB_SECONDS.into()),
                    &[
                        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
                    ],
                )
                .ok()?
                .build_recorder();
            let handle = recorder.handle();
            metrics::set_global_recorder(recorder).ok()?;
            Some(handle)
        })
        .as_ref()
}

pub(crate) fn delivery(event: &str, outcome: &'static str) {
    metrics::counter!(DELIVERIES, "event" => event.to_owned(), "outcome" => outcome).increment(1);
}

pub(crate) fn job_finished(kind: &str, result: &'static str, seconds: f64) {
    metrics::histogram!(JOB_SECONDS, "kind" => kind.to_owned()).record(seconds);
    metrics::counter!(JOBS_FINISHED, "kind" => kind.to_owned(), "result" => result).increment(1);
}

pub(crate) fn jobs_crashed(n: u64) {
    metrics::counter!(JOBS_CRASHED).increment(n);
}

/// A redelivery pass: failed deliveries missing from the store, and the
/// redeliveries it asked for.
pub(crate) fn redelivery_pass(missing: usize, requested: usize) {
    metrics::counter!(REDELIVERY_PASSES, "result" => "ok").increment(1);
    metrics::counter!(REDELIVERIES).increment(requested as u64);
    metrics::gauge!(DELIVERIES_MISSING).set(missing as f64);
}

pub(crate) fn redelivery_failed() {
    metrics::counter!(REDELIVERY_PASSES, "result" => "error").increment(1);
}

pub(crate) fn github_call(method: &str, status: u16) {
    metrics::counter!(GITHUB_CALLS, "method" => method.to_owned(), "status" => status.to_string())
        .increment(1);
}

pub(crate) fn rate_limit_remaining(remaining: u64) {
    metrics::gauge!(RATE_LIMIT_REMAINING).set(remaining as f64);
}

pub(crate) fn queue_depth(state: &'static str, n: i64) {
    metrics::gauge!(QUEUE_DEPTH, "state" => state).set(n as f64);
}

/// An edit of someone else's comment (it ran nothing), by event kind.
pub(crate) fn foreign_edit(kind: &str) {
    metrics::counter!(FOREIGN_EDITS, "kind" => kind.to_owned()).increment(1);
}

/// A sign-off that got no verdict: `ineligible`, `stale` or `capped`.
pub(crate) fn refused_signoff(reason: &'static str) {
    metrics::counter!(REFUSED_SIGNOFFS, "reason" => reason).increment(1);
}
