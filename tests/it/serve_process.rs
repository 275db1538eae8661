//! The real binary as a separate process: it serves, acknowledged deliveries
//! survive SIGKILL, and SIGTERM shuts it down cleanly.
use crate::common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use sweepgate::server::signature::sign;
use sweepgate::store::{self, SqliteSync};
use sweepgate_core::ids::DeliveryId;

const SECRET: &str = "process-secret";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn spawn(db_url: &str, key: &Path, port: u16) -> Child {
    Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--database-url", db_url, "--webhook-secret", SECRET])
        .args(["--app-id", "1", "--private-key-path"])
        .arg(key)
        // Nothing listens there: handlers' calls fail and are retried later.
        .args(["--github-api-url", "http://127.0.0.1:9"])
        .env("SWEEPGATE_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

async fn wait_ready(client: &reqwest::Client, base: &str) {
    let start = Instant::now();
    loop {
        if let Ok(r) = client.get(format!("{base}/readyz")).send().await
            && r.status() == 200
        {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "server never became ready"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn post(client: &reqwest::Client, base: &str, event: &str, id: &str, body: &[u8]) -> u16 {
    client
        .post(format!("{base}/webhook"))
        .header("content-type", "application/json")
        .header("x-github-event", event)
        .header("x-github-delivery", id)
        .header("x-hub-signature-256", sign(SECRET, body))
        .body(body.to_vec())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} failed");
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "process did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn acknowledged_deliveries_survive_sigkill_and_sigterm_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite:{}", dir.path().join("p.db").display());
    let key = dir.path().join("app-key.pem");
    std::fs::write(&key, sweepgate_sandbox::app_key_pem()).unwrap();
    let body =
        std::fs::read(common::data_dir().join("github/webhooks/pull_request/opened.payload.json"))
            .unwrap();
    let client = reqwest::Client::new();

    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut child = spawn(&db_url, &key, port);
    wait_ready(&client, &base).await;
    let mut acked = Vec::new();
    for i in 0..20 {
        let id = format!("kill-{i}");
        assert_eq!(post(&client, &base, "pull_request", &id, &body).await, 202);
        acked.push(id);
    }
    signal(&child, "-KILL");
    wait_exit(&mut child);

    let store = store::open(&db_url, SqliteSync::Normal).await.unwrap();
    for id in &acked {
        let d = DeliveryId(id.clone());
        assert!(store.delivery(&d).await.unwrap().is_some(), "{id} lost");
        assert_eq!(store.jobs_for_delivery(&d).await.unwrap().len(), 1);
    }
    drop(store);

    // Restarted, it still knows them: a redelivery is a duplicate.
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut child = spawn(&db_url, &key, port);
    wait_ready(&client, &base).await;
    assert_eq!(
        post(&client, &base, "pull_request", "kill-3", &body).await,
        200
    );
    signal(&child, "-TERM");
    let status = wait_exit(&mut child);
    assert!(status.success(), "SIGTERM exit: {status}");
}

#[test]
fn serve_without_a_secret_refuses_to_start() {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args([
            "serve",
            "--database-url",
            "sqlite::memory:",
            "--github-token",
            "t",
        ])
        .env_remove("SWEEPGATE_WEBHOOK_SECRETS")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no webhook secret"), "{err}");
}

#[test]
fn serve_without_github_credentials_refuses_to_start() {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args([
            "serve",
            "--database-url",
            "sqlite::memory:",
            "--webhook-secret",
            "s",
        ])
        .env_remove("SWEEPGATE_GITHUB_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no GitHub credentials"), "{err}");
}
