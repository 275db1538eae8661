//! The one retry policy for every GitHub call: 5xx, 429, transport errors and
//! rate limits (primary: `x-ratelimit-remaining: 0` until `x-ratelimit-reset`;
//! secondary: 403 with `Retry-After`) are retried in process up to a bound;
//! a wait longer than the bound is handed to the queue instead of blocking a
//! worker.
use async_trait::async_trait;
use http::HeaderMap;
use std::time::Duration;

/// Waits; injectable so tests measure the waits without spending them.
#[async_trait]
pub trait Sleeper: Send + Sync + 'static {
    async fn sleep(&self, d: Duration);
}

pub struct TokioSleeper;

#[async_trait]
impl Sleeper for TokioSleeper {
    async fn sleep(&self, d: Duration) {
        tokio::time::sleep(d).await;
    }
}

#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Attempts per call, the first included.
    pub attempts: u32,
    pub base: Duration,
    /// Longest wait spent in process; a longer one fails the call with its
    /// `retry_after`, so the queue reschedules the job.
    pub max_wait: Duration,
    /// How long one attempt may wait for GitHub to send anything; a silent
    /// connection fails the attempt as a transport error (retried).
    pub read_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            base: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
            read_timeout: Duration::from_secs(30),
        }
    }
}

/// What to do about one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Done,
    RetryAfter(Duration),
    Fail,
}

fn header_u64(h: &HeaderMap, name: &str) -> Option<u64> {
    h.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// How long GitHub asked us to wait, if it did.
pub(crate) fn requested_wait(status: u16, headers: &HeaderMap, now_epoch: u64) -> Option<Duration> {
    if let Some(secs) = header_u64(headers, "retry-after") {
        return Some(Duration::from_secs(secs));
    }
    if (status == 403 || status == 429) && header_u64(headers, "x-ratelimit-remaining") == Some(0) {
        let reset = header_u64(headers, "x-ratelimit-reset")?;
        return Some(Duration::from_secs(reset.saturating_sub(now_epoch).max(1)));
    }
    None
}

impl RetryPolicy {
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        self.base
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)))
    }

    /// Decides after attempt `attempt` (1-based) answered `status`.
    /// `secondary` is true when the body says a secondary rate limit hit.
    pub(crate) fn decide(
        &self,
        attempt: u32,
        status: u16,
        wait: Option<Duration>,
        secondary: bool,
    ) -> Verdict {
        if (200..400).contains(&status) {
            return Verdict::Done;
        }
        let retryable = status >= 500 || status == 429 || wait.is_some() || secondary;
        if !retryable || attempt >= self.attempts {
            return Verdict::Fail;
        }
        let d = wait.unwrap_or_else(|| {
            if secondary {
                // GitHub: wait at least a minute when no Retry-After is given.
                Duration::from_secs(60)
            } else {
                self.backoff(attempt)
            }
        });
        if d > self.max_wait {
            Verdict::Fail
        } else {
            Verdict::RetryAfter(d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn retry_after_and_reset_are_read() {
        assert_eq!(
            requested_wait(403, &headers(&[("retry-after", "7")]), 0),
            Some(Duration::from_secs(7))
        );
        let h = headers(&[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1000"),
        ]);
        assert_eq!(requested_wait(403, &h, 990), Some(Duration::from_secs(10)));
        let h = headers(&[
            ("x-ratelimit-remaining", "5"),
            ("x-ratelimit-reset", "1000"),
        ]);
        assert_eq!(requested_wait(403, &h, 990), None);
    }

    #[test]
    fn decisions() {
        let p = RetryPolicy::default();
        assert_eq!(p.decide(1, 200, None, false), Verdict::Done);
        assert_eq!(p.decide(1, 404, None, false), Verdict::Fail);
        assert_eq!(p.decide(1, 422, None, false), Verdict::Fail);
        assert_eq!(p.decide(1, 502, None, false), Verdict::RetryAfter(p.base));
        assert_eq!(
            p.decide(2, 500, None, false),
            Verdict::RetryAfter(p.base * 2)
        );
        assert_eq!(p.decide(4, 500, None, false), Verdict::Fail);
        let w = Some(Duration::from_secs(3));
        assert_eq!(
            p.decide(1, 403, w, true),
            Verdict::RetryAfter(Duration::from_secs(3))
        );
        assert_eq!(
            p.decide(1, 403, None, true),
            Verdict::RetryAfter(Duration::from_secs(60))
        );
        assert_eq!(
            p.decide(1, 403, Some(Duration::from_secs(3600)), false),
            Verdict::Fail,
            "a long wait goes to the queue"
        );
    }
}
