//! HTTP intake: the axum router, signature check, body limit, delivery
//! de-duplication and health. It decides nothing about pull requests: a
//! delivery is stored with its job and acknowledged; workers do the rest.
pub mod signature;

use crate::config::server::Secret;
use crate::events::{self, Disposition};
use crate::store::{DeliveryOutcome, Inserted, NewDelivery, NewJob, Store, StoreError, now_ms};
use crate::telemetry;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use std::sync::Arc;
use sweepgate_core::ids::DeliveryId;
use tokio::sync::Notify;

/// GitHub caps deliveries at 25 MB.
pub(crate) const BODY_LIMIT: usize = 25 * 1024 * 1024;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub secrets: Arc<Vec<Secret>>,
    /// Woken when a job is stored.
    pub wake: Arc<Notify>,
    pub max_attempts: u32,
}

impl AppState {
    pub fn new(store: Store, secrets: Vec<Secret>, wake: Arc<Notify>) -> Self {
        Self {
            store,
            secrets: Arc::new(secrets),
            wake,
            max_attempts: crate::queue::QueueConfig::default().max_attempts,
        }
    }
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/webhook", post(webhook))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
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

async fn webhook(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let received_at = now_ms();
    let sig = headers.get("x-hub-signature-256").map(|v| v.as_bytes());
    if let Err(e) = signature::verify(sig, &body, &state.secrets) {
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
    // `parse` accepted it as JSON, so it is UTF-8.
    let text = String::from_utf8_lossy(&json_body).into_owned();
    let delivery_id = DeliveryId(delivery.to_owned());
    let disposition = events::disposition(event, envelope.action.as_deref());
    let new = NewDelivery {
        delivery_id: delivery_id.clone(),
        event: event.to_owned(),
        action: envelope.action.clone(),
        repository: envelope.repository.as_ref().map(|r| r.0.clone()),
        installation_id: envelope.installation_id.map(|i| i as i64),
        pr_number: envelope.pr_number.map(|n| n.0 as i64),
        body: text,
        received_at,
    };
    let (outcome, job) = match &disposition {
        Disposition::Handle { kind } => (
            DeliveryOutcome::Queued,
            Some(NewJob {
                kind: kind.clone(),
                serial_key: envelope.serial_key(),
                payload: "{}".into(),
                max_attempts: state.max_attempts,
                run_after: received_at,
            }),
        ),
        Disposition::Ignore(reason) => (DeliveryOutcome::Ignored(reason.clone()), None),
    };
    match state
        .store
        .record_delivery(&new, &outcome, job.as_ref())
        .await
    {
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
                DeliveryOutcome::Queued => {
                    state.wake.notify_one();
                    reply(
                        StatusCode::ACCEPTED,
                        json!({ "status": "queued", "delivery": delivery_id.0 }),
                    )
                }
                DeliveryOutcome::Ignored(reason) => reply(
                    StatusCode::OK,
                    json!({ "status": "ignored", "delivery": delivery_id.0, "reason": reason }),
                ),
            }
        }
        Err(e) => {
            telemetry::delivery(event, "unavailable");
            unavailable(&e)
        }
    }
}

/// GitHub sends JSON, or a form with the JSON in `payload=` when the hook is
/// configured that way; the signature covers the raw body either way.
fn json_payload(headers: &HeaderMap, body: &Bytes) -> Result<Vec<u8>, Box<Response>> {
    let ctype = header_str(headers, header::CONTENT_TYPE.as_str())
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match ctype.as_str() {
        "application/json" | "" => Ok(body.to_vec()),
        "application/x-www-form-urlencoded" => url::form_urlencoded::parse(body)
            .find(|(k, _)| k == "payload")
            .map(|(_, v)| v.into_owned().into_bytes())
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

fn unavailable(e: &StoreError) -> Response {
    tracing::error!(error = %e, "storage failed; asking GitHub to redeliver");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "storage unavailable; the delivery was not stored",
    )
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
