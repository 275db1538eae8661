//! Shadow mode's writes (`docs/shadow.md`), kept in the `shadow_writes`
//! table of the same database as everything else: the [`WriteSink`] the
//! GitHub client hands its writes to, and what the dashboard shows as
//! "would post". It has its own small pool on the store's URL, so the
//! storage trait stays as it is; an in-memory SQLite database is a
//! database per pool, so shadow mode needs a file or PostgreSQL.
use super::{SqliteSync, StoreError, now_ms};
use crate::github::shadow::{IntendedWrite, RecordedWrite, WriteSink};
use async_trait::async_trait;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use std::str::FromStr;
use std::time::Duration;

#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The stored intended writes.
#[derive(Clone)]
pub struct ShadowLog {
    pool: Pool,
}

#[derive(sqlx::FromRow)]
struct Row {
    seq: i64,
    repository: Option<String>,
    pr_number: Option<i64>,
    method: String,
    path: String,
    body: String,
    kind: String,
    target: Option<i64>,
    at: i64,
}

impl From<Row> for RecordedWrite {
    fn from(r: Row) -> Self {
        RecordedWrite {
            seq: r.seq.max(0) as u64,
            at: r.at,
            write: IntendedWrite {
                repository: r.repository,
                pr_number: r.pr_number.map(|n| n.max(0) as u64),
                method: r.method,
                path: r.path,
                body: r.body,
                kind: r.kind,
                target: r.target.map(|n| n.max(0) as u64),
            },
        }
    }
}

/// The columns, as a literal so every statement is one (sqlx checks that
/// no SQL is built from data).
macro_rules! columns {
    () => {
        "seq, repository, pr_number, method, path, body, kind, target, at"
    };
}

/// The same statement on either back end (their SQL is the same here).
macro_rules! on_pool {
    ($self:expr, |$p:ident| $body:expr) => {
        match &$self.pool {
            Pool::Sqlite($p) => $body,
            Pool::Postgres($p) => $body,
        }
    };
}

impl ShadowLog {
    /// Opens the log on the database at `url` (migrated by the store).
    pub async fn open(url: &str, sync: SqliteSync) -> Result<Self, StoreError> {
        let pool = if url.starts_with("sqlite:") {
            if url.contains(":memory:") {
                return Err(StoreError::UnsupportedUrl(format!(
                    "{url} (shadow mode needs a database file or PostgreSQL)"
                )));
            }
            let opts = SqliteConnectOptions::from_str(url)
                .map_err(|_| StoreError::UnsupportedUrl(url.to_owned()))?
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(match sync {
                    SqliteSync::Normal => sqlx::sqlite::SqliteSynchronous::Normal,
                    SqliteSync::Full => sqlx::sqlite::SqliteSynchronous::Full,
                })
                .busy_timeout(Duration::from_secs(10));
            Pool::Sqlite(
                SqlitePoolOptions::new()
                    .max_connections(2)
                    .connect_with(opts)
                    .await?,
            )
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Pool::Postgres(
                PgPoolOptions::new()
                    .max_connections(2)
                    .acquire_timeout(Duration::from_secs(3))
                    .connect_lazy(url)?,
            )
        } else {
            return Err(StoreError::UnsupportedUrl(url.to_owned()));
        };
        Ok(Self { pool })
    }

    async fn insert(&self, w: &IntendedWrite, at: i64) -> Result<RecordedWrite, StoreError> {
        let sql = concat!(
            "INSERT INTO shadow_writes (repository, pr_number, method, path, body, kind, \
             target, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ",
            columns!()
        );
        let pr = w.pr_number.map(|n| n as i64);
        let target = w.target.map(|n| n as i64);
        let row: Row = on_pool!(self, |p| {
            sqlx::query_as(sql)
                .bind(w.repository.as_deref())
                .bind(pr)
                .bind(w.method.as_str())
                .bind(w.path.as_str())
                .bind(w.body.as_str())
                .bind(w.kind.as_str())
                .bind(target)
                .bind(at)
                .fetch_one(p)
                .await?
        });
        Ok(row.into())
    }

    /// One write by its sequence number.
    pub async fn by_seq(&self, seq: u64) -> Result<Option<RecordedWrite>, StoreError> {
        let sql = concat!("SELECT ", columns!(), " FROM shadow_writes WHERE seq = $1");
        let row: Option<Row> = on_pool!(self, |p| {
            sqlx::query_as(sql)
                .bind(seq as i64)
                .fetch_optional(p)
                .await?
        });
        Ok(row.map(Into::into))
    }

    /// A repository's writes about one PR (all of them when `None`),
    /// oldest first.
    pub async fn list(
        &self,
        repository: &str,
        pr: Option<u64>,
    ) -> Result<Vec<RecordedWrite>, StoreError> {
        let sql = concat!(
            "SELECT ",
            columns!(),
            " FROM shadow_writes WHERE repository = $1 \
             AND ($2 IS NULL OR pr_number = $2) ORDER BY seq"
        );
        let pr = pr.map(|n| n as i64);
        let rows: Vec<Row> = on_pool!(self, |p| {
            sqlx::query_as(sql)
                .bind(repository)
                .bind(pr)
                .fetch_all(p)
                .await?
        });
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Every write, oldest first, at most `limit`.
    pub async fn all(&self, limit: i64) -> Result<Vec<RecordedWrite>, StoreError> {
        let sql = concat!(
            "SELECT ",
            columns!(),
            " FROM shadow_writes ORDER BY seq LIMIT $1"
        );
        let rows: Vec<Row> = on_pool!(self, |p| {
            sqlx::query_as(sql).bind(limit).fetch_all(p).await?
        });
        Ok(rows.into_iter().map(Into::into).collect())
    }
}

#[async_trait]
impl WriteSink for ShadowLog {
    async fn record(&self, write: &IntendedWrite) -> Result<RecordedWrite, String> {
        self.insert(write, now_ms())
            .await
            .map_err(|e| e.to_string())
    }

    async fn get(&self, seq: u64) -> Result<Option<RecordedWrite>, String> {
        self.by_seq(seq).await.map_err(|e| e.to_string())
    }

    async fn writes(
        &self,
        repository: &str,
        pr_number: Option<u64>,
    ) -> Result<Vec<RecordedWrite>, String> {
        self.list(repository, pr_number)
            .await
            .map_err(|e| e.to_string())
    }
}
