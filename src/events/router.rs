//! The event router: hands each job to the handlers registered for its kind.
//! The queue calls it through `queue::JobRunner` and knows nothing of events.
use super::{Envelope, Event, HandlerId, JobPayload, parse, table};
use crate::queue::{JobFailure, JobRunner};
use crate::store::{JobRow, Store};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;
use sweepgate_core::ids::DeliveryId;

/// What a handler sees of the job it serves.
#[derive(Clone)]
pub struct JobContext {
    pub store: Store,
    pub delivery_id: Option<DeliveryId>,
    pub kind: String,
    pub attempt: i64,
    /// Repository, installation and PR of the delivery.
    pub envelope: Envelope,
}

#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    /// Worth another attempt (GitHub 5xx, rate limit, timeout).
    #[error("{message}")]
    Transient {
        message: String,
        retry_after: Option<Duration>,
    },
    /// Will fail the same way again: dead-letter at once.
    #[error("{0}")]
    Permanent(String),
}

impl From<crate::store::StoreError> for HandlerError {
    fn from(e: crate::store::StoreError) -> Self {
        HandlerError::Transient {
            message: e.to_string(),
            retry_after: None,
        }
    }
}

#[async_trait]
pub trait Handler: Send + Sync {
    /// Who it is in the event table (`table::ROUTES`), which says the
    /// kinds of job it takes.
    fn id(&self) -> HandlerId;
    /// A short name for logs and job outcomes.
    fn name(&self) -> &'static str {
        self.id().name()
    }
    /// Idempotent: a job may run again after a crash or a lost lease.
    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError>;
}

#[derive(Clone, Default)]
pub struct EventRouter {
    handlers: Vec<Arc<dyn Handler>>,
}

impl EventRouter {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn with(mut self, handler: Arc<dyn Handler>) -> Self {
        self.handlers.push(handler);
        self
    }

    /// The handlers registered, in the order they run.
    pub fn handler_ids(&self) -> Vec<HandlerId> {
        self.handlers.iter().map(|h| h.id()).collect()
    }
}

#[async_trait]
impl JobRunner for EventRouter {
    async fn run(&self, store: &Store, job: &JobRow) -> Result<String, JobFailure> {
        let wanted = table::handlers(&job.kind);
        let handlers: Vec<_> = self
            .handlers
            .iter()
            .filter(|h| wanted.contains(&h.id()))
            .collect();
        if handlers.is_empty() {
            return Ok(format!("no handler for `{}`", job.kind));
        }
        let Some(delivery_id) = job.delivery_id.clone().map(DeliveryId) else {
            return Err(JobFailure::permanent("job has no delivery"));
        };
        let body = store
            .delivery_body(&delivery_id)
            .await
            .map_err(|e| JobFailure::transient(e.to_string(), None))?
            .ok_or_else(|| JobFailure::permanent(format!("delivery {delivery_id} is missing")))?;
        let event_name = JobPayload::event_of_job(&job.payload, &job.kind);
        let (envelope, event) = parse(&event_name, body.as_bytes())
            .map_err(|e| JobFailure::permanent(e.to_string()))?;
        let Some(event) = event else {
            return Ok(format!("no typed payload for `{}`", job.kind));
        };
        let ctx = JobContext {
            store: store.clone(),
            delivery_id: Some(delivery_id),
            kind: job.kind.clone(),
            attempt: job.attempts,
            envelope,
        };
        // Every log line of the handlers names what the delivery is about.
        let span = tracing::info_span!(
            "delivery",
            repository = ctx
                .envelope
                .repository
                .as_ref()
                .map_or("", |r| r.0.as_str()),
            pr = ctx.envelope.pr_number.map_or(0, |n| n.0),
            head_sha = event.head_sha().unwrap_or(""),
        );
        let handle_all = async {
            let mut done = Vec::new();
            for h in handlers {
                h.handle(&ctx, &event).await.map_err(|e| match e {
                    HandlerError::Transient {
                        message,
                        retry_after,
                    } => JobFailure::transient(format!("{}: {message}", h.name()), retry_after),
                    HandlerError::Permanent(m) => {
                        JobFailure::permanent(format!("{}: {m}", h.name()))
                    }
                })?;
                done.push(h.name());
            }
            Ok(format!("handled by {}", done.join(", ")))
        };
        tracing::Instrument::instrument(handle_all, span).await
    }
}
