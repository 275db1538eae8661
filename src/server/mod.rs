//! HTTP intake: the axum router, signature check, body limit, delivery
//! de-duplication and health. It decides nothing about pull requests: a
//! delivery is stored with its job and acknowledged; workers do the rest.
//!
//! Nothing about a request is trusted before its signature: a missing or
//! malformed signature header is refused before the body is read; bodies
//! are read against a deadline and a shared memory budget; deliveries in
//! flight are limited (more are shed with 503, which the redelivery pass
//! recovers); every request has a timeout.
//!
//! Deliveries are stored by one writer task in batches (group commit, see
//! `commit`); a request is answered once its batch committed.
mod commit;
pub mod signature;

use crate::config::server::{IntakeLimits, Secret};
use crate::events::{self, Disposition};
use crate::store::{
    BatchItem, DeliveryBody, DeliveryOutcome, Inserted, NewDelivery, NewJob, Store, now_ms,
};
use crate::telemetry;
use axum::Router;
use axum::body::Body;
use axum::error_handling::HandleErrorLayer;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use commit::{GroupCommit, Unstored};
use http_body_util::BodyExt;
use serde_json::json;
use std::sync::Arc;
use sweepgate_core::ids::DeliveryId;
use tokio::sync::{Notify, Semaphore};
use tower::ServiceBuilder;

/// The answer to a delivery shed under load (GitHub's redelivery recovers it).
const SHED: &str = "too many deliveries at once; nothing was stored";

/// GitHub caps deliveries at 25 MB.
pub(crate) const BODY_LIMIT: usize = 25 * 1024 * 1024;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub secrets: Arc<Vec<Secret>>,
    /// Woken when a job is stored.
    pub wake: Arc<Notify>,
    pub max_attempts: u32,
    intake: IntakeLimits,
    /// Deliveries being handled; more are shed.
    in_flight: Arc<Semaphore>,
    /// KiB of bodies that may be buffered at once.
    buffer: Arc<Semaphore>,
    /// The writer that stores deliveries in batches.
    commit: GroupCommit,
}

impl AppState {
    /// Starts the intake's writer task, so it must be called on a Tokio
    /// runtime.
    pub fn new(store: Store, secrets: Vec<Secret>, wake: Arc<Notify>) -> Self {
        Self {
            commit: GroupCommit::start(store.clone(), wake.clone(), WRITE_QUEUE),
            store,
            secrets: Arc::new(secrets),
            wake,
            max_attempts: crate::queue::QueueConfig::default().max_attempts,
            intake: IntakeLimits::default(),
            in_flight: Arc::new(Semaphore::new(IntakeLimits::default().concurrency)),
            buffer: Arc::new(Semaphore::new(kib(IntakeLimits::default().buffer_bytes))),
        }
    }

    /// With these limits instead of the defaults.
    pub fn with_intake(mut self, intake: IntakeLimits) -> Self {
        self.in_flight = Arc::new(Semaphore::new(intake.concurrency.max(1)));
        self.buffer = Arc::new(Semaphore::new(kib(intake.buffer_bytes)));
        self.intake = intake;
        self
    }
}

/// Deliveries that may wait for the writer. Requests in flight are fewer
/// (`IntakeLimits::concurrency`), so this only bounds memory if that limit is
/// raised past it; a delivery that finds the queue full is shed like one
/// over the concurrency limit.
const WRITE_QUEUE: usize = 1024;

/// A byte count as permits of 1 KiB; one delivery of GitHub's largest size
/// always fits.
fn kib(bytes: u64) -> usize {
    let bytes = bytes.max(BODY_LIMIT as u64);
    usize::try_from(bytes.div_ceil(1024))
        .unwrap_or(usize::MAX)
        .min(Semaphore::MAX_PERMITS)
}

pub fn router(state: AppState) -> Router {
    let shed = ServiceBuilder::new()
        .layer(HandleErrorLayer::new(|_: tower::BoxError| async {
            error(StatusCode::SERVICE_UNAVAILABLE, SHED)
        }))
        .load_shed()
        .layer(tower::limit::GlobalConcurrencyLimitLayer::with_semaphore(
            state.in_flight.clone(),
        ));
    Router::new()
        .route("/webhook", post(webhook).layer(shed))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(state)
}

/// Every request of `app` gets `limits.request_timeout` (then 408), and its
/// body `limits.body_timeout` in total (a sender that trickles is cut off).
pub fn with_timeouts(app: Router, limits: &IntakeLimits) -> Router {
    app.layer(tower_http::timeout::RequestBodyDeadlineLayer::new(
        limits.body_timeout,
    ))
    .layer(tower_http::timeout::TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        limits.request_timeout,
    ))
}

fn reply(status: StatusCode, body: serde_json::Value) -> Response {
    (status, axum::Json(body)).into_response()
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    reply(status, json!({ "error": message.into() }))
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Delivery ids and event names are short printable tokens; anything else is
/// not from GitHub.
fn valid_token(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// The body, within GitHub's size cap and the shared buffer budget (the
/// permit is held until the delivery is answered).
async fn read_body(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Vec<u8>, tokio::sync::OwnedSemaphorePermit), Response> {
    let too_large = || {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is over GitHub's {BODY_LIMIT}-byte cap"),
        )
    };
    // hyper knows the length from `Content-Length`; a body built in
    // process knows its own.
    let declared = axum::body::HttpBody::size_hint(&body).exact().or_else(|| {
        header_str(headers, header::CONTENT_LENGTH.as_str())
            .and_then(|v| v.trim().parse::<u64>().ok())
    });
    if declared.is_some_and(|n| n > BODY_LIMIT as u64) {
        return Err(too_large());
    }
    let reserve = declared.unwrap_or(BODY_LIMIT as u64);
    let permits = u32::try_from(reserve.div_ceil(1024).max(1)).unwrap_or(u32::MAX);
    let Ok(permit) = state.buffer.clone().try_acquire_many_owned(permits) else {
        return Err(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many delivery bytes in flight; nothing was stored",
        ));
    };
    let mut buf = Vec::with_capacity(reserve.min(BODY_LIMIT as u64) as usize);
    let mut body = body;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(error(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the body did not arrive within {} s",
                    state.intake.body_timeout.as_secs()
                ),
            ));
        };
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > BODY_LIMIT {
                return Err(too_large());
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok((buf, permit))
}

async fn webhook(State(state): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let received_at = now_ms();
    // Before a byte of the body: a request with no well-formed signature
    // is not from GitHub.
    let sig = headers.get("x-hub-signature-256").map(|v| v.as_bytes());
    let digest = match signature::digest(sig) {
        Ok(d) => d,
        Err(e) => return error(StatusCode::UNAUTHORIZED, e.to_string()),
    };
    let (body, _permit) = match read_body(&state, &headers, body).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    if let Err(e) = signature::verify_digest(&digest, &body, &state.secrets) {
        return error(StatusCode::UNAUTHORIZED, e.to_string());
    }
    let Some(event) = header_str(&headers, "x-github-event") else {
        return error(StatusCode::BAD_REQUEST, "missing X-GitHub-Event header");
    };
    if !valid_token(event, 64) {
        return error(
            StatusCode::BAD_REQUEST,
            "X-GitHub-Event is not an event name",
        );
    }
    let Some(delivery) = header_str(&headers, "x-github-delivery") else {
        return error(StatusCode::BAD_REQUEST, "missing X-GitHub-Delivery header");
    };
    if !valid_token(delivery, 128) {
        return error(
            StatusCode::BAD_REQUEST,
            "X-GitHub-Delivery is not a delivery id",
        );
    }
    let json_body = match json_payload(&headers, &body) {
        Ok(b) => b,
        Err(resp) => return *resp,
    };
    let (envelope, _) = match events::parse(event, &json_body) {
        Ok(parsed) => parsed,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    // `parse` accepted it as JSON, so it is UTF-8. Compressed here, in the
    // request's task, so the one writer task only writes.
    let body = DeliveryBody::compress(&json_body);
    let delivery_id = DeliveryId(delivery.to_owned());
    let disposition = events::disposition(event, envelope.action.as_deref());
    let new = NewDelivery {
        delivery_id: delivery_id.clone(),
        event: event.to_owned(),
        action: envelope.action.clone(),
        repository: envelope.repository.as_ref().map(|r| r.0.clone()),
        installation_id: envelope.installation_id.map(|i| i as i64),
        pr_number: envelope.pr_number.map(|n| n.0 as i64),
        body,
        received_at,
    };
    let (outcome, job) = match &disposition {
        Disposition::Handle { kind } => (
            DeliveryOutcome::Queued,
            Some(NewJob {
                kind: kind.clone(),
                serial_key: envelope.serial_key(),
                payload: events::JobPayload::delivery(event, envelope.action.as_deref()).to_json(),
                max_attempts: state.max_attempts,
                run_after: received_at,
            }),
        ),
        Disposition::Ignore(reason) => (DeliveryOutcome::Ignored(reason.clone()), None),
    };
    let item = BatchItem {
        delivery: new,
        outcome: outcome.clone(),
        job,
    };
    match state.commit.store(item).await {
        Ok(Inserted::Duplicate) => {
            telemetry::delivery(event, "duplicate");
            reply(
                StatusCode::OK,
                json!({ "status": "duplicate", "delivery": delivery_id.0 }),
            )
        }
        Ok(Inserted::New) => {
            telemetry::delivery(event, outcome.as_str());
            match outcome {
                // The writer woke the workers.
                DeliveryOutcome::Queued => reply(
                    StatusCode::ACCEPTED,
                    json!({ "status": "queued", "delivery": delivery_id.0 }),
                ),
                DeliveryOutcome::Ignored(reason) => reply(
                    StatusCode::OK,
                    json!({ "status": "ignored", "delivery": delivery_id.0, "reason": reason }),
                ),
            }
        }
        Err(Unstored::Busy) => {
            telemetry::delivery(event, "unavailable");
            error(StatusCode::SERVICE_UNAVAILABLE, SHED)
        }
        Err(Unstored::Failed) => {
            telemetry::delivery(event, "unavailable");
            error(
                StatusCode::SERVICE_UNAVAILABLE,
                "storage unavailable; the delivery was not stored",
            )
        }
    }
}

/// GitHub sends JSON, or a form with the JSON in `payload=` when the hook is
/// configured that way; the signature covers the raw body either way.
fn json_payload<'b>(
    headers: &HeaderMap,
    body: &'b [u8],
) -> Result<std::borrow::Cow<'b, [u8]>, Box<Response>> {
    let ctype = header_str(headers, header::CONTENT_TYPE.as_str())
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match ctype.as_str() {
        "application/json" | "" => Ok(body.into()),
        "application/x-www-form-urlencoded" => url::form_urlencoded::parse(body)
            .find(|(k, _)| k == "payload")
            .map(|(_, v)| v.into_owned().into_bytes().into())
            .ok_or_else(|| {
                Box::new(error(
                    StatusCode::BAD_REQUEST,
                    "form body without a `payload` field",
                ))
            }),
        other => Err(Box::new(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("content type `{other}` is not application/json"),
        ))),
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    // Queue depth is read at scrape time, so it is right across replicas.
    if let Ok(c) = state.store.queue_counts().await {
        telemetry::queue_depth("pending", c.pending);
        telemetry::queue_depth("running", c.running);
        telemetry::queue_depth("dead", c.dead);
    }
    match telemetry::handle() {
        Some(h) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            h.render(),
        )
            .into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            "metrics are not exported by this process",
        ),
    }
}

async fn healthz() -> Response {
    reply(StatusCode::OK, json!({ "status": "ok" }))
}

async fn readyz(State(state): State<AppState>) -> Response {
    match state.store.ready().await {
        Ok(true) => reply(StatusCode::OK, json!({ "status": "ready" })),
        Ok(false) => error(StatusCode::SERVICE_UNAVAILABLE, "migrations not applied"),
        Err(e) => error(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
    }
}
