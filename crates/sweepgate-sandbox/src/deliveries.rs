//! Webhook deliveries: every state change produces one, shaped like the
//! fixtures (with `installation`, `repository`, `sender`), signed with
//! `X-Hub-Signature-256`. They wait in an outbox and are either posted by a
//! background worker to a configured URL (retrying while the receiver is
//! down, or, like GitHub, once: a failed delivery stays failed until it is
//! redelivered through `POST /app/hook/deliveries/{id}/attempts`) or taken
//! by a test that posts them itself. Every attempt the worker makes is in
//! the App's delivery log (`GET /app/hook/deliveries`).
use super::state::{AccountKind, World};
use hmac::{Hmac, Mac};
use rand::Rng;
use serde_json::{Map, Value, json};
use sha2::Sha256;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// One webhook delivery, ready to be posted as GitHub would.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// `X-GitHub-Delivery` (a UUID, as GitHub sends).
    pub id: String,
    pub seq: u64,
    /// `X-GitHub-Event`.
    pub event: String,
    pub action: Option<String>,
    pub payload: Value,
    /// The exact bytes that were signed.
    pub body: Vec<u8>,
    /// `X-Hub-Signature-256`, `sha256=<hex>`.
    pub signature_256: String,
    pub hook_id: u64,
    pub installation_target_id: u64,
    pub attempts: u32,
    pub last_status: Option<u16>,
    pub last_error: Option<String>,
    pub delivered: bool,
}

impl Delivery {
    /// The headers GitHub sends with a delivery.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        vec![
            ("content-type", "application/json".into()),
            ("user-agent", "GitHub-Hookshot/sandbox".into()),
            ("x-github-event", self.event.clone()),
            ("x-github-delivery", self.id.clone()),
            ("x-github-hook-id", self.hook_id.to_string()),
            (
                "x-github-hook-installation-target-id",
                self.installation_target_id.to_string(),
            ),
            (
                "x-github-hook-installation-target-type",
                "integration".into(),
            ),
            ("x-hub-signature-256", self.signature_256.clone()),
        ]
    }

    /// True when the signature matches `secret` (what a receiver checks).
    pub fn verify(&self, secret: &str) -> bool {
        sign(secret, &self.body) == self.signature_256
    }

    /// Posts this delivery to `url`; returns the receiver's status code.
    pub(crate) async fn post(
        &self,
        client: &reqwest::Client,
        url: &str,
    ) -> Result<u16, reqwest::Error> {
        let mut req = client.post(url).body(self.body.clone());
        for (k, v) in self.headers() {
            req = req.header(k, v);
        }
        Ok(req.send().await?.status().as_u16())
    }
}

pub(crate) fn sign(secret: &str, body: &[u8]) -> String {
    // HMAC accepts keys of any length, so this cannot fail in practice.
    match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(mut mac) => {
            mac.update(body);
            format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
        }
        Err(_) => String::new(),
    }
}

/// Where deliveries go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeliveryMode {
    /// Kept for the test to take with `Sandbox::take_deliveries`.
    #[default]
    Queue,
    /// Posted by the background worker to this URL.
    Push(String),
}

/// One attempt to deliver, as GitHub's delivery log lists it.
#[derive(Debug, Clone)]
pub struct HookAttempt {
    pub id: u64,
    /// Index of the delivery in the outbox.
    pub delivery: usize,
    pub delivered_at: chrono::DateTime<chrono::Utc>,
    pub redelivery: bool,
    pub duration: f64,
    /// The receiver's status; 0 when it never answered.
    pub status_code: u16,
}

#[derive(Debug)]
pub(crate) struct Outbox {
    pub all: Vec<Delivery>,
    /// Indices into `all` not yet delivered or taken, oldest first.
    pub pending: VecDeque<usize>,
    pub mode: DeliveryMode,
    pub next_attempt_at: Option<Instant>,
    /// Event names the app is subscribed to; `None` means all.
    pub subscribed: Option<Vec<String>>,
    pub paused: bool,
    /// Retry a failed delivery until the receiver takes it (the sandbox's
    /// convenience); `false` fails it for good after one attempt, as GitHub.
    pub retry_failed: bool,
    /// The delivery log, oldest first.
    pub attempts: Vec<HookAttempt>,
    /// Deliveries queued again by a redelivery request.
    pub redeliveries: std::collections::HashSet<usize>,
}

impl Default for Outbox {
    fn default() -> Self {
        Self {
            all: Vec::new(),
            pending: VecDeque::new(),
            mode: DeliveryMode::default(),
            next_attempt_at: None,
            subscribed: None,
            paused: false,
            retry_failed: true,
            attempts: Vec::new(),
            redeliveries: Default::default(),
        }
    }
}

impl Outbox {
    /// Queues the delivery of log attempt `id` again; `false` when there is
    /// no such attempt.
    pub(crate) fn redeliver(&mut self, id: u64) -> bool {
        let Some(idx) = self
            .attempts
            .iter()
            .find(|a| a.id == id)
            .map(|a| a.delivery)
        else {
            return false;
        };
        if !self.pending.contains(&idx) {
            self.pending.push_back(idx);
        }
        self.redeliveries.insert(idx);
        true
    }
}

impl World {
    /// Records a delivery of `event` for repository `key`, sent by `sender`.
    pub(crate) fn emit(
        &mut self,
        event: &str,
        key: &str,
        sender: &str,
        mut payload: Map<String, Value>,
    ) {
        if let Some(sub) = &self.outbox.subscribed
            && !sub.iter().any(|e| e == event)
        {
            return;
        }
        self.account(sender);
        payload.insert("repository".into(), self.repo_json(key));
        payload.insert("sender".into(), self.user_json(sender));
        if let Some(owner) = self.repos.get(key).map(|r| r.owner.clone())
            && self
                .find_account(&owner)
                .is_some_and(|a| a.kind == AccountKind::Organization)
        {
            payload.insert("organization".into(), self.org_json(&owner));
        }
        if let Some(inst) = self.installation_for_repo(key) {
            let node = base64_node(inst.id);
            payload.insert(
                "installation".into(),
                json!({ "id": inst.id, "node_id": node }),
            );
        }
        let action = payload
            .get("action")
            .and_then(Value::as_str)
            .map(str::to_string);
        let payload = Value::Object(payload);
        let body = serde_json::to_vec(&payload).unwrap_or_default();
        let signature_256 = sign(&self.settings.webhook_secret, &body);
        let id = uuid_like(&mut self.rng);
        let seq = self.outbox.all.len() as u64 + 1;
        self.outbox.all.push(Delivery {
            id,
            seq,
            event: event.to_string(),
            action,
            payload,
            body,
            signature_256,
            hook_id: 500_000_001,
            installation_target_id: self.settings.app.id,
            attempts: 0,
            last_status: None,
            last_error: None,
            delivered: false,
        });
        let idx = self.outbox.all.len() - 1;
        self.outbox.pending.push_back(idx);
    }
}

fn base64_node(id: u64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .encode(format!("MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u{id}"))
}

/// A random (version 4 layout) UUID from the sandbox's seeded RNG.
pub(crate) fn uuid_like(rng: &mut impl Rng) -> String {
    let mut b: [u8; 16] = rng.random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Backoff between attempts at a receiver that is down: 100 ms doubling to 5 s.
fn backoff(attempts: u32) -> Duration {
    let ms = 100u64.saturating_mul(1u64 << attempts.min(6));
    Duration::from_millis(ms.min(5_000))
}

/// The push worker: delivers the outbox in order, one at a time, so the
/// receiver sees events in the order they happened.
pub(crate) async fn run_worker(shared: std::sync::Weak<super::Shared>) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default();
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let job = {
            let w = shared.lock_world();
            let ready = w.outbox.next_attempt_at.is_none_or(|t| Instant::now() >= t);
            match (
                &w.outbox.mode,
                w.outbox.pending.front(),
                ready && !w.outbox.paused,
            ) {
                (DeliveryMode::Push(url), Some(&idx), true) => {
                    w.outbox.all.get(idx).map(|d| (idx, d.clone(), url.clone()))
                }
                _ => None,
            }
        };
        let Some((idx, delivery, url)) = job else {
            continue;
        };
        let started = Instant::now();
        let result = delivery.post(&client, &url).await;
        let mut w = shared.lock_world();
        let attempt = HookAttempt {
            id: 30_000_000_000 + w.outbox.attempts.len() as u64 + 1,
            delivery: idx,
            delivered_at: chrono::Utc::now(),
            redelivery: w.outbox.redeliveries.remove(&idx),
            duration: started.elapsed().as_secs_f64(),
            status_code: *result.as_ref().unwrap_or(&0),
        };
        w.outbox.attempts.push(attempt);
        let retry = w.outbox.retry_failed;
        let attempts = {
            let Some(d) = w.outbox.all.get_mut(idx) else {
                continue;
            };
            d.attempts += 1;
            match &result {
                Ok(status) => {
                    d.last_status = Some(*status);
                    d.last_error = None;
                    d.delivered = (200..300).contains(status);
                }
                Err(e) => {
                    d.last_status = None;
                    d.last_error = Some(e.to_string());
                }
            }
            if d.delivered || !retry {
                None
            } else {
                Some(d.attempts)
            }
        };
        match attempts {
            None => {
                // Only drop it if nobody took it meanwhile.
                if w.outbox.pending.front() == Some(&idx) {
                    w.outbox.pending.pop_front();
                }
                w.outbox.next_attempt_at = None;
            }
            Some(n) => w.outbox.next_attempt_at = Some(Instant::now() + backoff(n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn uuid_has_v4_layout() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let id = uuid_like(&mut rng);
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert_ne!(id, uuid_like(&mut rng));
    }

    #[test]
    fn signature_matches_github_docs_example() {
        // From GitHub's "Validating webhook deliveries" documentation.
        assert_eq!(
            sign("It's a Secret to Everybody", b"Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }
}
