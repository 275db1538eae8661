//! The real binary as a separate process: it serves, acknowledged deliveries
//! survive SIGKILL, SIGTERM shuts it down cleanly, and hostile senders (a
//! body that trickles in, many forged large bodies) cost it bounded time
//! and memory.
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
    spawn_with(db_url, key, port, &[])
}

fn spawn_with(db_url: &str, key: &Path, port: u16, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--database-url", db_url, "--webhook-secret", SECRET])
        .args(["--app-id", "1", "--private-key-path"])
        .arg(key)
        // Nothing listens there: handlers' calls fail and are retried later.
        .args(["--github-api-url", "http://127.0.0.1:9"])
        .args(extra)
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

/// `VmRSS` and `VmHWM` (peak) of a process, in MiB.
fn memory_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// A server in a temporary directory, ready.
async fn serve_ready(extra: &[&str]) -> (Child, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db_url = format!("sqlite:{}", dir.path().join("p.db").display());
    let key = dir.path().join("app-key.pem");
    std::fs::write(&key, sweepgate_sandbox::app_key_pem()).unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let child = spawn_with(&db_url, &key, port, extra);
    wait_ready(&reqwest::Client::new(), &base).await;
    (child, base, dir)
}

/// Only a hang would take this long.
const HANG: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_body_that_trickles_in_is_cut_off_and_other_deliveries_go_on() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut child, base, _dir) =
        serve_ready(&["--body-timeout-secs", "2", "--request-timeout-secs", "30"]).await;
    let addr = base.trim_start_matches("http://").to_owned();
    let started = Instant::now();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /webhook HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         x-github-event: ping\r\nx-github-delivery: slow\r\n\
         x-hub-signature-256: sha256={}\r\ncontent-length: 100000\r\n\r\n",
        "0".repeat(64)
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut rd, mut wr) = stream.into_split();
    // One byte every 100 ms, for as long as the server listens.
    let writer = tokio::spawn(async move {
        for _ in 0..100_000 {
            if wr.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    // Meanwhile a real delivery is served.
    let body =
        std::fs::read(common::data_dir().join("github/webhooks/pull_request/opened.payload.json"))
            .unwrap();
    assert_eq!(
        post(
            &reqwest::Client::new(),
            &base,
            "pull_request",
            "fast",
            &body
        )
        .await,
        202
    );
    let mut answer = Vec::new();
    let read = tokio::time::timeout(HANG, async {
        let mut buf = [0u8; 1024];
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    writer.abort();
    assert!(read.is_ok(), "the slow body was never cut off");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    eprintln!(
        "slow body: cut off after {:.1} s (body deadline 2 s)",
        started.elapsed().as_secs_f64()
    );
    signal(&child, "-TERM");
    assert!(wait_exit(&mut child).success());
}

#[tokio::test]
async fn many_forged_large_bodies_cost_bounded_memory_and_time() {
    const BODIES: usize = 16;
    const SIZE: usize = 24 * 1024 * 1024;
    let (mut child, base, dir) = serve_ready(&[]).await;
    let (rss_before, _) = memory_mib(child.id());
    let client = reqwest::Client::new();
    let body = bytes::Bytes::from(vec![b'{'; SIZE]);
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..BODIES {
        let (client, base, body) = (client.clone(), base.clone(), body.clone());
        tasks.spawn(async move {
            client
                .post(format!("{base}/webhook"))
                .header("content-type", "application/json")
                .header("x-github-event", "ping")
                .header("x-github-delivery", format!("forged-{i}"))
                // Well-formed, so the body must be read to refuse it.
                .header("x-hub-signature-256", format!("sha256={}", "ab".repeat(32)))
                .body(body)
                .send()
                .await
                .map(|r| r.status().as_u16())
        });
    }
    let mut statuses = Vec::new();
    let all = tokio::time::timeout(HANG, async {
        while let Some(r) = tasks.join_next().await {
            // A body refused before it was read may close the connection
            // under the sender: that is a refusal too.
            statuses.push(r.unwrap().unwrap_or(0));
        }
    })
    .await;
    assert!(all.is_ok(), "forged bodies were not answered in time");
    let took = started.elapsed();
    let (rss_after, peak) = memory_mib(child.id());
    assert!(
        statuses.iter().all(|s| matches!(s, 0 | 401 | 503)),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&401),
        "some bodies were read and refused: {statuses:?}"
    );
    // The buffer budget (64 MiB by default) bounds what forged bodies hold
    // at once; without it the process held every body (16 × 24 MiB).
    assert!(
        peak - rss_before < 160.0,
        "peak RSS {peak:.0} MiB from {rss_before:.0} MiB"
    );
    eprintln!(
        "forged bodies: {BODIES} × {} MiB answered in {:.1} s ({} refused unread with 503 or a closed connection, {} read and refused with 401); RSS {rss_before:.0} MiB before, peak {peak:.0} MiB, {rss_after:.0} MiB after",
        SIZE / 1024 / 1024,
        took.as_secs_f64(),
        statuses.iter().filter(|s| **s != 401).count(),
        statuses.iter().filter(|s| **s == 401).count()
    );
    // Nothing was stored.
    let store = store::open(
        &format!("sqlite:{}", dir.path().join("p.db").display()),
        SqliteSync::Normal,
    )
    .await
    .unwrap();
    assert!(store.recent_deliveries(10).await.unwrap().is_empty());
    signal(&child, "-TERM");
    assert!(wait_exit(&mut child).success());
}

#[tokio::test]
async fn the_dashboard_needs_a_login_unless_served_public() {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    // No admin token: no login is possible, so the pages are refused.
    let (mut closed, base, _d1) = serve_ready(&[]).await;
    let r = client.get(format!("{base}/queue")).send().await.unwrap();
    assert_eq!(r.status(), 403);
    // An admin token: the login page, then the page with the session.
    let (mut login, base2, _d2) = serve_ready(&["--admin-token", "tok"]).await;
    let r = client.get(format!("{base2}/queue")).send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/login?next=%2Fqueue");
    let r = client
        .get(format!("{base2}/login?token=tok&next=%2Fqueue"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let cookie = r.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let r = client
        .get(format!("{base2}/queue"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // `--dashboard-public`: read-only pages for anyone.
    let (mut public, base3, _d3) = serve_ready(&["--dashboard-public"]).await;
    let r = client.get(format!("{base3}/queue")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    for child in [&mut closed, &mut login, &mut public] {
        signal(child, "-TERM");
        assert!(wait_exit(child).success());
    }
}
