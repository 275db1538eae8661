//! SQLite WAL checkpoints off the writers' path.
//!
//! By default the connection whose commit takes the WAL past 1,000 pages
//! checkpoints it inside that commit: it syncs the WAL, copies the pages
//! into the database file and syncs that, while the intake's writer (or a
//! worker) waits for its commit to return. Under load that is every few
//! batches, and each time the requests of the next batches wait with it.
//!
//! Here the pool's connections never checkpoint (`wal_autocheckpoint=0`);
//! one task with its own connection runs a `PASSIVE` checkpoint every
//! [`INTERVAL`]. A passive checkpoint never takes the write lock nor waits
//! for anyone: writers go on appending to the WAL while it copies, and the
//! next writer after a complete one starts the WAL over from its beginning.
//! Durability is unchanged: a commit is in the WAL either way, and
//! `synchronous` is the pool's own.
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{Connection, SqliteExecutor};
use std::time::Duration;
use tokio::sync::oneshot;

/// How often the WAL is checkpointed. At 5,000 deliveries a second the
/// WAL grows by about 2,000 pages (8 MB) in this time.
pub(super) const INTERVAL: Duration = Duration::from_millis(100);

/// The WAL pages past which the checkpointer stops being polite: when a
/// passive checkpoint leaves more than this in the WAL (readers kept the
/// writers from starting it over, or the copying falls behind a sustained
/// load), a `RESTART` checkpoint waits for the readers and holds off the
/// writers until the WAL starts over. 16,384 pages are 64 MiB at the default
/// page size: the disk a WAL may take, and what a restart after a crash
/// reads back, stay small, and readers (who search the WAL's index for every
/// page) do not slow down, while the ~2,000 pages of one interval at the
/// target load are far below it, so the writers are never stalled by it in
/// normal operation.
pub(super) const WAL_BOUND_PAGES: i64 = 16_384;

/// The pool's connections: they leave checkpoints to the [`Checkpointer`].
pub(super) fn writer_options(opts: SqliteConnectOptions) -> SqliteConnectOptions {
    opts.pragma("wal_autocheckpoint", "0")
}

/// Runs while it lives; dropping it (with the store) ends the task.
pub(super) struct Checkpointer {
    _stop: oneshot::Sender<()>,
}

impl Checkpointer {
    /// Opens the checkpointer's own connection and starts its task on the
    /// current runtime.
    pub(super) async fn start(opts: &SqliteConnectOptions) -> Result<Self, sqlx::Error> {
        // A RESTART holds the writers off while it waits for readers: never
        // for longer than this (the pool's 10 s would stall the intake); a
        // RESTART that gives up is tried again on the next tick.
        let opts = opts.clone().busy_timeout(RESTART_PATIENCE);
        let conn = SqliteConnection::connect_with(&opts).await?;
        let (stop, stopped) = oneshot::channel();
        tokio::spawn(run(conn, stopped));
        Ok(Self { _stop: stop })
    }
}

/// The longest a `RESTART` waits for readers (see [`Checkpointer::start`]).
const RESTART_PATIENCE: Duration = Duration::from_millis(200);

const PASSIVE: &str = "PRAGMA wal_checkpoint(PASSIVE)";
const RESTART: &str = "PRAGMA wal_checkpoint(RESTART)";

/// Whether the checkpoint was kept from finishing (a `RESTART` that could
/// not wait its readers or writers out), and the WAL's size in pages.
async fn checkpoint(
    conn: impl SqliteExecutor<'_>,
    sql: &'static str,
) -> Result<(bool, i64), sqlx::Error> {
    let (busy, log, _copied): (i64, i64, i64) = sqlx::query_as(sql).fetch_one(conn).await?;
    Ok((busy != 0, log))
}

async fn run(mut conn: SqliteConnection, mut stopped: oneshot::Receiver<()>) {
    let mut tick = tokio::time::interval(INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            _ = tick.tick() => {}
        }
        let pages = match checkpoint(&mut conn, PASSIVE).await {
            Ok((_, pages)) => pages,
            Err(e) => {
                tracing::warn!(error = %e, "WAL checkpoint failed");
                continue;
            }
        };
        if pages > WAL_BOUND_PAGES {
            match checkpoint(&mut conn, RESTART).await {
                Ok((busy, _)) => tracing::info!(
                    pages,
                    busy,
                    "the WAL grew past its bound; writers waited for it to start over"
                ),
                Err(e) => tracing::warn!(error = %e, pages, "WAL restart failed"),
            }
        }
    }
    let _ = conn.close().await;
}
