//! Acknowledgement: the real intake router on a real TCP listener, and an
//! open-loop load generator sending signed deliveries at a fixed rate.
//! Latency is measured from each request's scheduled send time, so a
//! server that falls behind is charged for the queueing it causes.
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::Notify;

use sweepgate::config::server::Secret;
use sweepgate::server::{AppState, router, signature::sign};
use sweepgate::store::{self, SqliteSync, Store};

const SECRET: &str = "sweepgate-bench-secret";

/// One constant-rate run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Load {
    pub offered: f64,
    pub achieved: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub sent: usize,
    pub errors: usize,
}

impl Load {
    /// Kept up with the offered rate, without errors, within the p99 budget.
    pub(crate) fn sustained(&self, p99_budget: Duration) -> bool {
        self.errors == 0 && self.achieved >= 0.95 * self.offered && self.p99 <= p99_budget
    }
}

/// A database for one back end and how to remove it.
pub(crate) struct Db {
    pub store: Store,
    pub label: String,
    /// The database's URL, for processes that open it themselves.
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

impl Db {
    pub(crate) async fn sqlite() -> anyhow::Result<Db> {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite:{}", dir.path().join("bench.db").display());
        // The documented default durability: WAL, synchronous=NORMAL.
        let store = store::open(&url, SqliteSync::Normal).await?;
        store.migrate().await?;
        Ok(Db {
            store,
            label: "SQLite (WAL, synchronous=NORMAL)".into(),
            url,
            _dir: Some(dir),
            pg: None,
        })
    }

    /// A fresh database on the PostgreSQL server at `admin`; `Err` with the
    /// reason when it is unreachable.
    pub(crate) async fn postgres(admin: &str) -> anyhow::Result<Db> {
        let pool = tokio::time::timeout(
            Duration::from_secs(5),
            sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .connect(admin),
        )
        .await
        .map_err(|_| anyhow::anyhow!("connecting timed out"))??;
        let name = format!(
            "sg_bench_{}_{:08x}",
            std::process::id(),
            rand::random::<u32>()
        );
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&pool)
            .await?;
        pool.close().await;
        let mut url = url::Url::parse(admin)?;
        url.set_path(&name);
        let store = store::open(url.as_str(), SqliteSync::Normal).await?;
        store.migrate().await?;
        Ok(Db {
            store,
            label: "PostgreSQL (synchronous_commit as configured, default on)".into(),
            url: url.to_string(),
            _dir: None,
            pg: Some((admin.to_owned(), name)),
        })
    }

    pub(crate) async fn cleanup(self) {
        let Db { store, pg, .. } = self;
        drop(store);
        if let Some((admin, name)) = pg
            && let Ok(pool) = sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .connect(&admin)
                .await
        {
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&pool)
            .await;
        }
    }
}

/// A running intake server.
pub(crate) struct Server {
    pub url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    done: tokio::task::JoinHandle<()>,
}

impl Server {
    pub(crate) async fn start(store: Store) -> anyhow::Result<Server> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = router(AppState::new(
            store,
            vec![Secret::new(SECRET)],
            Arc::new(Notify::new()),
        ));
        let (stop, rx) = tokio::sync::oneshot::channel::<()>();
        let done = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(Server {
            url: format!("http://{addr}/webhook"),
            stop,
            done,
        })
    }

    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.done.await;
    }
}

/// A real `issue_comment` delivery body.
pub(crate) fn payload(fixtures: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    let p = fixtures.join("../github/webhooks/issue_comment/created.payload.json");
    std::fs::read(&p).with_context(|| format!("reading {}", p.display()))
}

/// Sends deliveries at `rate` per second for `secs` and measures each.
pub(crate) async fn run(url: &str, body: &[u8], rate: f64, secs: f64, tag: &str) -> Load {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .unwrap_or_default();
    let body = bytes::Bytes::copy_from_slice(body);
    let signature = sign(SECRET, &body);
    let total = (rate * secs).round().max(1.0) as usize;
    let interval = Duration::from_secs_f64(1.0 / rate);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Duration, bool, Instant)>();
    let t0 = Instant::now();
    let mut next = 0usize;
    while next < total {
        // Send every request whose time has come (the timer ticks in ms).
        let due = ((t0.elapsed().as_secs_f64() * rate) as usize + 1).min(total);
        while next < due {
            let at = t0 + interval.mul_f64(next as f64);
            let req = client
                .post(url)
                .header("content-type", "application/json")
                .header("x-github-event", "issue_comment")
                .header("x-github-delivery", format!("bench-{tag}-{next}"))
                .header("x-hub-signature-256", &signature)
                .body(body.clone());
            let tx = tx.clone();
            tokio::spawn(async move {
                let ok = match req.send().await {
                    Ok(r) => r.status().is_success(),
                    Err(_) => false,
                };
                let end = Instant::now();
                let _ = tx.send((end.saturating_duration_since(at), ok, end));
            });
            next += 1;
        }
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    drop(tx);
    let mut lat = Vec::with_capacity(total);
    let mut errors = 0;
    let mut last = t0;
    while let Some((d, ok, end)) = rx.recv().await {
        if ok {
            lat.push(d);
        } else {
            errors += 1;
        }
        last = last.max(end);
    }
    lat.sort();
    let pct = |q: f64| {
        lat.get(((lat.len() as f64 * q) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    let span = last.duration_since(t0).as_secs_f64().max(1e-9);
    Load {
        offered: rate,
        achieved: lat.len() as f64 / span,
        p50: pct(0.50),
        p99: pct(0.99),
        sent: total,
        errors,
    }
}

/// What the acknowledgement benchmark reports for one back end.
#[derive(Debug, Clone)]
pub(crate) struct AckResult {
    pub label: String,
    pub at_target: Load,
    /// Every step of the rate search, lowest first.
    pub steps: Vec<Load>,
    /// The highest sustained step.
    pub max_sustained: Option<f64>,
}

/// The 1,000/s run and the search for the highest sustained rate.
pub(crate) async fn bench(
    db: &Db,
    body: &[u8],
    quick: bool,
    budget: Duration,
) -> anyhow::Result<AckResult> {
    let server = Server::start(db.store.clone()).await?;
    let (secs, step_secs) = if quick { (0.5, 0.3) } else { (5.0, 3.0) };
    // Warm the connection pool and the database.
    run(&server.url, body, 200.0, 0.2, "warm").await;
    let at_target = run(&server.url, body, 1000.0, secs, "target").await;
    let mut steps = Vec::new();
    let mut max_sustained = None;
    let rates: &[f64] = if quick {
        &[1000.0, 2000.0]
    } else {
        &[1000.0, 1500.0, 2000.0, 3000.0, 4000.0, 6000.0, 8000.0]
    };
    for (i, &rate) in rates.iter().enumerate() {
        let l = run(&server.url, body, rate, step_secs, &format!("step{i}")).await;
        let ok = l.sustained(budget);
        steps.push(l);
        if !ok {
            break;
        }
        max_sustained = Some(rate);
    }
    server.stop().await;
    Ok(AckResult {
        label: db.label.clone(),
        at_target,
        steps,
        max_sustained,
    })
}
