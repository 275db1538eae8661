//! Wiring: storage, the worker pool, the event router and the HTTP server,
//! started and stopped together.
use crate::config::server::{LogFormat, ServerConfig};
use crate::events::EventRouter;
use crate::github::{GitHub, GitHubConfig, RetryPolicy};
use crate::handlers::{Services, event_router};
use crate::queue::{QueueConfig, WorkerPool};
use crate::server::{AppState, router};
use crate::store::{self, Store};
use anyhow::Context;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::Notify;

pub(crate) fn init_logging(format: LogFormat) {
    init_logging_at(format, "info");
}

/// Logging with `default` as the level when `SWEEPGATE_LOG` is not set.
pub fn init_logging_at(format: LogFormat, default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWEEPGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

/// Opens the store and applies migrations.
pub async fn open_store(cfg: &ServerConfig) -> anyhow::Result<Store> {
    let store = store::open(&cfg.database_url, cfg.sqlite_sync)
        .await
        .with_context(|| format!("opening {}", redact_url(&cfg.database_url)))?;
    store.migrate().await.context("applying migrations")?;
    Ok(store)
}

/// Shadow mode's log of intended writes: the whole server's in shadow
/// mode (required: the server does not start without it), and in live
/// mode that of repositories configured `mode = "shadow"` (when the
/// database can hold it: not an in-memory SQLite database, where such a
/// repository's jobs fail with the reason instead of writing live).
pub async fn open_shadow(
    cfg: &ServerConfig,
) -> anyhow::Result<Option<crate::store::shadow::ShadowLog>> {
    let opened = crate::store::shadow::ShadowLog::open(&cfg.database_url, cfg.sqlite_sync)
        .await
        .with_context(|| format!("opening {}", redact_url(&cfg.database_url)));
    match opened {
        Ok(log) => Ok(Some(log)),
        Err(e) if cfg.mode == crate::config::server::Mode::Shadow => Err(e),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "no shadow log: a repository configured for shadow mode gets no writes at all");
            Ok(None)
        }
    }
}

/// A running server: its address and a way to stop it.
pub struct Running {
    pub addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    done: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Running {
    /// Stops accepting, drains the workers, and waits.
    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.done.await.context("server task")?
    }

    /// Waits until the server stops by itself (a signal).
    pub(crate) async fn wait(self) -> anyhow::Result<()> {
        let _keep = self.stop;
        self.done.await.context("server task")?
    }
}

/// Binds and starts serving on `listener` with the given router of handlers.
pub async fn start(
    cfg: &ServerConfig,
    store: Store,
    events: EventRouter,
    listener: TcpListener,
) -> anyhow::Result<Running> {
    start_with_shadow(cfg, store, events, listener, None).await
}

/// [`start`], with shadow mode's intended writes shown on the dashboard.
pub async fn start_with_shadow(
    cfg: &ServerConfig,
    store: Store,
    events: EventRouter,
    listener: TcpListener,
    shadow: Option<crate::store::shadow::ShadowLog>,
) -> anyhow::Result<Running> {
    let addr = listener.local_addr()?;
    crate::telemetry::handle();
    let wake = Arc::new(Notify::new());
    let queue_cfg = QueueConfig {
        workers: cfg.workers,
        lease: cfg.lease,
        ..QueueConfig::default()
    };
    let pool = WorkerPool::start(
        store.clone(),
        Arc::new(events),
        queue_cfg,
        wake.clone(),
        &addr.to_string(),
    );
    let dash = crate::dashboard::DashState::new(
        store.clone(),
        cfg.admin_token.clone(),
        cfg.public_url.as_deref(),
        wake.clone(),
    )
    .public(cfg.dashboard_public)
    .with_shadow(shadow);
    let state = AppState::new(store, cfg.webhook_secrets.clone(), wake).with_intake(cfg.intake);
    let app = crate::server::with_timeouts(
        router(state).merge(crate::dashboard::router(dash)),
        &cfg.intake,
    );
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                tokio::select! {
                    _ = stop_rx => {}
                    _ = shutdown_signal() => {}
                }
            })
            .await
            .context("serving HTTP")?;
        tracing::info!("HTTP stopped; draining workers");
        pool.shutdown().await;
        Ok(())
    });
    Ok(Running {
        addr,
        stop: stop_tx,
        done,
    })
}

/// The GitHub client of the configured credentials, API and size caps.
pub(crate) fn github_client(cfg: &ServerConfig) -> anyhow::Result<GitHub> {
    Ok(GitHub::new(GitHubConfig {
        api_url: cfg.github_api_url.clone(),
        credentials: cfg.credentials()?,
        policy: RetryPolicy::default(),
    })?
    .with_limits(cfg.limits))
}

/// `sweepgate verify`: one sign-off, assessed through the configured
/// GitHub credentials and database (for the pinned run).
pub(crate) async fn verify_once(
    cfg: &ServerConfig,
    repo: &str,
    signoff_url: &str,
    publish: bool,
    today: Option<chrono::NaiveDate>,
    json: bool,
) -> anyhow::Result<std::process::ExitCode> {
    use crate::handlers::{Clock, verify};
    let (owner, name) = repo
        .split_once('/')
        .with_context(|| format!("--repo {repo}: not owner/name"))?;
    let github = github_client(cfg)?;
    let store = open_store(cfg).await?;
    let services = Services::new(github).with_clock(today.map_or(Clock::System, Clock::Fixed));
    let repo = sweepgate_core::ids::RepoName::new(owner, name);
    let (v, published) =
        match verify::verify_url(&services, &store, &repo, signoff_url, publish).await {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(std::process::ExitCode::from(2));
            }
        };
    if json {
        let out = serde_json::json!({
            "verdict": if v.passed() { "PASS" } else { "REJECTED" },
            "head_sha": v.head_sha,
            "signer": v.signer,
            "rows": v.rows,
            "comment_url": published.as_ref().map(|p| p.url.clone()),
        });
        crate::cli::output::print_out(&(serde_json::to_string_pretty(&out)? + "\n"))?;
    } else {
        crate::cli::output::print_out(&(crate::verdict::render_comment(&v) + "\n"))?;
        if let Some(p) = &published {
            eprintln!("published: {}", p.url);
        }
    }
    Ok(if v.passed() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    })
}

/// `sweepgate serve`.
pub(crate) async fn serve(cfg: ServerConfig) -> anyhow::Result<()> {
    cfg.require_secrets()?;
    let mut github = github_client(&cfg)?;
    let store = open_store(&cfg).await?;
    let log = open_shadow(&cfg).await?;
    let shadow = log
        .clone()
        .filter(|_| cfg.mode == crate::config::server::Mode::Shadow);
    if let Some(log) = &shadow {
        github = github.with_sink(Arc::new(log.clone()));
    }
    let listener = TcpListener::bind(cfg.listen)
        .await
        .with_context(|| format!("binding {}", cfg.listen))?;
    let mut services = Services::new(github.clone());
    if let Some(log) = &log {
        services = services.with_shadow_log(Arc::new(log.clone()));
    }
    let mut services = services
        .with_public_url(cfg.public_url.clone())
        .with_staging_token(&cfg.github_api_url, cfg.staging_token.clone())?;
    // Shadow mode writes nothing with the staging credential either.
    if let Some(log) = &shadow {
        services.staging = services.staging.map(|s| s.with_sink(Arc::new(log.clone())));
    }
    let running = start_with_shadow(
        &cfg,
        store.clone(),
        event_router(services.clone()),
        listener,
        log,
    )
    .await?;
    // A lost `workflow_run` webhook never leaves a dispatched sweep pending.
    let _timer = crate::handlers::dispatch::spawn_timer(
        services,
        store.clone(),
        std::time::Duration::from_secs(180),
    );
    // A delivery GitHub could not hand over (a 503 during a database
    // outage, a crash) is asked for again.
    let _redelivery = crate::recovery::spawn(github, store, cfg.redelivery);
    tracing::info!(addr = %running.addr, db = %redact_url(&cfg.database_url), mode = ?cfg.mode, "sweepgate listening");
    running.wait().await
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A database URL without its password, for logs.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_owned(),
    }
}
