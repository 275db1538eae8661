//! The one event table (`events::table`): the App's manifest subscribes to
//! exactly the events some handler takes, the router runs exactly the
//! handlers the table names, and a delivery no handler takes is stored as
//! ignored and never queued (issue 22).
use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::transcript::{World, github_for};
use std::collections::BTreeSet;
use std::sync::Arc;
use sweepgate::config::server::Secret;
use sweepgate::deploy;
use sweepgate::events::table::{self, HandlerId};
use sweepgate::handlers::{Services, event_router};
use sweepgate::server::{AppState, router, signature::sign};
use sweepgate_core::ids::DeliveryId;
use tokio::sync::Notify;
use tower::ServiceExt;

#[test]
fn the_manifest_subscribes_to_exactly_the_handled_events() {
    let handled: BTreeSet<String> = table::handled_kinds()
        .iter()
        .map(|(kind, _)| table::event_of(kind).to_owned())
        .collect();
    let manifest: BTreeSet<String> = deploy::events().into_iter().map(String::from).collect();
    assert_eq!(manifest, handled);
    // And the committed manifest is the one rendered from the table.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/github-app-manifest.json"
    );
    let committed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let listed: BTreeSet<String> = committed["default_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed, handled);
}

#[tokio::test]
async fn the_router_runs_exactly_the_handlers_the_table_names() {
    let w = World::new().await;
    let router = event_router(Services::new(github_for(&w.sandbox)));
    let registered: BTreeSet<HandlerId> = router.handler_ids().into_iter().collect();
    let named: BTreeSet<HandlerId> = table::handled_kinds().into_iter().map(|(_, h)| h).collect();
    assert_eq!(registered, named);
    assert_eq!(registered, HandlerId::ALL.into_iter().collect());
    w.db.cleanup().await;
}

/// Deliveries of events no handler takes: the ones earlier releases queued
/// with no handler, and one never read at all.
const UNHANDLED: &[(&str, &str)] = &[
    ("pull_request", "pull_request/closed.payload.json"),
    (
        "pull_request",
        "pull_request/converted_to_draft.payload.json",
    ),
    ("installation", "installation/created.payload.json"),
    ("installation", "installation/deleted.payload.json"),
    (
        "installation_repositories",
        "installation_repositories/added.payload.json",
    ),
    ("pull_request", "pull_request/assigned.payload.json"),
];

#[tokio::test]
async fn a_delivery_no_handler_takes_is_stored_as_ignored_and_never_queued() {
    common::on_both(|db| async move {
        let app = router(AppState::new(
            db.store.clone(),
            vec![Secret::new("events-table")],
            Arc::new(Notify::new()),
        ));
        let mut bodies: Vec<(&str, String, Vec<u8>)> = UNHANDLED
            .iter()
            .map(|(event, file)| {
                let path = common::data_dir().join("github/webhooks").join(file);
                (*event, file.to_string(), std::fs::read(path).unwrap())
            })
            .collect();
        // `pull_request.edited` and `workflow_run.requested` have no
        // fixture: the same payloads with that action.
        for (event, file, action) in [
            ("pull_request", "pull_request/opened.payload.json", "edited"),
            (
                "workflow_run",
                "workflow_run/completed.payload.json",
                "requested",
            ),
        ] {
            let path = common::data_dir().join("github/webhooks").join(file);
            let mut v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            v["action"] = action.into();
            bodies.push((
                event,
                format!("{event}.{action}"),
                v.to_string().into_bytes(),
            ));
        }
        for (i, (event, name, body)) in bodies.into_iter().enumerate() {
            let id = format!("unhandled-{i}");
            let req = Request::post("/webhook")
                .header("content-type", "application/json")
                .header("x-github-event", event)
                .header("x-github-delivery", &id)
                .header("x-hub-signature-256", sign("events-table", &body))
                .body(Body::from(body))
                .unwrap();
            let resp = app.clone().oneshot(req).await.unwrap();
            assert_eq!(resp.status(), StatusCode::OK, "{}: {name}", db.name);
            let row = db
                .store
                .delivery(&DeliveryId(id.clone()))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(row.outcome, "ignored", "{name}");
            assert!(row.reason.is_some_and(|r| !r.is_empty()), "{name}");
            let jobs = db.store.jobs_for_delivery(&DeliveryId(id)).await.unwrap();
            assert!(jobs.is_empty(), "{}: {name} was queued", db.name);
        }
        db
    })
    .await;
}
