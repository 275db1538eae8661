//! Group commit: many deliveries with their jobs in one transaction, so the
//! intake pays one commit (one WAL write, one `synchronous_commit` flush)
//! per batch instead of per delivery.
//!
//! Each delivery ends exactly as [`Storage::record_delivery`] would end it
//! alone: a delivery id seen before (in the database, or earlier in the same
//! batch) is a duplicate and writes nothing; a delivery the database refuses
//! fails alone, its batch-mates are stored.
use super::*;
use sqlx::QueryBuilder;
use std::collections::HashSet;

/// One delivery of a batch, with what the intake decided about it.
#[derive(Debug, Clone)]
pub struct BatchItem {
    pub delivery: NewDelivery,
    pub outcome: DeliveryOutcome,
    pub job: Option<NewJob>,
}

/// Rows per multi-row `INSERT`: far below SQLite's 32,766 and PostgreSQL's
/// 65,535 bound parameters (11 a delivery).
pub(crate) const ROWS_PER_STATEMENT: usize = 500;

/// Which items of a batch were new: the first occurrence of a delivery id
/// the statement inserted is new, every other one a duplicate.
fn new_items(items: &[BatchItem], inserted: &HashSet<String>) -> Vec<Inserted> {
    let mut taken = HashSet::new();
    items
        .iter()
        .map(|it| {
            let id = it.delivery.delivery_id.0.as_str();
            if inserted.contains(id) && taken.insert(id) {
                Inserted::New
            } else {
                Inserted::Duplicate
            }
        })
        .collect()
}

/// The database refused one item's data (a constraint, a value it cannot
/// hold), as opposed to failing the whole batch (busy, unreachable): only
/// then is the batch stored item by item.
fn refuses_an_item(e: &sqlx::Error, backend: Backend) -> bool {
    let db = match e {
        sqlx::Error::Encode(_) => return true,
        sqlx::Error::Database(db) => db,
        _ => return false,
    };
    if db.kind() != sqlx::error::ErrorKind::Other {
        return true;
    }
    let Some(code) = db.code() else {
        return false;
    };
    match backend {
        // Extended result codes: TOOBIG, CONSTRAINT (a trigger's RAISE
        // too), MISMATCH, RANGE.
        Backend::Sqlite => code
            .parse::<i32>()
            .is_ok_and(|n| matches!(n & 0xff, 18 | 19 | 20 | 25)),
        // SQLSTATE classes 22 (data exception) and 23 (integrity).
        Backend::Postgres => code.starts_with("22") || code.starts_with("23"),
    }
}

macro_rules! batch_store {
    ($name:ident, $db:ty) => {
        impl super::$name {
            /// The whole batch in one transaction with multi-row inserts;
            /// `Err` when any statement or the commit failed (nothing of
            /// the batch is stored then).
            async fn insert_batch(
                &self,
                items: &[BatchItem],
            ) -> Result<Vec<Inserted>, sqlx::Error> {
                let _turn = self.write_turn().await;
                let mut tx = self.pool().begin().await?;
                let mut inserted = HashSet::new();
                for chunk in items.chunks(ROWS_PER_STATEMENT) {
                    let mut q = QueryBuilder::<$db>::new(super::sql::insert_deliveries!());
                    q.push_values(chunk, |mut row, it| {
                        let d = &it.delivery;
                        let (text, zstd) = d.body.columns();
                        row.push_bind(d.delivery_id.0.as_str())
                            .push_bind(d.event.as_str())
                            .push_bind(d.action.as_deref())
                            .push_bind(d.repository.as_deref())
                            .push_bind(d.installation_id)
                            .push_bind(d.pr_number)
                            .push_bind(it.outcome.as_str())
                            .push_bind(it.outcome.reason())
                            .push_bind(text)
                            .push_bind(zstd)
                            .push_bind(d.received_at);
                    });
                    q.push(" ON CONFLICT (delivery_id) DO NOTHING RETURNING delivery_id");
                    let ids: Vec<String> = q.build_query_scalar().fetch_all(&mut *tx).await?;
                    inserted.extend(ids);
                }
                let outcomes = new_items(items, &inserted);
                // Jobs in arrival order: ids order the jobs of one PR.
                let jobs: Vec<(&DeliveryId, &NewJob, i64)> = items
                    .iter()
                    .zip(&outcomes)
                    .filter(|(_, o)| **o == Inserted::New)
                    .filter_map(|(it, _)| {
                        let d = &it.delivery;
                        it.job.as_ref().map(|j| (&d.delivery_id, j, d.received_at))
                    })
                    .collect();
                for chunk in jobs.chunks(ROWS_PER_STATEMENT) {
                    let mut q = QueryBuilder::<$db>::new(
                        "INSERT INTO jobs (delivery_id, kind, serial_key, payload, state, \
                         attempts, max_attempts, run_after, created_at, updated_at) ",
                    );
                    q.push_values(chunk, |mut row, (id, job, now)| {
                        row.push_bind(id.0.as_str())
                            .push_bind(job.kind.as_str())
                            .push_bind(job.serial_key.as_deref())
                            .push_bind(job.payload.as_str())
                            .push_bind("pending")
                            .push_bind(0i64)
                            .push_bind(i64::from(job.max_attempts))
                            .push_bind(job.run_after.max(*now))
                            .push_bind(*now)
                            .push_bind(*now);
                    });
                    q.build().execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(outcomes)
            }

            pub(super) async fn record_batch(
                &self,
                items: &[BatchItem],
            ) -> Result<Vec<Result<Inserted, StoreError>>, StoreError> {
                if items.is_empty() {
                    return Ok(Vec::new());
                }
                match self.insert_batch(items).await {
                    Ok(outcomes) => Ok(outcomes.into_iter().map(Ok).collect()),
                    // Something in the batch was refused: find which by
                    // storing each alone, in arrival order (so a repeated
                    // id is still the later one's duplicate).
                    Err(e) if refuses_an_item(&e, self.backend()) => {
                        tracing::warn!(error = %e, items = items.len(),
                            "a batch of deliveries was refused; storing them one by one");
                        let mut out = Vec::with_capacity(items.len());
                        for it in items {
                            out.push(
                                self.record_delivery(&it.delivery, &it.outcome, it.job.as_ref())
                                    .await,
                            );
                        }
                        Ok(out)
                    }
                    // Busy or unreachable: the whole batch fails.
                    Err(e) => Err(e.into()),
                }
            }
        }
    };
}

batch_store!(SqliteStore, sqlx::Sqlite);
batch_store!(PgStore, sqlx::Postgres);
