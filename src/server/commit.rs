//! Group commit of the intake: one writer task takes deliveries from a
//! bounded channel and stores them in batches, one transaction per batch
//! (closed after [`GroupCommit::MAX_BATCH`] items or [`GroupCommit::WINDOW`]
//! after its first). A request waits for its batch's commit before it is
//! answered, so nothing acknowledged is lost to a crash; the durability
//! settings are the store's own.
use crate::store::{BatchItem, Inserted, Store};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, mpsc, oneshot};

/// Why a delivery was not stored; the request is answered 503.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unstored {
    /// The channel is full: too many deliveries at once.
    Busy,
    /// Storage failed (logged by the writer).
    Failed,
}

struct Pending {
    item: BatchItem,
    reply: oneshot::Sender<Result<Inserted, Unstored>>,
}

/// The intake's handle on its writer task; the task ends when the last
/// handle is dropped, after committing what it holds.
#[derive(Clone)]
pub(crate) struct GroupCommit {
    tx: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Items of one transaction at most.
    pub(crate) const MAX_BATCH: usize = 256;
    /// How long a batch stays open for more items after its first.
    pub(crate) const WINDOW: Duration = Duration::from_millis(1);

    /// Starts the writer on the current runtime; `capacity` deliveries may
    /// wait for it, more are refused.
    pub(crate) fn start(store: Store, wake: Arc<Notify>, capacity: usize) -> Self {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        tokio::spawn(writer(store, wake, rx));
        Self { tx }
    }

    /// Stores `item` with its batch; returns once the batch committed.
    pub(crate) async fn store(&self, item: BatchItem) -> Result<Inserted, Unstored> {
        let (reply, answer) = oneshot::channel();
        match self.tx.try_send(Pending { item, reply }) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => return Err(Unstored::Busy),
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(Unstored::Failed),
        }
        // A writer that went away without answering stored nothing for us
        // that we could vouch for.
        answer.await.unwrap_or(Err(Unstored::Failed))
    }
}

async fn writer(store: Store, wake: Arc<Notify>, mut rx: mpsc::Receiver<Pending>) {
    let mut batch: Vec<Pending> = Vec::with_capacity(GroupCommit::MAX_BATCH);
    loop {
        if rx.recv_many(&mut batch, GroupCommit::MAX_BATCH).await == 0 {
            return;
        }
        let close = tokio::time::Instant::now() + GroupCommit::WINDOW;
        while batch.len() < GroupCommit::MAX_BATCH {
            let room = GroupCommit::MAX_BATCH - batch.len();
            tokio::select! {
                n = rx.recv_many(&mut batch, room) => if n == 0 { break },
                _ = tokio::time::sleep_until(close) => break,
            }
        }
        commit(&store, &wake, &mut batch).await;
    }
}

async fn commit(store: &Store, wake: &Notify, batch: &mut Vec<Pending>) {
    let (items, replies): (Vec<BatchItem>, Vec<_>) =
        batch.drain(..).map(|p| (p.item, p.reply)).unzip();
    let results = match store.record_deliveries(&items).await {
        Ok(results) => results,
        Err(e) => {
            tracing::error!(error = %e, deliveries = items.len(),
                "storage failed; the redelivery pass will ask GitHub for these deliveries again");
            // A closed reply is a request that gave up (timed out): a
            // delivery it did not acknowledge, stored or not.
            for reply in replies {
                let _ = reply.send(Err(Unstored::Failed));
            }
            return;
        }
    };
    let mut queued = false;
    for ((item, result), reply) in items.iter().zip(results).zip(replies) {
        let answer = match result {
            Ok(inserted) => {
                queued |= inserted == Inserted::New && item.job.is_some();
                Ok(inserted)
            }
            Err(e) => {
                tracing::error!(error = %e, delivery = %item.delivery.delivery_id.0,
                    "storage failed; the redelivery pass will ask GitHub for this delivery again");
                Err(Unstored::Failed)
            }
        };
        let _ = reply.send(answer);
    }
    if queued {
        wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::server::Secret;
    use crate::server::{AppState, router, signature::sign};
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt;

    fn ping(id: &str) -> Request<Body> {
        let body = br#"{"zen":"z"}"#.to_vec();
        Request::post("/webhook")
            .header("content-type", "application/json")
            .header("x-github-event", "ping")
            .header("x-github-delivery", id)
            .header("x-hub-signature-256", sign("s", &body))
            .body(Body::from(body))
            .unwrap()
    }

    async fn answer(resp: axum::response::Response) -> (StatusCode, serde_json::Value) {
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    /// The test plays the writer: a delivery is answered only when its
    /// batch is, one that finds the queue full is shed, and with no writer
    /// left nothing is acknowledged.
    #[tokio::test]
    async fn answered_after_the_commit_shed_when_the_queue_is_full() {
        let store = crate::store::open("sqlite::memory:", Default::default())
            .await
            .unwrap();
        let mut state = AppState::new(store, vec![Secret::new("s")], Arc::new(Notify::new()));
        let (tx, mut rx) = mpsc::channel(1);
        state.commit = GroupCommit { tx };
        let app = router(state);

        let first = tokio::spawn(app.clone().oneshot(ping("first")));
        while rx.is_empty() {
            tokio::task::yield_now().await;
        }
        let (status, json) = answer(app.clone().oneshot(ping("second")).await.unwrap()).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            json["error"],
            "too many deliveries at once; nothing was stored"
        );

        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(!first.is_finished(), "answered before its commit");
        let pending = rx.recv().await.unwrap();
        assert_eq!(pending.item.delivery.delivery_id.0, "first");
        pending.reply.send(Ok(Inserted::New)).unwrap();
        let (status, json) = answer(first.await.unwrap().unwrap()).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(json["status"], "ignored");

        drop(rx);
        let (status, json) = answer(app.oneshot(ping("third")).await.unwrap()).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            json["error"],
            "storage unavailable; the delivery was not stored"
        );
    }
}
