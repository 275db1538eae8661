//! A corpus of bad and hostile deliveries (generated and hand-written), each
//! with its exact status and effect: a job or none, a comment or none. None
//! may give a 5xx or a panic.
use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::transcript::World;
use common::{TestDb, data_dir};
use std::sync::Arc;
use sweepgate::config::server::Secret;
use sweepgate::server::{AppState, router, signature::sign};
use sweepgate_core::ids::DeliveryId;
use sweepgate_sandbox::Change;
use tokio::sync::Notify;
use tower::ServiceExt;

const SECRET: &str = "corpus-secret";
const OLD_SECRET: &str = "corpus-old-secret";

/// One delivery and what must come of it.
struct Case {
    name: String,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    status: StatusCode,
    /// Whether a job must exist for the delivery id afterwards.
    job: bool,
}

fn signed(
    name: String,
    event: &str,
    id: &str,
    body: Vec<u8>,
    status: StatusCode,
    job: bool,
) -> Case {
    Case {
        headers: vec![
            ("content-type", "application/json".into()),
            ("x-github-event", event.into()),
            ("x-github-delivery", id.into()),
            ("x-hub-signature-256", sign(SECRET, &body)),
        ],
        name,
        body,
        status,
        job,
    }
}

fn payloads() -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    for event in [
        "pull_request",
        "issue_comment",
        "check_run",
        "workflow_run",
        "workflow_job",
        "push",
        "installation",
    ] {
        let dir = data_dir().join("github/webhooks").join(event);
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = rd
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files.into_iter().take(4) {
            v.push((event.to_string(), std::fs::read(f).unwrap()));
        }
    }
    v
}

fn corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut n = 0;
    let mut id = |prefix: &str| {
        n += 1;
        format!("{prefix}-{n}")
    };
    let real = payloads();
    assert!(real.len() >= 20);
    let ping = br#"{"zen":"Keep it logically awesome.","hook_id":1}"#.to_vec();

    // Signatures: missing, wrong, other algorithms, malformed, truncated.
    for (event, body) in &real {
        let bad_sigs = [
            None,
            Some(sign("wrong", body)),
            Some(format!("sha1={}", "0".repeat(40))),
            Some("sha256=".into()),
            Some("sha256=zz".into()),
            Some(sign(SECRET, body)[..40].to_string()),
            Some(sign(SECRET, &[body.as_slice(), b" "].concat())),
            Some(format!(" {}", sign(SECRET, body))),
        ];
        for sig in bad_sigs {
            let mut c = signed(
                format!("sig {event} {sig:?}"),
                event,
                &id("sig"),
                body.clone(),
                StatusCode::UNAUTHORIZED,
                false,
            );
            c.headers.retain(|(k, _)| *k != "x-hub-signature-256");
            if let Some(s) = sig {
                c.headers.push(("x-hub-signature-256", s));
            }
            cases.push(c);
        }
        // The old secret during a rotation is accepted.
        let mut c = signed(
            format!("rotated {event}"),
            event,
            &id("rot"),
            body.clone(),
            StatusCode::OK,
            false,
        );
        c.headers.retain(|(k, _)| *k != "x-hub-signature-256");
        c.headers
            .push(("x-hub-signature-256", sign(OLD_SECRET, body)));
        let v: serde_json::Value = serde_json::from_slice(body).unwrap();
        let handled = matches!(
            sweepgate::events::disposition(event, v["action"].as_str()),
            sweepgate::events::Disposition::Handle { .. }
        );
        if handled {
            c.status = StatusCode::ACCEPTED;
            c.job = true;
        }
        cases.push(c);
        // Truncated JSON at many cut points.
        for frac in [1, 5, 10, 25, 50, 75, 90, 99] {
            let cut = (body.len() * frac / 100).max(1);
            cases.push(signed(
                format!("truncated {event} {frac}%"),
                event,
                &id("trunc"),
                body[..cut].to_vec(),
                StatusCode::BAD_REQUEST,
                false,
            ));
        }
        // Missing headers.
        for drop in ["x-github-event", "x-github-delivery"] {
            let mut c = signed(
                format!("no {drop} {event}"),
                event,
                &id("hdr"),
                body.clone(),
                StatusCode::BAD_REQUEST,
                false,
            );
            c.headers.retain(|(k, _)| *k != drop);
            cases.push(c);
        }
    }
    // Bodies that are JSON but not objects, and not JSON at all.
    for (i, body) in [
        &b""[..],
        b"null",
        b"[]",
        b"42",
        b"\"x\"",
        b"{",
        b"}",
        b"{\"a\":}",
        b"\xff\xfe{}",
        b"{\"action\":\"opened\"}{}",
        b"{\"action\": \"opened\", \"pull_request\": {\"number\": \"NaN\"}}",
        b"{\"action\": \"created\", \"issue\": {}, \"comment\": {}}",
    ]
    .into_iter()
    .enumerate()
    {
        for event in ["pull_request", "issue_comment", "ping"] {
            let status = if event == "ping" && body.starts_with(b"{\"action\"") && i != 9 {
                StatusCode::OK
            } else {
                StatusCode::BAD_REQUEST
            };
            cases.push(signed(
                format!("body {i} {event}"),
                event,
                &id("body"),
                body.to_vec(),
                status,
                false,
            ));
        }
    }
    // Unknown events and actions: stored as ignored.
    for event in [
        "star",
        "fork",
        "gollum",
        "deployment",
        "security_advisory",
        "member",
        "team",
        "label",
        "status",
        "check_suite",
    ] {
        for action in ["created", "deleted", "whatever", "completed"] {
            let body = format!("{{\"action\":\"{action}\"}}").into_bytes();
            cases.push(signed(
                format!("unknown {event}.{action}"),
                event,
                &id("unk"),
                body,
                StatusCode::OK,
                false,
            ));
        }
    }
    for action in [
        "assigned",
        "milestoned",
        "auto_merge_enabled",
        "future_action_2030",
    ] {
        let (_, body) = &real[0];
        let mut v: serde_json::Value = serde_json::from_slice(body).unwrap();
        v["action"] = action.into();
        cases.push(signed(
            format!("pr action {action}"),
            "pull_request",
            &id("act"),
            serde_json::to_vec(&v).unwrap(),
            StatusCode::OK,
            false,
        ));
    }
    // Header values that are not what GitHub sends.
    for bad in ["has space", "semi;colon", &"x".repeat(200), "", "ünïcode"] {
        let mut c = signed(
            format!("delivery id {bad:.20}"),
            "ping",
            "x",
            ping.clone(),
            StatusCode::BAD_REQUEST,
            false,
        );
        c.headers.retain(|(k, _)| *k != "x-github-delivery");
        c.headers.push(("x-github-delivery", bad.to_string()));
        if bad.is_ascii() {
            cases.push(c);
        }
        let mut c = signed(
            format!("event {bad:.20}"),
            "ping",
            &id("ev"),
            ping.clone(),
            StatusCode::BAD_REQUEST,
            false,
        );
        c.headers.retain(|(k, _)| *k != "x-github-event");
        c.headers.push(("x-github-event", bad.to_string()));
        if bad.is_ascii() {
            cases.push(c);
        }
    }
    // Content types.
    for (ct, status) in [
        ("text/plain", StatusCode::UNSUPPORTED_MEDIA_TYPE),
        ("application/xml", StatusCode::UNSUPPORTED_MEDIA_TYPE),
        ("multipart/form-data", StatusCode::UNSUPPORTED_MEDIA_TYPE),
        ("application/json; charset=utf-8", StatusCode::OK),
        ("APPLICATION/JSON", StatusCode::OK),
        ("application/x-www-form-urlencoded", StatusCode::BAD_REQUEST),
    ] {
        let mut c = signed(
            format!("content type {ct}"),
            "ping",
            &id("ct"),
            ping.clone(),
            status,
            false,
        );
        c.headers.retain(|(k, _)| *k != "content-type");
        c.headers.push(("content-type", ct.into()));
        cases.push(c);
    }
    cases
}

#[tokio::test]
async fn every_bad_delivery_gets_its_status_and_effect() {
    let db = TestDb::sqlite().await;
    let app = router(AppState::new(
        db.store.clone(),
        vec![Secret::new(SECRET), Secret::new(OLD_SECRET)],
        Arc::new(Notify::new()),
    ));
    let cases = corpus();
    assert!(cases.len() >= 500, "corpus has {} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let mut req = Request::post("/webhook");
        for (k, v) in &c.headers {
            req = req.header(*k, v.as_str());
        }
        let resp = app
            .clone()
            .oneshot(req.body(Body::from(c.body.clone())).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        assert!(!status.is_server_error(), "{}: {status}", c.name);
        if status != c.status {
            failures.push(format!("{}: got {status}, expected {}", c.name, c.status));
            continue;
        }
        let id = c
            .headers
            .iter()
            .find(|(k, _)| *k == "x-github-delivery")
            .map(|(_, v)| v.clone());
        if let Some(id) = id {
            let jobs = db
                .store
                .jobs_for_delivery(&DeliveryId(id.clone()))
                .await
                .unwrap();
            if jobs.is_empty() == c.job {
                failures.push(format!(
                    "{}: expected job={} found {}",
                    c.name,
                    c.job,
                    jobs.len()
                ));
            }
            let stored = db.store.delivery(&DeliveryId(id)).await.unwrap().is_some();
            if stored != c.status.is_success() {
                failures.push(format!("{}: stored={stored} with status {status}", c.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    // Replays: every accepted id again gives 200 and no second job.
    let accepted: Vec<&Case> = cases.iter().filter(|c| c.status.is_success()).collect();
    for c in &accepted {
        let mut req = Request::post("/webhook");
        for (k, v) in &c.headers {
            req = req.header(*k, v.as_str());
        }
        let resp = app
            .clone()
            .oneshot(req.body(Body::from(c.body.clone())).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "replay of {}", c.name);
    }
    // The figures of docs/reliability/bad-input.json.
    eprintln!(
        "bad input: {} deliveries ({} accepted), {} replays",
        cases.len(),
        accepted.len(),
        accepted.len()
    );
    let counts = db.store.queue_counts().await.unwrap();
    assert_eq!(
        counts.pending as usize,
        accepted.iter().filter(|c| c.job).count()
    );
    // A 30 MB body is refused before anything else.
    let big = vec![b'{'; 30 * 1024 * 1024];
    let req = Request::post("/webhook")
        .header("content-type", "application/json")
        .header("x-github-event", "ping")
        .header("x-github-delivery", "huge")
        .header("x-hub-signature-256", sign(SECRET, &big))
        .body(Body::from(big))
        .unwrap();
    assert_eq!(
        app.oneshot(req).await.unwrap().status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );
    db.cleanup().await;
}

/// Comments through the sandbox: hidden commands get no reply, visible ones
/// exactly one, huge bodies are handled.
#[tokio::test]
async fn hidden_commands_never_answer_and_visible_ones_answer_once() {
    let mut w = World::new().await;
    let pr = w.open_pr("docs", &[Change::write("docs/a.md", "a\n")], "dev");
    w.deliver().await;
    let hidden = [
        "```\n/help\n```",
        "~~~\n/help\n~~~",
        "````\n```\n/help\n```\n````",
        "> /help",
        "> > /help",
        ">\n> /help",
        "`/help`",
        "text `/help` text",
        "<!-- /help -->",
        "<!--\n\n/help\n-->",
        "    /help",
        "\t/help",
        "\u{200b}/help",
        "x\n\u{feff}/help",
        "\u{2060}/help",
        "x /help",
        "<pre>\n/help\n</pre>",
        "- ```\n  /help\n  ```",
        "1. > /help",
    ];
    for body in hidden {
        pr.post_comment("dev", "NONE", body).unwrap();
    }
    w.deliver().await;
    assert!(
        pr.bot_comments().is_empty(),
        "a hidden command answered: {:#?}",
        pr.bot_comments()
    );
    // GitHub caps a comment at 65,536 characters.
    let mut huge = "lorem ipsum ".repeat(5_400);
    huge.push_str("\n/help\n");
    pr.post_comment("dev", "NONE", &huge).unwrap();
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .contains("@dev sweepgate reads these commands")
    );
    w.finish(&[pr.number]).await;
}
