//! The SQLite and PostgreSQL implementations. Both speak the same SQL except
//! for the claim query (`FOR UPDATE SKIP LOCKED` exists only on PostgreSQL;
//! SQLite has a single writer, so its one-statement claim is already atomic),
//! so one macro generates both and the dialect differences are constants.
use super::*;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

static SQLITE_MIGRATOR: Migrator = sqlx::migrate!("migrations/sqlite");
static PG_MIGRATOR: Migrator = sqlx::migrate!("migrations/postgres");

const JOB_COLUMNS: &str = "id, delivery_id, kind, serial_key, payload, state, attempts, \
     max_attempts, run_after, lease_token, lease_owner, lease_until, last_error, outcome, \
     created_at, updated_at, finished_at";

const SWEEP_COLUMNS: &str = "sweep_id, repository, installation_id, pr_number, head_sha, \
     base_sha, primary_label, modifiers, matrix, token_sha256, expires_at, state, run_id, \
     conclusion, reason, created_at, updated_at, dispatch_sent_at";

/// The head of an insert of a delivery row, alone or by the batch
/// (`batch.rs`): one column list for both.
macro_rules! insert_deliveries {
    () => {
        "INSERT INTO deliveries (delivery_id, event, action, repository, installation_id, \
         pr_number, outcome, reason, body, body_zstd, received_at) "
    };
}
pub(super) use insert_deliveries;

const DELIVERY_COLUMNS: &str = "delivery_id, event, action, repository, installation_id, \
     pr_number, outcome, reason, received_at";

/// What an author wrote: one row per comment, and per sign-off.
const UPSERT_AUTHORED_COMMANDS: &str = "INSERT INTO authored_commands (repository, pr_number, \
     comment_id, lines, updated_at) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (repository, pr_number, comment_id) DO UPDATE \
     SET lines = excluded.lines, updated_at = excluded.updated_at";
const UPSERT_AUTHORED_SIGNOFF: &str = "INSERT INTO authored_signoffs (repository, pr_number, \
     url, body_sha256, updated_at) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (repository, pr_number, url) DO UPDATE \
     SET body_sha256 = excluded.body_sha256, updated_at = excluded.updated_at";

/// The claim: pending and due, or running with an expired lease; and no
/// earlier unfinished job with the same serial key (per-PR FIFO, which also
/// makes two jobs of one PR never run at once, across replicas).
/// What keeps a job of a serial key from being claimed: an earlier
/// unfinished job of its key, or any job of its key running on a live
/// lease. The second matters on PostgreSQL with replicas: job ids are drawn
/// before their transactions commit, so an earlier id can become visible
/// after a later one of its key has started, and must then wait for it.
/// `e` is the other job, `candidate` the candidate's table or alias, `$4`
/// now.
fn serial_blocker(candidate: &str) -> String {
    format!(
        "((e.id < {candidate}.id AND e.state IN ('pending', 'running')) \
         OR (e.state = 'running' AND e.lease_until >= $4))"
    )
}

fn claim_sql(lock_clause: &str) -> String {
    let blocker = serial_blocker("j");
    format!(
        "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_token = $1, \
         lease_owner = $2, lease_until = $3, updated_at = $4 \
         WHERE id = (SELECT j.id FROM jobs j \
            WHERE ((j.state = 'pending' AND j.run_after <= $4) \
                OR (j.state = 'running' AND j.lease_until < $4 \
                    AND j.attempts < j.max_attempts)) \
              AND (j.serial_key IS NULL OR NOT EXISTS ( \
                  SELECT 1 FROM jobs e WHERE e.serial_key = j.serial_key AND e.id <> j.id \
                  AND {blocker})) \
            ORDER BY j.id LIMIT 1 {lock_clause}) \
         RETURNING {JOB_COLUMNS}"
    )
}

/// SQLite's claim, step one, without the write lock: the first claimable
/// job that heads its serial key. The heads come from one pass over the
/// unfinished jobs (`GROUP BY`), not a search of each key's history per
/// candidate, which grew with the backlog (about a second at 20,000 jobs).
const SQLITE_CLAIM_CANDIDATE: &str = "SELECT j.id FROM jobs j \
     WHERE ((j.state = 'pending' AND j.run_after <= $1) \
         OR (j.state = 'running' AND j.lease_until < $1 AND j.attempts < j.max_attempts)) \
       AND (j.serial_key IS NULL OR j.id IN ( \
           SELECT MIN(e.id) FROM jobs e WHERE e.state IN ('pending', 'running') \
             AND e.serial_key IS NOT NULL GROUP BY e.serial_key)) \
     ORDER BY j.id LIMIT 1";

/// SQLite's claim, step two: that job, if it is still claimable and still
/// heads its key (checked again for this one row, under the write lock).
fn sqlite_claim_by_id() -> String {
    let blocker = serial_blocker("jobs");
    format!(
        "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_token = $1, \
         lease_owner = $2, lease_until = $3, updated_at = $4 \
         WHERE id = $5 \
           AND ((state = 'pending' AND run_after <= $4) \
             OR (state = 'running' AND lease_until < $4 AND attempts < max_attempts)) \
           AND (serial_key IS NULL OR NOT EXISTS ( \
               SELECT 1 FROM jobs e WHERE e.serial_key = jobs.serial_key AND e.id <> jobs.id \
               AND {blocker})) \
         RETURNING {JOB_COLUMNS}"
    )
}

/// PostgreSQL advisory lock key of the claim ("sweepgate claim").
const CLAIM_LOCK: i64 = 0x5377_6565_7067_436c;

/// Candidates a SQLite claim tries before it reports nothing to claim
/// (each lost one was taken by another worker in between).
const SQLITE_CLAIM_TRIES: usize = 4;

macro_rules! sql_store {
    ($name:ident, $pool:ty, $db:ty, $backend:expr, $migrator:expr, $lock:expr) => {
        pub struct $name {
            pool: $pool,
            claim_sql: String,
            /// SQLite's WAL checkpoints (none in memory, nor on PostgreSQL).
            _checkpointer: Option<super::checkpoint::Checkpointer>,
            /// SQLite's writers take turns here; see [`Self::write_turn`].
            write_gate: Option<tokio::sync::Mutex<()>>,
        }

        impl $name {
            pub fn pool(&self) -> &$pool {
                &self.pool
            }

            fn from_pool(
                pool: $pool,
                checkpointer: Option<super::checkpoint::Checkpointer>,
            ) -> Self {
                Self {
                    pool,
                    claim_sql: if $backend == Backend::Sqlite {
                        sqlite_claim_by_id()
                    } else {
                        claim_sql($lock)
                    },
                    _checkpointer: checkpointer,
                    write_gate: ($backend == Backend::Sqlite).then(|| tokio::sync::Mutex::new(())),
                }
            }

            /// SQLite has one writer at a time. Without this, a write that
            /// finds the lock taken waits in SQLite's busy handler, which
            /// sleeps 1, 2, 5, 10, 15 ms... between tries: the intake's
            /// batch, behind a worker's one-row update of some 100 µs, would
            /// sleep for milliseconds. Here this process's writers queue
            /// first come, first served, and each is woken when the one
            /// before it finished. Taken before a connection, never while
            /// holding one, so it cannot deadlock with the pool. Nothing on
            /// PostgreSQL, whose writers lock rows, not the database.
            pub(super) async fn write_turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
                match &self.write_gate {
                    Some(gate) => Some(gate.lock().await),
                    None => None,
                }
            }

            /// A statement whose first two parameters are a PR's repository
            /// and number.
            fn pr_query(
                sql: &'static str,
                repo: &RepoName,
                pr: PrNumber,
            ) -> sqlx::query::Query<'static, $db, <$db as sqlx::Database>::Arguments> {
                sqlx::query(sql).bind(repo.0.as_str()).bind(pr.0 as i64)
            }

            async fn insert_job(
                conn: &mut <$db as sqlx::Database>::Connection,
                delivery: Option<&DeliveryId>,
                job: &NewJob,
                now: i64,
            ) -> Result<i64, sqlx::Error> {
                sqlx::query_scalar(
                    "INSERT INTO jobs (delivery_id, kind, serial_key, payload, state, attempts, \
                     max_attempts, run_after, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, 'pending', 0, $5, $6, $7, $7) RETURNING id",
                )
                .bind(delivery.map(|d| d.0.as_str()))
                .bind(job.kind.as_str())
                .bind(job.serial_key.as_deref())
                .bind(job.payload.as_str())
                .bind(i64::from(job.max_attempts))
                .bind(job.run_after.max(now))
                .bind(now)
                .fetch_one(conn)
                .await
            }
        }

        #[async_trait]
        impl Storage for $name {
            fn backend(&self) -> Backend {
                $backend
            }

            async fn migrate(&self) -> Result<(), StoreError> {
                $migrator.run(&self.pool).await?;
                Ok(())
            }

            async fn ready(&self) -> Result<bool, StoreError> {
                let applied: Result<i64, sqlx::Error> = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM _sqlx_migrations WHERE success = TRUE",
                )
                .fetch_one(&self.pool)
                .await;
                match applied {
                    Ok(n) => Ok(n as usize >= $migrator.iter().count()),
                    Err(sqlx::Error::Database(_)) => Ok(false),
                    Err(e) => Err(e.into()),
                }
            }

            async fn record_delivery(
                &self,
                d: &NewDelivery,
                outcome: &DeliveryOutcome,
                job: Option<&NewJob>,
            ) -> Result<Inserted, StoreError> {
                let _turn = self.write_turn().await;
                let mut tx = self.pool.begin().await?;
                let (text, zstd) = d.body.columns();
                let inserted = sqlx::query(concat!(
                    insert_deliveries!(),
                    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
                     ON CONFLICT (delivery_id) DO NOTHING"
                ))
                .bind(&d.delivery_id.0)
                .bind(&d.event)
                .bind(&d.action)
                .bind(&d.repository)
                .bind(d.installation_id)
                .bind(d.pr_number)
                .bind(outcome.as_str())
                .bind(outcome.reason())
                .bind(text)
                .bind(zstd)
                .bind(d.received_at)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if inserted == 0 {
                    tx.rollback().await?;
                    return Ok(Inserted::Duplicate);
                }
                if let Some(job) = job {
                    Self::insert_job(&mut *tx, Some(&d.delivery_id), job, d.received_at).await?;
                }
                tx.commit().await?;
                Ok(Inserted::New)
            }

            async fn record_deliveries(
                &self,
                items: &[BatchItem],
            ) -> Result<Vec<Result<Inserted, StoreError>>, StoreError> {
                self.record_batch(items).await
            }

            async fn delivery(&self, id: &DeliveryId) -> Result<Option<DeliveryRow>, StoreError> {
                let sql = format!("SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE delivery_id = $1");
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(&id.0)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            async fn delivery_body(&self, id: &DeliveryId) -> Result<Option<String>, StoreError> {
                let row: Option<(String, Option<Vec<u8>>)> =
                    sqlx::query_as("SELECT body, body_zstd FROM deliveries WHERE delivery_id = $1")
                        .bind(&id.0)
                        .fetch_optional(&self.pool)
                        .await?;
                row.map(|(text, zstd)| DeliveryBody::read(text, zstd)).transpose()
            }

            async fn recent_deliveries(&self, limit: i64) -> Result<Vec<DeliveryRow>, StoreError> {
                let sql = format!(
                    "SELECT {DELIVERY_COLUMNS} FROM deliveries \
                     ORDER BY received_at DESC, delivery_id LIMIT $1"
                );
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?)
            }

            async fn pr_deliveries(
                &self,
                repository: &str,
                pr: i64,
                limit: i64,
            ) -> Result<Vec<DeliveryRow>, StoreError> {
                let sql = format!(
                    "SELECT {DELIVERY_COLUMNS} FROM deliveries \
                     WHERE repository = $1 AND pr_number = $2 \
                     ORDER BY received_at DESC, delivery_id LIMIT $3"
                );
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(repository)
                    .bind(pr)
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?)
            }

            async fn installations(&self) -> Result<Vec<InstallationSummary>, StoreError> {
                Ok(sqlx::query_as(
                    "SELECT installation_id, repository, COUNT(*) AS deliveries, \
                     MAX(received_at) AS last_at FROM deliveries \
                     GROUP BY installation_id, repository \
                     ORDER BY installation_id, repository",
                )
                .fetch_all(&self.pool)
                .await?)
            }

            async fn record_activity(&self, a: &NewActivity) -> Result<i64, StoreError> {
                Ok(sqlx::query_scalar(
                    "INSERT INTO activity (repository, pr_number, head_sha, kind, summary, \
                     detail, at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                )
                .bind(&a.repository)
                .bind(a.pr_number)
                .bind(&a.head_sha)
                .bind(&a.kind)
                .bind(&a.summary)
                .bind(&a.detail)
                .bind(a.at)
                .fetch_one(&self.pool)
                .await?)
            }

            async fn pr_activity(
                &self,
                repository: &str,
                pr: i64,
                limit: i64,
            ) -> Result<Vec<ActivityRow>, StoreError> {
                Ok(sqlx::query_as(
                    "SELECT id, repository, pr_number, head_sha, kind, summary, detail, at \
                     FROM activity WHERE repository = $1 AND pr_number = $2 \
                     ORDER BY id LIMIT $3",
                )
                .bind(repository)
                .bind(pr)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn activity(&self, id: i64) -> Result<Option<ActivityRow>, StoreError> {
                Ok(sqlx::query_as(
                    "SELECT id, repository, pr_number, head_sha, kind, summary, detail, at \
                     FROM activity WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(&self.pool)
                .await?)
            }

            async fn last_activity(
                &self,
                repository: &str,
                pr: i64,
                kind: &str,
            ) -> Result<Option<ActivityRow>, StoreError> {
                Ok(sqlx::query_as(
                    "SELECT id, repository, pr_number, head_sha, kind, summary, detail, at \
                     FROM activity WHERE repository = $1 AND pr_number = $2 AND kind = $3 \
                     ORDER BY id DESC LIMIT 1",
                )
                .bind(repository)
                .bind(pr)
                .bind(kind)
                .fetch_optional(&self.pool)
                .await?)
            }

            async fn recent_prs(&self, limit: i64) -> Result<Vec<PrSummary>, StoreError> {
                Ok(sqlx::query_as(
                    "SELECT repository, pr_number, COUNT(*) AS events, MAX(at) AS last_at \
                     FROM activity GROUP BY repository, pr_number \
                     ORDER BY MAX(at) DESC, repository, pr_number LIMIT $1",
                )
                .bind(limit)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn enqueue(&self, job: &NewJob, now: i64) -> Result<JobId, StoreError> {
                let _turn = self.write_turn().await;
                let mut conn = self.pool.acquire().await?;
                let id = Self::insert_job(&mut *conn, None, job, now).await?;
                Ok(JobId(id as u64))
            }

            async fn claim(
                &self,
                owner: &str,
                now: i64,
                lease: Duration,
            ) -> Result<Option<Claimed>, StoreError> {
                let token: i64 = rand::random::<i64>() & i64::MAX;
                let until = now.saturating_add(lease.as_millis() as i64);
                if $backend == Backend::Sqlite {
                    // SQLite has one writer: an `UPDATE` holds the write
                    // lock for its whole search, and the intake's commits
                    // wait behind it. So the search runs as a read, and
                    // the write touches one row.
                    for _ in 0..SQLITE_CLAIM_TRIES {
                        let id: Option<i64> = sqlx::query_scalar(SQLITE_CLAIM_CANDIDATE)
                            .bind(now)
                            .fetch_optional(&self.pool)
                            .await?;
                        let Some(id) = id else { return Ok(None) };
                        let _turn = self.write_turn().await;
                        let row: Option<JobRow> =
                            sqlx::query_as(sqlx::AssertSqlSafe(self.claim_sql.clone()))
                                .bind(token)
                                .bind(owner)
                                .bind(until)
                                .bind(now)
                                .bind(id)
                                .fetch_optional(&self.pool)
                                .await?;
                        if let Some(job) = row {
                            return Ok(Some(Claimed { job, token }));
                        }
                    }
                    return Ok(None);
                }
                // Claims of all replicas take turns (a transaction-scoped
                // advisory lock), so each claim's search sees the jobs the
                // previous one started; without it two claims could start
                // two jobs of one key that became visible out of order.
                let mut tx = self.pool.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(CLAIM_LOCK)
                    .execute(&mut *tx)
                    .await?;
                let row: Option<JobRow> =
                    sqlx::query_as(sqlx::AssertSqlSafe(self.claim_sql.clone()))
                        .bind(token)
                        .bind(owner)
                        .bind(until)
                        .bind(now)
                        .fetch_optional(&mut *tx)
                        .await?;
                tx.commit().await?;
                Ok(row.map(|job| Claimed { job, token }))
            }

            async fn extend_lease(&self, c: &Claimed, until: i64) -> Result<bool, StoreError> {
                let _turn = self.write_turn().await;
                let n = sqlx::query(
                    "UPDATE jobs SET lease_until = $1 \
                     WHERE id = $2 AND lease_token = $3 AND state = 'running'",
                )
                .bind(until)
                .bind(c.job.id)
                .bind(c.token)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn complete(
                &self,
                c: &Claimed,
                now: i64,
                outcome: &str,
            ) -> Result<bool, StoreError> {
                let _turn = self.write_turn().await;
                let n = sqlx::query(
                    "UPDATE jobs SET state = 'done', outcome = $1, finished_at = $2, \
                     updated_at = $2, lease_until = NULL \
                     WHERE id = $3 AND lease_token = $4 AND state = 'running'",
                )
                .bind(outcome)
                .bind(now)
                .bind(c.job.id)
                .bind(c.token)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn fail(
                &self,
                c: &Claimed,
                now: i64,
                error: &str,
                next: AfterFailure,
            ) -> Result<bool, StoreError> {
                let _turn = self.write_turn().await;
                let (state, run_after, finished) = match next {
                    AfterFailure::RetryAt(at) => ("pending", at, None),
                    AfterFailure::Dead => ("dead", now, Some(now)),
                };
                let n = sqlx::query(
                    "UPDATE jobs SET state = $1, run_after = $2, finished_at = $3, \
                     last_error = $4, updated_at = $5, lease_until = NULL \
                     WHERE id = $6 AND lease_token = $7 AND state = 'running'",
                )
                .bind(state)
                .bind(run_after)
                .bind(finished)
                .bind(error)
                .bind(now)
                .bind(c.job.id)
                .bind(c.token)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn bury_crashed(&self, now: i64) -> Result<u64, StoreError> {
                let _turn = self.write_turn().await;
                Ok(sqlx::query(
                    "UPDATE jobs SET state = 'dead', finished_at = $1, updated_at = $1, \
                     lease_until = NULL, last_error = $2 || ' (the lease of attempt ' || \
                     CAST(attempts AS TEXT) || ' of ' || CAST(max_attempts AS TEXT) || ' expired)' \
                     WHERE state = 'running' AND lease_until < $1 AND attempts >= max_attempts",
                )
                .bind(now)
                .bind(CRASHED)
                .execute(&self.pool)
                .await?
                .rows_affected())
            }

            async fn release(&self, c: &Claimed, now: i64) -> Result<bool, StoreError> {
                let _turn = self.write_turn().await;
                let n = sqlx::query(
                    "UPDATE jobs SET state = 'pending', attempts = attempts - 1, \
                     run_after = $1, updated_at = $1, lease_until = NULL \
                     WHERE id = $2 AND lease_token = $3 AND state = 'running'",
                )
                .bind(now)
                .bind(c.job.id)
                .bind(c.token)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn retry_dead(&self, id: JobId, now: i64) -> Result<bool, StoreError> {
                let _turn = self.write_turn().await;
                let n = sqlx::query(
                    "UPDATE jobs SET state = 'pending', attempts = 0, run_after = $1, \
                     updated_at = $1, finished_at = NULL WHERE id = $2 AND state = 'dead'",
                )
                .bind(now)
                .bind(id.0 as i64)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn job(&self, id: JobId) -> Result<Option<JobRow>, StoreError> {
                let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1");
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(id.0 as i64)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            async fn jobs(
                &self,
                state: Option<JobState>,
                limit: i64,
            ) -> Result<Vec<JobRow>, StoreError> {
                let rows = match state {
                    Some(s) => {
                        let sql = format!(
                            "SELECT {JOB_COLUMNS} FROM jobs WHERE state = $1 ORDER BY id DESC LIMIT $2"
                        );
                        sqlx::query_as(sqlx::AssertSqlSafe(sql))
                            .bind(s.as_str())
                            .bind(limit)
                            .fetch_all(&self.pool)
                            .await?
                    }
                    None => {
                        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY id DESC LIMIT $1");
                        sqlx::query_as(sqlx::AssertSqlSafe(sql))
                            .bind(limit)
                            .fetch_all(&self.pool)
                            .await?
                    }
                };
                Ok(rows)
            }

            async fn jobs_for_delivery(&self, id: &DeliveryId) -> Result<Vec<JobRow>, StoreError> {
                let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE delivery_id = $1 ORDER BY id");
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(&id.0)
                    .fetch_all(&self.pool)
                    .await?)
            }

            async fn queue_counts(&self) -> Result<QueueCounts, StoreError> {
                let rows: Vec<(String, i64)> =
                    sqlx::query_as("SELECT state, COUNT(*) FROM jobs GROUP BY state")
                        .fetch_all(&self.pool)
                        .await?;
                let mut c = QueueCounts::default();
                for (state, n) in rows {
                    match state.as_str() {
                        "pending" => c.pending = n,
                        "running" => c.running = n,
                        "done" => c.done = n,
                        "dead" => c.dead = n,
                        _ => {}
                    }
                }
                Ok(c)
            }

            async fn create_sweep(&self, w: &SweepRow) -> Result<bool, StoreError> {
                let sql = format!(
                    "INSERT INTO sweeps ({SWEEP_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
                     $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) \
                     ON CONFLICT (sweep_id) DO NOTHING"
                );
                let n = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(&w.sweep_id)
                    .bind(&w.repository)
                    .bind(w.installation_id)
                    .bind(w.pr_number)
                    .bind(&w.head_sha)
                    .bind(&w.base_sha)
                    .bind(&w.primary_label)
                    .bind(&w.modifiers)
                    .bind(&w.matrix)
                    .bind(&w.token_sha256)
                    .bind(w.expires_at)
                    .bind(w.state.as_str())
                    .bind(w.run_id)
                    .bind(&w.conclusion)
                    .bind(&w.reason)
                    .bind(w.created_at)
                    .bind(w.updated_at)
                    .bind(w.dispatch_sent_at)
                    .execute(&self.pool)
                    .await?
                    .rows_affected();
                Ok(n == 1)
            }

            async fn sweep(&self, id: &str) -> Result<Option<SweepRow>, StoreError> {
                let sql = format!("SELECT {SWEEP_COLUMNS} FROM sweeps WHERE sweep_id = $1");
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            async fn pr_sweeps(
                &self,
                repository: &str,
                pr: i64,
            ) -> Result<Vec<SweepRow>, StoreError> {
                let sql = format!(
                    "SELECT {SWEEP_COLUMNS} FROM sweeps WHERE repository = $1 AND pr_number = $2 \
                     ORDER BY created_at, sweep_id"
                );
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(repository)
                    .bind(pr)
                    .fetch_all(&self.pool)
                    .await?)
            }

            async fn open_sweeps(&self) -> Result<Vec<SweepRow>, StoreError> {
                let sql = format!(
                    "SELECT {SWEEP_COLUMNS} FROM sweeps \
                     WHERE state IN ('dispatched', 'running') ORDER BY created_at, sweep_id"
                );
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .fetch_all(&self.pool)
                    .await?)
            }

            async fn sweep_by_run(
                &self,
                repository: &str,
                run_id: i64,
            ) -> Result<Option<SweepRow>, StoreError> {
                let sql = format!(
                    "SELECT {SWEEP_COLUMNS} FROM sweeps WHERE run_id = $1 AND repository = $2"
                );
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(run_id)
                    .bind(repository)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            async fn record_sweep_job(&self, j: &SweepJob) -> Result<bool, StoreError> {
                // Events arrive out of order and more than once: a row only
                // moves forward (attempt, then queued < in_progress < completed).
                let n = sqlx::query(
                    "INSERT INTO sweep_jobs (sweep_id, name, attempt, status, conclusion, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6) \
                     ON CONFLICT (sweep_id, name) DO UPDATE SET attempt = excluded.attempt, \
                     status = excluded.status, conclusion = excluded.conclusion, \
                     updated_at = excluded.updated_at \
                     WHERE excluded.attempt > sweep_jobs.attempt \
                     OR (excluded.attempt = sweep_jobs.attempt AND \
                     (CASE excluded.status WHEN 'queued' THEN 0 WHEN 'in_progress' THEN 1 ELSE 2 END) > \
                     (CASE sweep_jobs.status WHEN 'queued' THEN 0 WHEN 'in_progress' THEN 1 ELSE 2 END))",
                )
                .bind(&j.sweep_id)
                .bind(&j.name)
                .bind(j.attempt)
                .bind(&j.status)
                .bind(&j.conclusion)
                .bind(j.updated_at)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn sweep_jobs(&self, sweep_id: &str) -> Result<Vec<SweepJob>, StoreError> {
                Ok(sqlx::query_as(
                    "SELECT sweep_id, name, attempt, status, conclusion, updated_at \
                     FROM sweep_jobs WHERE sweep_id = $1 ORDER BY name",
                )
                .bind(sweep_id)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn update_sweep(
                &self,
                id: &str,
                c: &SweepUpdate<'_>,
                now: i64,
            ) -> Result<bool, StoreError> {
                let n = sqlx::query(
                    "UPDATE sweeps SET state = COALESCE($2, state), \
                     run_id = COALESCE($3, run_id), conclusion = COALESCE($4, conclusion), \
                     reason = COALESCE($5, reason), token_sha256 = COALESCE($6, token_sha256), \
                     updated_at = $7 WHERE sweep_id = $1",
                )
                .bind(id)
                .bind(c.state.map(SweepState::as_str))
                .bind(c.run_id)
                .bind(c.conclusion)
                .bind(c.reason)
                .bind(c.token_sha256)
                .bind(now)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn record_head(&self, h: &HeadRecord) -> Result<bool, StoreError> {
                let n = sqlx::query(
                    "INSERT INTO pr_heads (repository, pr_number, head_sha, pushed_at, \
                     received_at, source) VALUES ($1, $2, $3, $4, $5, $6) \
                     ON CONFLICT (repository, pr_number, source) DO NOTHING",
                )
                .bind(&h.repository)
                .bind(h.pr_number)
                .bind(&h.head_sha)
                .bind(h.pushed_at)
                .bind(h.received_at)
                .bind(&h.source)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn pr_heads(
                &self,
                repository: &str,
                pr: i64,
            ) -> Result<Vec<HeadRecord>, StoreError> {
                Ok(sqlx::query_as(
                    "SELECT repository, pr_number, head_sha, pushed_at, received_at, source \
                     FROM pr_heads WHERE repository = $1 AND pr_number = $2 \
                     ORDER BY pushed_at, received_at, source",
                )
                .bind(repository)
                .bind(pr)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn pin(&self, repo: &RepoName, pr: PrNumber) -> Result<Option<Pin>, StoreError> {
                let row: Option<(i64, String, Option<i64>)> = sqlx::query_as(
                    "SELECT run_id, pinned_by, command_comment_id FROM pins \
                     WHERE repository = $1 AND pr_number = $2",
                )
                .bind(&repo.0)
                .bind(pr.0 as i64)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(|(run, by, comment)| Pin {
                    run: RunId(run as u64),
                    by,
                    command_comment: comment.map(|c| CommentId(c as u64)),
                }))
            }

            async fn put_pin(&self, repo: &RepoName, pr: PrNumber, pin: &Pin, now: i64) -> Result<bool, StoreError> {
                let n = sqlx::query(
                    "INSERT INTO pins (repository, pr_number, run_id, pinned_by, \
                     command_comment_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6) \
                     ON CONFLICT (repository, pr_number) DO UPDATE SET run_id = excluded.run_id, \
                     pinned_by = excluded.pinned_by, command_comment_id = excluded.command_comment_id, \
                     updated_at = excluded.updated_at \
                     WHERE pins.command_comment_id IS NULL \
                     OR pins.command_comment_id <= excluded.command_comment_id",
                )
                .bind(&repo.0)
                .bind(pr.0 as i64)
                .bind(pin.run.0 as i64)
                .bind(&pin.by)
                .bind(pin.command_comment.map(|c| c.0 as i64))
                .bind(now)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn mark_dispatch_sent(&self, sweep_id: &str, now: i64) -> Result<bool, StoreError> {
                let n = sqlx::query(
                    "UPDATE sweeps SET dispatch_sent_at = COALESCE(dispatch_sent_at, $2) \
                     WHERE sweep_id = $1",
                )
                .bind(sweep_id)
                .bind(now)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn staging_reply(&self, reply: CommentId) -> Result<Option<StagingReply>, StoreError> {
                let row: Option<(Option<i64>, i64)> = sqlx::query_as(
                    "SELECT command_comment_id, run_id FROM staging_replies \
                     WHERE reply_comment_id = $1",
                )
                .bind(reply.0 as i64)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(|(comment, run)| StagingReply {
                    command_comment: comment.map(|c| CommentId(c as u64)),
                    run: RunId(run as u64),
                }))
            }

            async fn put_staging_reply(&self, reply: CommentId, facts: &StagingReply, now: i64) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO staging_replies (reply_comment_id, command_comment_id, run_id, \
                     updated_at) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (reply_comment_id) DO UPDATE SET \
                     command_comment_id = excluded.command_comment_id, run_id = excluded.run_id, \
                     updated_at = excluded.updated_at",
                )
                .bind(reply.0 as i64)
                .bind(facts.command_comment.map(|c| c.0 as i64))
                .bind(facts.run.0 as i64)
                .bind(now)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn staging_sent(&self, key: &StagingKey) -> Result<bool, StoreError> {
                let n: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM staging_sent \
                     WHERE run_id = $1 AND attempt = $2 AND reply_comment_id = $3",
                )
                .bind(key.run.0 as i64)
                .bind(key.attempt as i64)
                .bind(key.reply.0 as i64)
                .fetch_one(&self.pool)
                .await?;
                Ok(n > 0)
            }

            async fn mark_staging_sent(&self, key: &StagingKey, now: i64) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO staging_sent (run_id, attempt, reply_comment_id, sent_at) \
                     VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (run_id, attempt, reply_comment_id) DO NOTHING",
                )
                .bind(key.run.0 as i64)
                .bind(key.attempt as i64)
                .bind(key.reply.0 as i64)
                .bind(now)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn fork_binding(&self, repo: &RepoName, pr: PrNumber) -> Result<Option<String>, StoreError> {
                Ok(sqlx::query_scalar(
                    "SELECT head_sha FROM fork_bindings WHERE repository = $1 AND pr_number = $2",
                )
                .bind(&repo.0)
                .bind(pr.0 as i64)
                .fetch_optional(&self.pool)
                .await?)
            }

            async fn bind_fork(&self, repo: &RepoName, pr: PrNumber, head_sha: &str, now: i64) -> Result<(), StoreError> {
                Self::pr_query(
                    "INSERT INTO fork_bindings (repository, pr_number, head_sha, bound_at) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT (repository, pr_number) DO UPDATE \
                     SET head_sha = excluded.head_sha, bound_at = excluded.bound_at",
                    repo,
                    pr,
                )
                .bind(head_sha)
                .bind(now)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn published_check_run(&self, repo: &RepoName, head_sha: &str) -> Result<Option<String>, StoreError> {
                Ok(sqlx::query_scalar(
                    "SELECT digest FROM verdict_check_runs WHERE repository = $1 AND head_sha = $2",
                )
                .bind(&repo.0)
                .bind(head_sha)
                .fetch_optional(&self.pool)
                .await?)
            }

            async fn record_published_check_run(&self, repo: &RepoName, head_sha: &str, digest: &str, now: i64) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO verdict_check_runs (repository, head_sha, digest, published_at) \
                     VALUES ($1, $2, $3, $4) ON CONFLICT (repository, head_sha) DO UPDATE \
                     SET digest = excluded.digest, published_at = excluded.published_at",
                )
                .bind(&repo.0)
                .bind(head_sha)
                .bind(digest)
                .bind(now)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn verifier_runs_since(&self, of: &VerifierRunsOf<'_>, since: i64) -> Result<u64, StoreError> {
                let n: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM verifier_runs WHERE repository = $1 \
                     AND pr_number = $2 AND actor = $3 AND at > $4",
                )
                .bind(&of.repo.0)
                .bind(of.pr.0 as i64)
                .bind(of.actor)
                .bind(since)
                .fetch_one(&self.pool)
                .await?;
                Ok(n.max(0) as u64)
            }

            async fn record_verifier_run(&self, of: &VerifierRunsOf<'_>, at: i64, since: i64) -> Result<(), StoreError> {
                let mut tx = self.pool.begin().await?;
                // Forget the runs that no longer count, then count this one.
                for (sql, time) in [
                    ("DELETE FROM verifier_runs WHERE repository = $1 AND pr_number = $2 AND actor = $3 AND at <= $4", since),
                    ("INSERT INTO verifier_runs (repository, pr_number, actor, at) VALUES ($1, $2, $3, $4)", at),
                ] {
                    Self::pr_query(sql, of.repo, of.pr).bind(of.actor).bind(time).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(())
            }

            async fn authored_commands(&self, repo: &RepoName, pr: PrNumber) -> Result<Vec<(CommentId, Vec<String>)>, StoreError> {
                let rows: Vec<(i64, String)> = sqlx::query_as(
                    "SELECT comment_id, lines FROM authored_commands \
                     WHERE repository = $1 AND pr_number = $2 ORDER BY comment_id",
                )
                .bind(&repo.0)
                .bind(pr.0 as i64)
                .fetch_all(&self.pool)
                .await?;
                Ok(rows
                    .into_iter()
                    .map(|(id, lines)| {
                        let lines = if lines.is_empty() {
                            Vec::new()
                        } else {
                            lines.split('\n').map(str::to_owned).collect()
                        };
                        (CommentId(id as u64), lines)
                    })
                    .collect())
            }

            async fn authored_signoffs(&self, repo: &RepoName, pr: PrNumber) -> Result<Vec<(String, String)>, StoreError> {
                Ok(sqlx::query_as(
                    "SELECT url, body_sha256 FROM authored_signoffs \
                     WHERE repository = $1 AND pr_number = $2 ORDER BY url",
                )
                .bind(&repo.0)
                .bind(pr.0 as i64)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn put_authored(&self, repo: &RepoName, pr: PrNumber, entry: &AuthoredEntry<'_>, now: i64) -> Result<(), StoreError> {
                let query = match entry {
                    AuthoredEntry::Commands { comment, lines } => Self::pr_query(UPSERT_AUTHORED_COMMANDS, repo, pr).bind(comment.0 as i64).bind(lines.join("\n")),
                    AuthoredEntry::Signoff { url, body_sha256 } => Self::pr_query(UPSERT_AUTHORED_SIGNOFF, repo, pr).bind(*url).bind(*body_sha256),
                };
                query.bind(now).execute(&self.pool).await?;
                Ok(())
            }

            async fn last_valid_config(&self, repo: &RepoName) -> Result<Option<String>, StoreError> {
                Ok(
                    sqlx::query_scalar("SELECT text FROM repo_configs WHERE repository = $1")
                        .bind(&repo.0)
                        .fetch_optional(&self.pool)
                        .await?,
                )
            }

            async fn keep_valid_config(&self, repo: &RepoName, text: &str, now: i64) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO repo_configs (repository, text, updated_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (repository) DO UPDATE \
                     SET text = excluded.text, updated_at = excluded.updated_at",
                )
                .bind(&repo.0)
                .bind(text)
                .bind(now)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn signing_key(&self, name: &str, fresh_hex: &str, now: i64) -> Result<String, StoreError> {
                sqlx::query(
                    "INSERT INTO signing_keys (name, key_hex, created_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (name) DO NOTHING",
                )
                .bind(name)
                .bind(fresh_hex)
                .bind(now)
                .execute(&self.pool)
                .await?;
                // Just written or kept: it is there.
                Ok(
                    sqlx::query_scalar("SELECT key_hex FROM signing_keys WHERE name = $1")
                        .bind(name)
                        .fetch_optional(&self.pool)
                        .await?
                        .unwrap_or_default(),
                )
            }
        }
    };
}

sql_store!(
    SqliteStore,
    SqlitePool,
    sqlx::Sqlite,
    Backend::Sqlite,
    SQLITE_MIGRATOR,
    ""
);
sql_store!(
    PgStore,
    PgPool,
    sqlx::Postgres,
    Backend::Postgres,
    PG_MIGRATOR,
    "FOR UPDATE SKIP LOCKED"
);

impl SqliteStore {
    pub async fn open(url: &str, sync: SqliteSync) -> Result<Self, StoreError> {
        let opts = SqliteConnectOptions::from_str(url)
            .map_err(|_| StoreError::UnsupportedUrl(url.to_owned()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(match sync {
                SqliteSync::Normal => SqliteSynchronous::Normal,
                SqliteSync::Full => SqliteSynchronous::Full,
            })
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        // An in-memory database exists per connection: keep exactly one
        // (and it has no WAL to checkpoint).
        let in_memory = url.contains(":memory:");
        let max = if in_memory { 1 } else { 8 };
        let pool = SqlitePoolOptions::new()
            .max_connections(max)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(super::checkpoint::writer_options(opts.clone()))
            .await?;
        let checkpointer = if in_memory {
            None
        } else {
            Some(super::checkpoint::Checkpointer::start(&opts).await?)
        };
        Ok(Self::from_pool(pool, checkpointer))
    }
}

impl PgStore {
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(3))
            .connect(url)
            .await?;
        Ok(Self::from_pool(pool, None))
    }

    /// A pool that connects on first use, so a server can start (and answer
    /// 503) while PostgreSQL is down.
    pub fn open_lazy(url: &str) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(3))
            .connect_lazy(url)?;
        Ok(Self::from_pool(pool, None))
    }
}
