//! The webhook intake, end to end through the real router: every real
//! payload is stored and answered 2xx; each class of bad input gets its exact
//! status; a database that cannot be reached gives 503 so GitHub redelivers.
use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{TestDb, data_dir, on_both};
use futures::StreamExt;
use std::sync::Arc;
use sweepgate::config::server::Secret;
use sweepgate::events::{Disposition, disposition};
use sweepgate::server::{AppState, router, signature::sign};
use sweepgate::store::Store;
use sweepgate_core::ids::DeliveryId;
use tokio::sync::Notify;
use tower::ServiceExt;

const SECRET: &str = "intake-test-secret";

fn make_app(store: Store) -> axum::Router {
    router(AppState::new(
        store,
        vec![Secret::new("new-secret"), Secret::new(SECRET)],
        Arc::new(Notify::new()),
    ))
}

struct Post<'a> {
    event: Option<&'a str>,
    delivery: Option<&'a str>,
    signature: Option<String>,
    content_type: &'a str,
    body: Vec<u8>,
}

impl<'a> Post<'a> {
    fn signed(event: &'a str, delivery: &'a str, body: impl Into<Vec<u8>>) -> Self {
        let body = body.into();
        Post {
            event: Some(event),
            delivery: Some(delivery),
            signature: Some(sign(SECRET, &body)),
            content_type: "application/json",
            body,
        }
    }

    async fn send(self, app: &axum::Router) -> (StatusCode, serde_json::Value) {
        let mut req = Request::post("/webhook").header("content-type", self.content_type);
        if let Some(e) = self.event {
            req = req.header("x-github-event", e);
        }
        if let Some(d) = self.delivery {
            req = req.header("x-github-delivery", d);
        }
        if let Some(s) = self.signature {
            req = req.header("x-hub-signature-256", s);
        }
        let resp = app
            .clone()
            .oneshot(req.body(Body::from(self.body)).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
        (status, json)
    }
}

fn fixture_payloads() -> Vec<(String, String, Vec<u8>)> {
    let root = data_dir().join("github/webhooks");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let event = dir.file_name().unwrap().to_string_lossy().into_owned();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "json") {
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                out.push((event.clone(), name, std::fs::read(&f).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn every_real_payload_is_stored_and_answered_2xx() {
    let payloads = fixture_payloads();
    assert!(payloads.len() >= 90, "found {} payloads", payloads.len());
    on_both(|db: TestDb| {
        let payloads = payloads.clone();
        async move {
            let app = make_app(db.store.clone());
            let mut queued = 0;
            for (i, (event, name, body)) in payloads.iter().enumerate() {
                let id = format!("fixture-{i}");
                let (status, json) = Post::signed(event, &id, body.clone()).send(&app).await;
                assert!(
                    status.is_success(),
                    "{}: {event}/{name}: {status} {json}",
                    db.name
                );
                let row = db
                    .store
                    .delivery(&DeliveryId(id.clone()))
                    .await
                    .unwrap()
                    .unwrap_or_else(|| panic!("{event}/{name} not stored"));
                assert_eq!(row.event, *event);
                let jobs = db.store.jobs_for_delivery(&DeliveryId(id)).await.unwrap();
                let action: Option<String> = serde_json::from_slice::<serde_json::Value>(body)
                    .unwrap()
                    .get("action")
                    .and_then(|a| a.as_str().map(String::from));
                match disposition(event, action.as_deref()) {
                    Disposition::Handle { kind } => {
                        assert_eq!(status, StatusCode::ACCEPTED, "{event}/{name}");
                        assert_eq!(row.outcome, "queued");
                        assert_eq!(jobs.len(), 1, "{event}/{name}");
                        assert_eq!(jobs[0].kind, kind);
                        queued += 1;
                    }
                    Disposition::Ignore(_) => {
                        assert_eq!(status, StatusCode::OK, "{event}/{name}");
                        assert_eq!(row.outcome, "ignored");
                        assert!(row.reason.is_some());
                        assert!(jobs.is_empty());
                    }
                }
            }
            assert!(queued > 40, "{} queued only {queued}", db.name);
            db
        }
    })
    .await;
}

#[tokio::test]
async fn pull_request_jobs_are_keyed_per_pr() {
    let body =
        std::fs::read(data_dir().join("github/webhooks/pull_request/opened.payload.json")).unwrap();
    on_both(|db: TestDb| {
        let body = body.clone();
        async move {
            let app = make_app(db.store.clone());
            let (status, _) = Post::signed("pull_request", "pr-1", body).send(&app).await;
            assert_eq!(status, StatusCode::ACCEPTED);
            let jobs = db
                .store
                .jobs_for_delivery(&DeliveryId("pr-1".into()))
                .await
                .unwrap();
            assert_eq!(
                jobs[0].serial_key.as_deref(),
                Some("Codertocat/Hello-World#2")
            );
            let row = db
                .store
                .delivery(&DeliveryId("pr-1".into()))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(row.pr_number, Some(2));
            assert_eq!(row.repository.as_deref(), Some("Codertocat/Hello-World"));
            db
        }
    })
    .await;
}

#[tokio::test]
async fn signature_classes() {
    let db = TestDb::sqlite().await;
    let app = make_app(db.store.clone());
    let body = br#"{"zen":"x","hook_id":1}"#.to_vec();

    let mut p = Post::signed("ping", "s-1", body.clone());
    p.signature = None;
    let (status, json) = p.send(&app).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .contains("missing X-Hub-Signature-256")
    );

    let mut p = Post::signed("ping", "s-2", body.clone());
    p.signature = Some(sign("wrong", &body));
    assert_eq!(p.send(&app).await.0, StatusCode::UNAUTHORIZED);

    let mut p = Post::signed("ping", "s-3", body.clone());
    p.signature = Some(format!("sha1={}", "0".repeat(40)));
    assert_eq!(p.send(&app).await.0, StatusCode::UNAUTHORIZED);

    // Rotation: both configured secrets are accepted.
    let mut p = Post::signed("ping", "s-4", body.clone());
    p.signature = Some(sign("new-secret", &body));
    assert_eq!(p.send(&app).await.0, StatusCode::OK);
    assert_eq!(
        Post::signed("ping", "s-5", body.clone()).send(&app).await.0,
        StatusCode::OK
    );

    // Nothing unauthenticated was stored.
    for id in ["s-1", "s-2", "s-3"] {
        assert!(
            db.store
                .delivery(&DeliveryId(id.into()))
                .await
                .unwrap()
                .is_none()
        );
    }
    db.cleanup().await;
}

#[tokio::test]
async fn header_body_and_json_classes() {
    let db = TestDb::sqlite().await;
    let app = make_app(db.store.clone());
    let body = br#"{"action":"opened"}"#.to_vec();

    let mut p = Post::signed("pull_request", "h-1", body.clone());
    p.event = None;
    let (status, json) = p.send(&app).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(json["error"], "missing X-GitHub-Event header");

    let mut p = Post::signed("pull_request", "h-2", body.clone());
    p.delivery = None;
    let (status, json) = p.send(&app).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(json["error"], "missing X-GitHub-Delivery header");

    let (status, json) = Post::signed("pull_request", "h-3", b"{\"action\": \"op".to_vec())
        .send(&app)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .starts_with("malformed JSON at line 1"),
        "{json}"
    );

    let (status, json) = Post::signed("pull_request", "h-4", b"[]".to_vec())
        .send(&app)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .contains("not a JSON object")
    );

    // A known event whose payload lacks what it must carry.
    let (status, json) = Post::signed("pull_request", "h-5", body.clone())
        .send(&app)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        json["error"].as_str().unwrap().contains("pull_request"),
        "{json}"
    );

    let mut p = Post::signed("ping", "h-6", br#"{"zen":"z"}"#.to_vec());
    p.content_type = "text/plain";
    assert_eq!(p.send(&app).await.0, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // Over GitHub's 25 MB cap.
    let mut big = b"{\"zen\":\"".to_vec();
    big.resize(26 * 1024 * 1024, b'a');
    big.extend_from_slice(b"\"}");
    let (status, _) = Post::signed("ping", "h-7", big).send(&app).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);

    // The form encoding GitHub offers is accepted too.
    let form = format!(
        "payload={}",
        url::form_urlencoded::byte_serialize(br#"{"zen":"form"}"#).collect::<String>()
    );
    let mut p = Post::signed("ping", "h-8", form.into_bytes());
    p.content_type = "application/x-www-form-urlencoded";
    assert_eq!(p.send(&app).await.0, StatusCode::OK);

    for id in ["h-1", "h-2", "h-3", "h-4", "h-5", "h-6", "h-7"] {
        assert!(
            db.store
                .delivery(&DeliveryId(id.into()))
                .await
                .unwrap()
                .is_none(),
            "{id}"
        );
    }
    db.cleanup().await;
}

#[tokio::test]
async fn unknown_events_and_actions_are_stored_as_ignored() {
    on_both(|db: TestDb| async move {
        let app = make_app(db.store.clone());
        let (status, json) = Post::signed("star", "u-1", br#"{"action":"created"}"#.to_vec())
            .send(&app)
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(json["status"], "ignored");
        let row = db
            .store
            .delivery(&DeliveryId("u-1".into()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.outcome, "ignored");
        assert_eq!(row.reason.as_deref(), Some("event `star` is not handled"));

        let body =
            std::fs::read(data_dir().join("github/webhooks/pull_request/assigned.payload.json"))
                .unwrap();
        let (status, json) = Post::signed("pull_request", "u-2", body).send(&app).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            json["reason"],
            "action `assigned` of `pull_request` is not handled"
        );
        assert_eq!(db.store.queue_counts().await.unwrap().pending, 0);
        db
    })
    .await;
}

#[tokio::test]
async fn a_redelivery_gets_200_and_no_second_job() {
    let body =
        std::fs::read(data_dir().join("github/webhooks/pull_request/synchronize.payload.json"))
            .unwrap();
    on_both(|db: TestDb| {
        let body = body.clone();
        async move {
            let app = make_app(db.store.clone());
            let (s1, _) = Post::signed("pull_request", "dup-1", body.clone())
                .send(&app)
                .await;
            let (s2, j2) = Post::signed("pull_request", "dup-1", body.clone())
                .send(&app)
                .await;
            assert_eq!(s1, StatusCode::ACCEPTED);
            assert_eq!(s2, StatusCode::OK);
            assert_eq!(j2["status"], "duplicate");
            let jobs = db
                .store
                .jobs_for_delivery(&DeliveryId("dup-1".into()))
                .await
                .unwrap();
            assert_eq!(jobs.len(), 1);
            assert_eq!(db.store.queue_counts().await.unwrap().pending, 1);
            db
        }
    })
    .await;
}

/// Deliveries arriving together are stored together (one batch); copies of
/// one delivery among them still get one 202 and one job, the others 200
/// duplicate, exactly as when they arrive one after another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_copies_of_a_delivery_are_stored_once_beside_the_others() {
    let body =
        std::fs::read(data_dir().join("github/webhooks/pull_request/synchronize.payload.json"))
            .unwrap();
    on_both(|db: TestDb| {
        let body = body.clone();
        async move {
            let app = make_app(db.store.clone());
            let ids: Vec<String> = (0..24)
                .map(|i| {
                    if i % 3 == 0 {
                        "copy".to_owned()
                    } else {
                        format!("other-{i}")
                    }
                })
                .collect();
            let answers: Vec<(String, StatusCode, serde_json::Value)> =
                futures::stream::iter(ids.iter().cloned())
                    .map(|id| {
                        let (app, body) = (app.clone(), body.clone());
                        async move {
                            let (s, j) = Post::signed("pull_request", &id, body).send(&app).await;
                            (id, s, j)
                        }
                    })
                    .buffer_unordered(24)
                    .collect()
                    .await;
            let statuses = |want: &str| {
                answers
                    .iter()
                    .filter(|(id, _, _)| (id == "copy") == (want == "copy"))
                    .map(|(_, s, j)| (*s, j["status"].as_str().unwrap_or("").to_owned()))
                    .collect::<Vec<_>>()
            };
            let copies = statuses("copy");
            let queued = (StatusCode::ACCEPTED, "queued".to_owned());
            let duplicate = (StatusCode::OK, "duplicate".to_owned());
            assert_eq!(copies.len(), 8);
            assert_eq!(
                copies.iter().filter(|a| **a == queued).count(),
                1,
                "{copies:?}"
            );
            assert_eq!(
                copies.iter().filter(|a| **a == duplicate).count(),
                7,
                "{copies:?}"
            );
            assert!(
                statuses("other").iter().all(|a| *a == queued),
                "{answers:?}"
            );
            let jobs = db
                .store
                .jobs_for_delivery(&DeliveryId("copy".into()))
                .await
                .unwrap();
            assert_eq!(jobs.len(), 1);
            assert_eq!(db.store.queue_counts().await.unwrap().pending, 17);
            db
        }
    })
    .await;
}

#[tokio::test]
async fn unreachable_database_gives_503_and_readyz_says_so() {
    // SQLite whose pool is closed.
    let db = TestDb::sqlite().await;
    let url = db.url.clone();
    let store = sweepgate::store::SqliteStore::open(&url, Default::default())
        .await
        .unwrap();
    store.pool().close().await;
    let app = make_app(Arc::new(store));
    let (status, json) = Post::signed("ping", "d-1", br#"{"zen":"z"}"#.to_vec())
        .send(&app)
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{json}");
    db.cleanup().await;

    // PostgreSQL that is not listening (a port nobody uses).
    let store =
        sweepgate::store::PgStore::open_lazy("postgres://postgres@127.0.0.1:1/none").unwrap();
    let pg_app = make_app(Arc::new(store));
    let body =
        std::fs::read(data_dir().join("github/webhooks/pull_request/opened.payload.json")).unwrap();
    let (status, _) = Post::signed("pull_request", "d-2", body)
        .send(&pg_app)
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let resp = pg_app
        .clone()
        .oneshot(Request::get("/readyz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    let resp = pg_app
        .oneshot(Request::get("/healthz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}

#[tokio::test]
async fn readyz_is_ready_after_migrations() {
    on_both(|db: TestDb| async move {
        let resp = make_app(db.store.clone())
            .oneshot(Request::get("/readyz").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{}", db.name);
        db
    })
    .await;
}

#[tokio::test]
async fn metrics_count_deliveries_and_show_queue_depth() {
    // The recorder must exist before anything is counted.
    sweepgate::telemetry::handle();
    let db = TestDb::sqlite().await;
    let app = make_app(db.store.clone());
    let body =
        std::fs::read(data_dir().join("github/webhooks/pull_request/opened.payload.json")).unwrap();
    assert_eq!(
        Post::signed("pull_request", "m-1", body).send(&app).await.0,
        StatusCode::ACCEPTED
    );
    let resp = app
        .oneshot(Request::get("/metrics").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let text = String::from_utf8(
        axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    assert!(
        text.contains(r#"sweepgate_deliveries_total{event="pull_request",outcome="queued"}"#),
        "{text}"
    );
    assert!(
        text.contains(r#"sweepgate_queue_jobs{state="pending"} 1"#),
        "{text}"
    );
    db.cleanup().await;
}

/// A body that sends one chunk and then nothing, ever.
fn stalled_body() -> Body {
    let first = futures::stream::once(async {
        Ok::<_, std::io::Error>(bytes::Bytes::from_static(b"{\"zen\":"))
    });
    Body::from_stream(first.chain(futures::stream::pending()))
}

fn stalled_post(signature: Option<&str>, length: usize) -> Request<Body> {
    let mut req = Request::post("/webhook")
        .header("content-type", "application/json")
        .header("x-github-event", "ping")
        .header("x-github-delivery", "stalled")
        .header("content-length", length.to_string());
    if let Some(s) = signature {
        req = req.header("x-hub-signature-256", s);
    }
    req.body(stalled_body()).unwrap()
}

/// Only a hang would take this long.
const HANG: std::time::Duration = std::time::Duration::from_secs(20);

#[tokio::test]
async fn a_missing_or_malformed_signature_is_refused_before_the_body_is_read() {
    let db = TestDb::sqlite().await;
    let app = make_app(db.store.clone());
    for sig in [None, Some("sha1=abc"), Some("sha256=xyz")] {
        let resp = tokio::time::timeout(HANG, app.clone().oneshot(stalled_post(sig, 1000)))
            .await
            .unwrap_or_else(|_| panic!("{sig:?}: the intake waited for the body"))
            .unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{sig:?}");
    }
    // A declared length over GitHub's cap is refused before reading too.
    let sig = sign(SECRET, b"x");
    let resp = tokio::time::timeout(
        HANG,
        app.clone()
            .oneshot(stalled_post(Some(&sig), 26 * 1024 * 1024)),
    )
    .await
    .expect("the intake waited for the body")
    .unwrap();
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    db.cleanup().await;
}

#[tokio::test]
async fn deliveries_over_the_concurrency_limit_or_the_buffer_budget_are_shed() {
    use sweepgate::config::server::IntakeLimits;
    let db = TestDb::sqlite().await;
    let sig = sign(SECRET, b"x");
    let limited = |intake: IntakeLimits| {
        router(
            AppState::new(
                db.store.clone(),
                vec![Secret::new(SECRET)],
                Arc::new(Notify::new()),
            )
            .with_intake(intake),
        )
    };
    // One delivery at a time: a second one while the first is being read
    // is answered 503 at once.
    let app = limited(IntakeLimits {
        concurrency: 1,
        ..IntakeLimits::default()
    });
    let first = tokio::spawn(app.clone().oneshot(stalled_post(Some(&sig), 1000)));
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let (status, json) = tokio::time::timeout(
        HANG,
        Post::signed("ping", "second", br#"{"zen":"z"}"#.to_vec()).send(&app),
    )
    .await
    .expect("the second delivery waited");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        json["error"],
        "too many deliveries at once; nothing was stored"
    );
    first.abort();

    // 25 MiB of bodies at once (the smallest budget: one delivery of
    // GitHub's largest size): a second large body is shed.
    let app = limited(IntakeLimits {
        buffer_bytes: 0,
        ..IntakeLimits::default()
    });
    let big = 20 * 1024 * 1024;
    let first = tokio::spawn(app.clone().oneshot(stalled_post(Some(&sig), big)));
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let resp = tokio::time::timeout(HANG, app.clone().oneshot(stalled_post(Some(&sig), big)))
        .await
        .expect("the second delivery waited")
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    // A small one still fits beside the first.
    let (status, _) = Post::signed("ping", "small", br#"{"zen":"z"}"#.to_vec())
        .send(&app)
        .await;
    assert_eq!(status, StatusCode::OK);
    first.abort();
    db.cleanup().await;
}
