//! Webhook deliveries of the sandbox GitHub: one per state change, shaped
//! like the fixtures, signed with HMAC-SHA256, queued for the test or pushed
//! to a receiver that may be down for a while.
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sweepgate_sandbox::{Change, PullRequestSpec, RunSpec, Sandbox};

const OWNER: &str = "SemiAnalysisAI";
const REPO: &str = "InferenceX";

fn hmac_hex(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

async fn world() -> Sandbox {
    let (sb, _) = Sandbox::start().await.unwrap();
    sb.add_org(OWNER);
    sb.add_repo(OWNER, REPO, "main", [("README.md", "r\n")])
        .unwrap();
    sb.install_app(OWNER);
    sb
}

#[tokio::test]
async fn every_state_change_yields_a_signed_fixture_shaped_delivery() {
    let sb = world().await;
    let secret = sb.webhook_secret();
    sb.commit(OWNER, REPO, "feat", &[Change::write("a.txt", "a\n")], "a")
        .unwrap();
    let pr = sb
        .open_pr(
            PullRequestSpec::new(OWNER, REPO, "feat", "alice")
                .draft(true)
                .association("CONTRIBUTOR"),
        )
        .unwrap();
    pr.ready_for_review("alice").unwrap();
    pr.add_label("full-sweep-enabled", "maintainer").unwrap();
    pr.remove_label("full-sweep-enabled", "maintainer").unwrap();
    let before = pr.head_sha().unwrap();
    let after = pr.push(&[Change::write("a.txt", "b\n")], "b").unwrap();
    let cid = pr.post_comment("bob", "COLLABORATOR", "/use 1").unwrap();
    sb.edit_comment(cid, "bob", "/use 2").unwrap();
    pr.submit_review(
        "carol",
        "MEMBER",
        "APPROVE",
        "As a PR reviewer and CODEOWNER",
    )
    .unwrap();
    let run = sb
        .add_workflow_run(RunSpec::new(OWNER, REPO, "run-sweep.yml", &after))
        .unwrap();
    let job = sb.add_job(run, "canary", None).unwrap();
    sb.set_job(job, "completed", Some("success")).unwrap();
    sb.complete_run(run, "success").unwrap();

    let ds = sb.take_deliveries();
    let kinds: Vec<String> = ds
        .iter()
        .map(|d| format!("{}.{}", d.event, d.action.clone().unwrap_or_default()))
        .collect();
    let expected = [
        "push.",
        "pull_request.opened",
        "pull_request.ready_for_review",
        "pull_request.labeled",
        "pull_request.unlabeled",
        "push.",
        "pull_request.synchronize",
        "issue_comment.created",
        "issue_comment.edited",
        "pull_request_review.submitted",
        "workflow_run.requested",
        "check_run.created",
        "workflow_job.queued",
        "check_run.completed",
        "workflow_job.completed",
        "workflow_run.completed",
    ];
    assert_eq!(kinds, expected);
    assert!(sb.take_deliveries().is_empty(), "taken once");

    let mut ids = std::collections::HashSet::new();
    for d in &ds {
        // Signature over the exact body, as a receiver verifies it.
        assert_eq!(d.signature_256, hmac_hex(&secret, &d.body));
        assert!(d.verify(&secret) && !d.verify("wrong"));
        let parsed: Value = serde_json::from_slice(&d.body).unwrap();
        assert_eq!(parsed, d.payload);
        assert_eq!(
            parsed["repository"]["full_name"],
            "SemiAnalysisAI/InferenceX"
        );
        assert!(parsed["installation"]["id"].is_u64());
        assert!(parsed["sender"]["login"].is_string());
        assert_eq!(parsed["organization"]["login"], OWNER);
        assert_eq!(d.id.len(), 36);
        assert!(ids.insert(d.id.clone()), "delivery ids are unique");
        let headers = d.headers();
        assert!(
            headers
                .iter()
                .any(|(k, v)| *k == "x-github-event" && *v == d.event)
        );
        assert!(
            headers
                .iter()
                .any(|(k, v)| *k == "x-github-delivery" && *v == d.id)
        );
    }
    let push = &ds[5].payload;
    assert_eq!(push["ref"], "refs/heads/feat");
    assert_eq!(
        (push["before"].as_str(), push["after"].as_str()),
        (Some(before.as_str()), Some(after.as_str()))
    );
    assert_eq!(push["head_commit"]["message"], "b");
    let sync = &ds[6].payload;
    assert_eq!(
        (sync["before"].as_str(), sync["after"].as_str()),
        (Some(before.as_str()), Some(after.as_str()))
    );
    assert_eq!(sync["pull_request"]["head"]["sha"], after);
    assert_eq!(ds[3].payload["label"]["name"], "full-sweep-enabled");
    assert_eq!(ds[3].payload["sender"]["login"], "maintainer");
    let comment = &ds[7].payload;
    assert!(
        comment["issue"]["pull_request"]["url"].is_string(),
        "a PR comment carries issue.pull_request"
    );
    assert_eq!(comment["comment"]["author_association"], "COLLABORATOR");
    assert_eq!(ds[8].payload["changes"]["body"]["from"], "/use 1");
    assert_eq!(ds[9].payload["review"]["state"], "APPROVED");
    let done = &ds[15].payload;
    assert_eq!(done["workflow_run"]["conclusion"], "success");
    assert_eq!(
        done["workflow_run"]["pull_requests"][0]["number"],
        pr.number
    );
    assert_eq!(done["workflow"]["path"], ".github/workflows/run-sweep.yml");
}

/// (event, delivery id, body) of each delivery received.
type Received = Vec<(String, String, Vec<u8>)>;

#[derive(Clone, Default)]
struct Receiver {
    up: Arc<Mutex<bool>>,
    got: Arc<Mutex<Received>>,
}

async fn receive(
    axum::extract::State(r): axum::extract::State<Receiver>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    if !*r.up.lock().unwrap() {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let h = |k: &str| {
        headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    r.got
        .lock()
        .unwrap()
        .push((h("x-github-event"), h("x-hub-signature-256"), body.to_vec()));
    StatusCode::ACCEPTED
}

#[tokio::test]
async fn push_mode_retries_until_the_receiver_is_up_and_keeps_order() {
    let sb = world().await;
    let receiver = Receiver::default();
    let app = axum::Router::new()
        .route("/webhook", axum::routing::post(receive))
        .with_state(receiver.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/webhook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    sb.commit(OWNER, REPO, "feat", &[Change::write("a.txt", "a\n")], "a")
        .unwrap();
    let pr = sb
        .open_pr(PullRequestSpec::new(OWNER, REPO, "feat", "alice"))
        .unwrap();
    pr.post_comment("bob", "MEMBER", "hello").unwrap();
    sb.deliver_to(&url);
    // Receiver down: nothing is lost, attempts pile up on the first one.
    tokio::time::sleep(Duration::from_millis(400)).await;
    // The push, the opened PR and the comment.
    assert_eq!(sb.pending_deliveries(), 3);
    let first = &sb.all_deliveries()[0];
    assert!(first.attempts >= 2, "retried {} times", first.attempts);
    assert_eq!(first.last_status, Some(503));

    *receiver.up.lock().unwrap() = true;
    assert!(sb.flush_deliveries(Duration::from_secs(10)).await);
    pr.add_label("sweep-enabled", "maintainer").unwrap();
    assert!(sb.flush_deliveries(Duration::from_secs(10)).await);
    let got = receiver.got.lock().unwrap().clone();
    let events: Vec<&str> = got.iter().map(|(e, _, _)| e.as_str()).collect();
    assert_eq!(
        events,
        ["push", "pull_request", "issue_comment", "pull_request"]
    );
    for (_, sig, body) in &got {
        assert_eq!(*sig, hmac_hex(&sb.webhook_secret(), body));
    }
    assert!(sb.all_deliveries().iter().all(|d| d.delivered));
}

#[tokio::test]
async fn subscriptions_filter_events() {
    let sb = world().await;
    sb.subscribe(&["issue_comment"]);
    sb.commit(OWNER, REPO, "feat", &[Change::write("a.txt", "a\n")], "a")
        .unwrap();
    let pr = sb
        .open_pr(PullRequestSpec::new(OWNER, REPO, "feat", "alice"))
        .unwrap();
    pr.post_comment("bob", "MEMBER", "hi").unwrap();
    let ds = sb.take_deliveries();
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0].event, "issue_comment");
}
