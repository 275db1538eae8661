//! Shared test support: every storage and queue test runs on both back ends.
#![allow(dead_code)]

pub mod openapi;
pub mod transcript;

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;
use sweepgate::store::{self, SqliteSync, Store};

/// Every file under `root` (dot-directories too), by path relative to it;
/// a missing directory is an empty tree, as git keeps no empty directories.
pub fn read_tree(root: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The repository's test data (`tests/data/`: the benchmark repository's
/// files, its history, GitHub payloads, the seeds, the expected matrices).
pub fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"))
}

fn pg_admin_url() -> String {
    std::env::var("SWEEPGATE_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

fn pg_required() -> bool {
    std::env::var("SWEEPGATE_REQUIRE_PG").is_ok_and(|v| v == "1")
}

/// A fresh, migrated database on one back end, removed by `cleanup`.
pub struct TestDb {
    pub name: &'static str,
    pub store: Store,
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg_db: Option<String>,
}

async fn execute_on<DB: sqlx::Database>(url: &str, statements: &[&str])
where
    for<'c> &'c sqlx::Pool<DB>: sqlx::Executor<'c, Database = DB>,
{
    let pool = sqlx::Pool::<DB>::connect(url).await.unwrap();
    for sql in statements {
        sqlx::raw_sql(sqlx::AssertSqlSafe(*sql))
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
}

async fn scalars_on<DB: sqlx::Database>(url: &str, sql: &str) -> Vec<i64>
where
    for<'c> &'c sqlx::Pool<DB>: sqlx::Executor<'c, Database = DB>,
    i64: sqlx::Type<DB> + for<'r> sqlx::Decode<'r, DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
    DB::Arguments: sqlx::IntoArguments<DB>,
{
    let pool = sqlx::Pool::<DB>::connect(url).await.unwrap();
    let out = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    out
}

impl TestDb {
    /// The integers a query returns, read behind the store's back.
    pub async fn scalars(&self, sql: &str) -> Vec<i64> {
        if self.name == "postgres" {
            scalars_on::<sqlx::Postgres>(&self.url, sql).await
        } else {
            scalars_on::<sqlx::Sqlite>(&self.url, sql).await
        }
    }

    /// Runs `statements` on the database behind the store's back (a
    /// trigger, another replica's commits), one connection for all.
    pub async fn execute(&self, statements: &[&str]) {
        if self.name == "postgres" {
            execute_on::<sqlx::Postgres>(&self.url, statements).await;
        } else {
            execute_on::<sqlx::Sqlite>(&self.url, statements).await;
        }
    }

    pub async fn sqlite() -> TestDb {
        let db = Self::sqlite_unmigrated().await;
        db.store.migrate().await.unwrap();
        db
    }

    /// A fresh SQLite database with no table (an upgrade test applies
    /// older migrations itself).
    pub async fn sqlite_unmigrated() -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("t.db").display());
        let store = store::open(&url, SqliteSync::Normal).await.unwrap();
        TestDb {
            name: "sqlite",
            store,
            url,
            _dir: Some(dir),
            pg_db: None,
        }
    }

    /// `None` (with a printed warning) when PostgreSQL is unreachable and
    /// not required.
    pub async fn postgres() -> Option<TestDb> {
        let db = Self::postgres_unmigrated().await?;
        db.store.migrate().await.unwrap();
        Some(db)
    }

    /// A fresh PostgreSQL database with no table; `None` as for `postgres`.
    pub async fn postgres_unmigrated() -> Option<TestDb> {
        let admin = pg_admin_url();
        let conn = tokio::time::timeout(
            Duration::from_secs(5),
            sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .connect(&admin),
        )
        .await;
        let pool = match conn {
            Ok(Ok(pool)) => pool,
            other => {
                let why = match other {
                    Ok(Err(e)) => e.to_string(),
                    _ => "timed out".into(),
                };
                if pg_required() {
                    panic!(
                        "SWEEPGATE_REQUIRE_PG=1 but PostgreSQL at {admin} is unreachable: {why}"
                    );
                }
                eprintln!("warning: skipping PostgreSQL half of this test ({admin}: {why})");
                return None;
            }
        };
        let db = format!(
            "sg_test_{}_{:08x}",
            std::process::id(),
            rand::random::<u32>()
        );
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {db}")))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        let mut url = url::Url::parse(&admin).unwrap();
        url.set_path(&db);
        let url = url.to_string();
        let store = store::open(&url, SqliteSync::Normal).await.unwrap();
        Some(TestDb {
            name: "postgres",
            store,
            url,
            _dir: None,
            pg_db: Some(db),
        })
    }

    pub async fn cleanup(self) {
        let TestDb { store, pg_db, .. } = self;
        drop(store);
        if let Some(db) = pg_db
            && let Ok(pool) = sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .connect(&pg_admin_url())
                .await
        {
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {db} WITH (FORCE)"
            )))
            .execute(&pool)
            .await;
        }
    }
}

/// Runs `f` once on SQLite and once on PostgreSQL.
pub async fn on_both<F, Fut>(f: F)
where
    F: Fn(TestDb) -> Fut,
    Fut: Future<Output = TestDb>,
{
    let db = TestDb::sqlite().await;
    f(db).await.cleanup().await;
    if let Some(db) = TestDb::postgres().await {
        f(db).await.cleanup().await;
    }
}
