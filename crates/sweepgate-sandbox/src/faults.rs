//! Fault injection: the next N matching calls (or a seeded fraction of
//! them) fail the way GitHub fails — 5xx, secondary rate limits with
//! `Retry-After`, primary rate limits, 429 — or answer slowly, or succeed
//! on the server but lose the response (for idempotency tests).
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// A bare status (500, 502, 503, …) with GitHub's error body.
    Status(u16),
    /// 403 with `Retry-After: secs` and the secondary-rate-limit message.
    SecondaryRateLimit { retry_after: u64 },
    /// 403 with `x-ratelimit-remaining: 0` and a reset `secs` from now.
    PrimaryRateLimit { reset_in: u64 },
    /// 429 with `Retry-After: secs`.
    TooManyRequests { retry_after: u64 },
    /// Answers normally after a delay.
    Delay(Duration),
}

/// One injected fault; build with the constructors and chain the modifiers.
#[derive(Debug, Clone)]
pub struct Fault {
    pub kind: FaultKind,
    pub method: Option<String>,
    /// `*` matches within one path segment, `**` matches any rest.
    pub path: Option<String>,
    /// `None`: unlimited (until cleared).
    pub remaining: Option<u32>,
    pub probability: Option<f64>,
    pub seed: u64,
    /// Run the handler (state changes) and then replace its response.
    pub after_effect: bool,
}

impl Fault {
    fn new(kind: FaultKind) -> Self {
        Fault {
            kind,
            method: None,
            path: None,
            remaining: Some(1),
            probability: None,
            seed: 0,
            after_effect: false,
        }
    }
    pub fn status(code: u16) -> Self {
        Self::new(FaultKind::Status(code))
    }
    pub fn secondary_rate_limit(retry_after: u64) -> Self {
        Self::new(FaultKind::SecondaryRateLimit { retry_after })
    }
    pub fn primary_rate_limit(reset_in: u64) -> Self {
        Self::new(FaultKind::PrimaryRateLimit { reset_in })
    }
    pub fn too_many_requests(retry_after: u64) -> Self {
        Self::new(FaultKind::TooManyRequests { retry_after })
    }
    pub fn delay(d: Duration) -> Self {
        Self::new(FaultKind::Delay(d))
    }
    /// Applies to the next `n` matching calls.
    pub fn times(mut self, n: u32) -> Self {
        self.remaining = Some(n);
        self
    }
    /// Applies until cleared.
    pub fn always(mut self) -> Self {
        self.remaining = None;
        self
    }
    /// Only calls with this method and path pattern.
    pub fn on(mut self, method: &str, path: &str) -> Self {
        self.method = Some(method.to_ascii_uppercase());
        self.path = Some(path.to_string());
        self
    }
    pub fn path(mut self, pattern: &str) -> Self {
        self.path = Some(pattern.to_string());
        self
    }
    /// Each matching call fails with probability `p` (seeded, so a test
    /// sees the same sequence every run); unlimited unless `times` follows.
    pub fn probability(mut self, p: f64, seed: u64) -> Self {
        self.probability = Some(p.clamp(0.0, 1.0));
        self.seed = seed;
        self.remaining = None;
        self
    }
    pub fn after_effect(mut self) -> Self {
        self.after_effect = true;
        self
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        if self.method.as_deref().is_some_and(|m| m != method) {
            return false;
        }
        self.path.as_deref().is_none_or(|p| glob_match(p, path))
    }
}

/// `*` matches within one segment, `**` matches the rest; a pattern that
/// ends with `/` matches as a prefix.
pub(crate) fn glob_match(pattern: &str, path: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('/')
        && !prefix.contains('*')
    {
        return path.starts_with(prefix);
    }
    let pat: Vec<&str> = pattern.trim_matches('/').split('/').collect();
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    seg_match(&pat, &segs)
}

fn seg_match(pat: &[&str], segs: &[&str]) -> bool {
    match pat.first() {
        None => segs.is_empty(),
        Some(&"**") => true,
        Some(p) => match segs.first() {
            None => false,
            Some(s) => part_match(p, s) && seg_match(&pat[1..], &segs[1..]),
        },
    }
}

fn part_match(p: &str, s: &str) -> bool {
    match p.split_once('*') {
        None => p == s,
        Some((pre, post)) => {
            s.len() >= pre.len() + post.len() && s.starts_with(pre) && s.ends_with(post)
        }
    }
}

struct Armed {
    fault: Fault,
    rng: StdRng,
}

#[derive(Default)]
pub(crate) struct Faults {
    armed: Vec<Armed>,
    pub injected: u64,
}

impl Faults {
    pub(crate) fn inject(&mut self, fault: Fault) {
        let rng = StdRng::seed_from_u64(fault.seed);
        self.armed.push(Armed { fault, rng });
    }

    pub(crate) fn clear(&mut self) {
        self.armed.clear();
    }

    /// The fault to apply to this call, if any, consuming one use of it.
    pub(crate) fn take(&mut self, method: &str, path: &str) -> Option<Fault> {
        let mut hit = None;
        for (i, a) in self.armed.iter_mut().enumerate() {
            if !a.fault.matches(method, path) {
                continue;
            }
            if let Some(p) = a.fault.probability
                && !a.rng.random_bool(p)
            {
                continue;
            }
            hit = Some(i);
            break;
        }
        let i = hit?;
        let fault = self.armed[i].fault.clone();
        if let Some(n) = self.armed[i].fault.remaining.as_mut() {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.armed.remove(i);
            }
        }
        self.injected += 1;
        Some(fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(
            "/repos/*/*/issues/*/comments",
            "/repos/o/r/issues/3/comments"
        ));
        assert!(!glob_match(
            "/repos/*/*/issues/*/comments",
            "/repos/o/r/issues/3"
        ));
        assert!(glob_match("/repos/o/**", "/repos/o/r/pulls/1/files"));
        assert!(glob_match("/repos/o/r/", "/repos/o/r/pulls"));
        assert!(glob_match(
            "/app/installations/*/access_tokens",
            "/app/installations/9/access_tokens"
        ));
    }

    #[test]
    fn counted_faults_run_out_and_probability_is_seeded() {
        let mut f = Faults::default();
        f.inject(Fault::status(502).times(2).on("GET", "/x"));
        assert!(f.take("POST", "/x").is_none());
        assert!(f.take("GET", "/x").is_some());
        assert!(f.take("GET", "/x").is_some());
        assert!(f.take("GET", "/x").is_none());

        let pattern = |seed| {
            let mut f = Faults::default();
            f.inject(Fault::status(500).probability(0.2, seed));
            (0..200)
                .map(|_| f.take("GET", "/a").is_some())
                .collect::<Vec<_>>()
        };
        let a = pattern(7);
        assert_eq!(a, pattern(7));
        let hits = a.iter().filter(|h| **h).count();
        assert!((20..=60).contains(&hits), "{hits} of 200");
    }
}
