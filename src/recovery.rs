//! Recovering deliveries GitHub could not hand over. GitHub does not retry
//! a failed App webhook delivery by itself: an answer of 503 (the database
//! was down), a timeout or a crash leaves it failed in the App's delivery
//! log until someone asks again. So at start and then every few minutes
//! this lists the App's recent delivery attempts and asks GitHub to
//! redeliver each delivery none of whose attempts succeeded and that the
//! store does not hold ("automatically redelivering failed deliveries" in
//! GitHub's documentation). Bounded by age, by attempts per delivery and by
//! redeliveries per pass; counted in the metrics. A delivery that arrives
//! twice (two replicas asked) is stored once.
use crate::config::server::RedeliveryConfig;
use crate::github::{GitHub, GitHubError};
use crate::store::{Store, StoreError};
use std::collections::BTreeMap;
use sweepgate_core::ids::DeliveryId;

/// Pages of the delivery log read per pass (100 attempts each).
const MAX_PAGES: usize = 20;
/// Attempts after which a delivery is left alone: it fails for a reason
/// another attempt will not cure.
const MAX_ATTEMPTS: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What one pass found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pass {
    /// Deliveries (by guid) seen in the window.
    pub seen: usize,
    /// Failed on every attempt and not in the store.
    pub missing: usize,
    /// Redeliveries asked for.
    pub requested: usize,
}

/// Whether another attempt can succeed where this answer failed: not for a
/// payload the intake refused as malformed or too large.
fn worth_again(status: u16) -> bool {
    !matches!(status, 400 | 413 | 415 | 422)
}

/// One pass.
pub async fn pass(
    github: &GitHub,
    store: &Store,
    cfg: &RedeliveryConfig,
) -> Result<Pass, RecoveryError> {
    let api = github.app();
    let cutoff = chrono::Utc::now()
        - chrono::Duration::from_std(cfg.max_age).unwrap_or(chrono::Duration::days(1));
    // guid → (attempts, succeeded, newest attempt id, oldest time, last status)
    let mut by_guid: BTreeMap<String, (usize, bool, u64, i64, u16)> = BTreeMap::new();
    let mut next: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let page = api.hook_deliveries(next.as_deref()).await?;
        let mut older = false;
        for d in page.deliveries {
            if d.delivered_at < cutoff {
                older = true;
                continue;
            }
            let e = by_guid
                .entry(d.guid)
                .or_insert((0, false, 0, i64::MAX, d.status_code));
            e.0 += 1;
            e.1 |= (200..300).contains(&d.status_code);
            if d.id > e.2 {
                e.2 = d.id;
                e.4 = d.status_code;
            }
            e.3 = e.3.min(d.delivered_at.timestamp_millis());
        }
        next = page.next;
        if older || next.is_none() {
            break;
        }
    }
    let mut out = Pass {
        seen: by_guid.len(),
        ..Pass::default()
    };
    // Oldest first, so the redelivered work arrives in its order.
    let mut failed: Vec<(i64, String, u64, usize, u16)> = by_guid
        .into_iter()
        .filter(|(_, (_, ok, _, _, _))| !ok)
        .map(|(guid, (n, _, id, at, status))| (at, guid, id, n, status))
        .collect();
    failed.sort();
    for (_, guid, id, attempts, status) in failed {
        if store.delivery(&DeliveryId(guid.clone())).await?.is_some() {
            continue;
        }
        out.missing += 1;
        if attempts >= MAX_ATTEMPTS || !worth_again(status) || out.requested >= cfg.max_per_pass {
            continue;
        }
        api.redeliver(id).await?;
        tracing::info!(delivery = %guid, attempt = id, attempts, "asked GitHub to redeliver a failed delivery");
        out.requested += 1;
    }
    crate::telemetry::redelivery_pass(out.missing, out.requested);
    Ok(out)
}

/// Runs a pass at start and then every `cfg.interval`; `None` when
/// redelivery is off or the credentials are a token (only an App can read
/// its delivery log).
pub fn spawn(
    github: GitHub,
    store: Store,
    cfg: RedeliveryConfig,
) -> Option<tokio::task::JoinHandle<()>> {
    let interval = cfg.interval?;
    if !github.is_app() {
        tracing::info!("failed deliveries are not redelivered: that needs App credentials");
        return None;
    }
    Some(tokio::spawn(async move {
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            match pass(&github, &store, &cfg).await {
                Ok(p) if p.requested > 0 || p.missing > 0 => {
                    tracing::info!(
                        seen = p.seen,
                        missing = p.missing,
                        requested = p.requested,
                        "redelivery pass"
                    )
                }
                Ok(_) => {}
                Err(e) => {
                    crate::telemetry::redelivery_failed();
                    tracing::warn!(error = %e, "redelivery pass failed; trying again at the next one");
                }
            }
        }
    }))
}
