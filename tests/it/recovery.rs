//! Deliveries lost to a database outage are recovered: the sandbox pushes
//! deliveries as GitHub does (one attempt each; a 503 leaves it failed),
//! PostgreSQL becomes unreachable for a while (a TCP proxy this test owns
//! stops forwarding; the shared server is never touched), the intake
//! answers 503, and afterwards the redelivery pass asks GitHub for every
//! failed delivery the store lacks. Every delivery is then processed
//! exactly once.
use crate::common;

use common::TestDb;
use common::transcript::{OWNER, REPO, fixture_files, github_for};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use sweepgate::config::server::{RedeliveryConfig, Secret, ServerConfig};
use sweepgate::handlers::{Services, event_router};
use sweepgate::store::{self, SqliteSync};
use sweepgate_core::ids::DeliveryId;
use sweepgate_sandbox::{Change, PullRequestSpec, Sandbox};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// A TCP proxy to PostgreSQL that can be cut: while down it refuses new
/// connections and has dropped the open ones.
struct Proxy {
    port: u16,
    up: Arc<AtomicBool>,
    conns: Arc<tokio::sync::Mutex<JoinSet<()>>>,
}

impl Proxy {
    async fn start(target: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let conns: Arc<tokio::sync::Mutex<JoinSet<()>>> = Arc::default();
        let (up2, conns2) = (up.clone(), conns.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !up2.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let target = target.clone();
                conns2.lock().await.spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        Proxy { port, up, conns }
    }

    async fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.conns.lock().await.abort_all();
    }

    fn up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

/// The URL of `db` through the proxy.
fn via(url: &str, port: u16) -> String {
    let mut u = url::Url::parse(url).unwrap();
    u.set_port(Some(port)).unwrap();
    u.to_string()
}

async fn wait_until<F: Fn() -> Fut, Fut: std::future::Future<Output = bool>>(
    what: &str,
    limit: Duration,
    f: F,
) {
    let start = Instant::now();
    while !f().await {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn deliveries_failed_during_a_database_outage_are_redelivered_and_processed_once() {
    let Some(db) = TestDb::postgres().await else {
        return;
    };
    let target = {
        let u = url::Url::parse(&db.url).unwrap();
        format!("{}:{}", u.host_str().unwrap(), u.port().unwrap_or(5432))
    };
    let proxy = Proxy::start(target).await;
    let url = via(&db.url, proxy.port);
    let store = store::open(&url, SqliteSync::Normal).await.unwrap();

    let (sandbox, _) = Sandbox::start().await.unwrap();
    sandbox.add_org(OWNER);
    sandbox
        .add_repo(OWNER, REPO, "main", fixture_files())
        .unwrap();
    sandbox.install_app(OWNER);
    sandbox.take_deliveries();
    let github = github_for(&sandbox);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cfg = ServerConfig {
        database_url: url.clone(),
        webhook_secrets: vec![Secret::new(sandbox.webhook_secret())],
        github_api_url: sandbox.base_url(),
        workers: 2,
        ..ServerConfig::default()
    };
    let running = sweepgate::app::start(
        &cfg,
        store.clone(),
        event_router(Services::new(github.clone())),
        listener,
    )
    .await
    .unwrap();
    sandbox.deliver_like_github(&format!("http://{}/webhook", running.addr));

    // Before the outage: a PR, delivered and handled.
    sandbox.create_branch(OWNER, REPO, "docs", "main").unwrap();
    sandbox
        .commit_as(
            OWNER,
            REPO,
            "docs",
            &[Change::write("docs/a.md", "a\n")],
            "a",
            "dev",
        )
        .unwrap();
    let pr = sandbox
        .open_pr(PullRequestSpec::new(OWNER, REPO, "docs", "dev"))
        .unwrap();
    pr.post_comment("dev", "NONE", "/help").unwrap();
    assert!(sandbox.flush_deliveries(Duration::from_secs(30)).await);
    let store2 = store.clone();
    wait_until("the first jobs done", Duration::from_secs(60), || {
        let store = store2.clone();
        async move {
            store
                .queue_counts()
                .await
                .is_ok_and(|c| c.pending + c.running == 0 && c.done > 0)
        }
    })
    .await;
    // The bot's own reply is a delivery too.
    assert!(sandbox.flush_deliveries(Duration::from_secs(30)).await);
    let before = sandbox.delivery_attempts().len();

    // The outage: every delivery meanwhile is answered 503 and stays failed.
    proxy.down().await;
    const DURING: usize = 5;
    for i in 0..DURING {
        pr.post_comment(&format!("dev{i}"), "NONE", "/help")
            .unwrap();
    }
    assert!(sandbox.flush_deliveries(Duration::from_secs(60)).await);
    let attempts = sandbox.delivery_attempts();
    assert!(
        attempts[..before]
            .iter()
            .all(|a| a.status_code == 202 || a.status_code == 200),
        "{attempts:#?}"
    );
    let failed: Vec<u16> = attempts
        .iter()
        .filter(|a| !(200..300).contains(&a.status_code))
        .map(|a| a.status_code)
        .collect();
    assert_eq!(failed, vec![503; DURING], "{attempts:#?}");

    // The database is back; the redelivery pass finds what is missing.
    proxy.up();
    let cfg = RedeliveryConfig::default();
    let pass = sweepgate::recovery::pass(&github, &store, &cfg)
        .await
        .unwrap();
    assert_eq!((pass.missing, pass.requested), (DURING, DURING), "{pass:?}");
    assert!(sandbox.flush_deliveries(Duration::from_secs(60)).await);

    let all = sandbox.all_deliveries();
    let ids: Vec<DeliveryId> = all.iter().map(|d| DeliveryId(d.id.clone())).collect();
    let store2 = store.clone();
    wait_until(
        "every delivery's job done",
        Duration::from_secs(120),
        || {
            let (store, ids) = (store2.clone(), ids.clone());
            async move {
                for id in &ids {
                    let jobs = store.jobs_for_delivery(id).await.unwrap_or_default();
                    if store.delivery(id).await.ok().flatten().is_none()
                        || jobs.iter().any(|j| j.state != "done")
                    {
                        return false;
                    }
                }
                true
            }
        },
    )
    .await;
    for id in &ids {
        assert!(
            store.jobs_for_delivery(id).await.unwrap().len() <= 1,
            "{id}"
        );
    }
    // Each /help answered exactly once, the one before and the five during.
    let replies = pr
        .bot_comments()
        .iter()
        .filter(|c| c.body.contains("sweepgate reads these commands"))
        .count();
    assert_eq!(replies, 1 + DURING);
    // A second pass finds nothing more to ask for.
    let again = sweepgate::recovery::pass(&github, &store, &cfg)
        .await
        .unwrap();
    assert_eq!((again.missing, again.requested), (0, 0));
    let redelivered = sandbox
        .delivery_attempts()
        .iter()
        .filter(|a| a.redelivery)
        .count();
    eprintln!(
        "recovery: {} deliveries, {DURING} failed with 503 during the outage, {redelivered} redelivered, all processed once",
        all.len()
    );
    // The delivery log and the redelivery requests are GitHub's shapes.
    let drift = common::openapi::mismatches(&sandbox.requests());
    assert!(drift.is_empty(), "{}", drift.join("\n"));
    running.stop().await.unwrap();
    drop(store);
    db.cleanup().await;
}
