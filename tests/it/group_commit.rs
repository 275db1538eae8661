//! Group commit in the store: a batch of deliveries ends exactly as the
//! same deliveries stored one by one would (duplicates, in the database or
//! within the batch, write nothing; jobs keep the arrival order), and a
//! delivery the database refuses fails alone.
use crate::common::{TestDb, on_both};
use sweepgate::store::{
    BatchItem, DeliveryBody, DeliveryOutcome, Inserted, NewDelivery, NewJob, StoreError,
};
use sweepgate_core::ids::DeliveryId;

fn item(id: &str, pr: i64, queued: bool) -> BatchItem {
    BatchItem {
        delivery: NewDelivery {
            delivery_id: DeliveryId(id.into()),
            event: "pull_request".into(),
            action: Some(if queued { "opened" } else { "assigned" }.into()),
            repository: Some("o/r".into()),
            installation_id: Some(7),
            pr_number: Some(pr),
            body: DeliveryBody::compress(format!(r#"{{"delivery":"{id}"}}"#).as_bytes()),
            received_at: 1_000,
        },
        outcome: if queued {
            DeliveryOutcome::Queued
        } else {
            DeliveryOutcome::Ignored("action `assigned` of `pull_request` is not handled".into())
        },
        job: queued.then(|| NewJob {
            kind: "pull_request.opened".into(),
            serial_key: Some(format!("o/r#{pr}")),
            payload: "{}".into(),
            max_attempts: 8,
            run_after: 1_000,
        }),
    }
}

fn outcomes(results: Vec<Result<Inserted, StoreError>>) -> Vec<Result<Inserted, String>> {
    results
        .into_iter()
        .map(|r| r.map_err(|e| e.to_string()))
        .collect()
}

#[tokio::test]
async fn a_batch_stores_each_delivery_once_with_its_job_in_arrival_order() {
    on_both(|db: TestDb| async move {
        let store = &db.store;
        let before = item("seen-before", 1, true);
        store
            .record_delivery(&before.delivery, &before.outcome, before.job.as_ref())
            .await
            .unwrap();
        let batch = [
            item("b", 1, true),
            item("ignored", 1, false),
            item("b", 1, true),
            item("seen-before", 1, true),
            item("a", 1, true),
        ];
        let results = store.record_deliveries(&batch).await.unwrap();
        use Inserted::{Duplicate, New};
        assert_eq!(
            outcomes(results),
            vec![Ok(New), Ok(New), Ok(Duplicate), Ok(Duplicate), Ok(New)],
            "{}",
            db.name
        );
        // One job per new queued delivery, none for the ignored one or a
        // duplicate; ids in arrival order, so the PR's jobs run b, then a.
        let job = |id: &str| {
            let id = DeliveryId(id.into());
            async move { store.jobs_for_delivery(&id).await.unwrap() }
        };
        let (b, a) = (job("b").await, job("a").await);
        assert_eq!((b.len(), a.len()), (1, 1));
        assert!(b[0].id < a[0].id);
        assert_eq!(b[0].serial_key.as_deref(), Some("o/r#1"));
        assert!(job("ignored").await.is_empty());
        assert_eq!(job("seen-before").await.len(), 1);
        let row = store
            .delivery(&DeliveryId("ignored".into()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.outcome, "ignored");
        assert_eq!(
            row.reason.as_deref(),
            Some("action `assigned` of `pull_request` is not handled")
        );
        assert_eq!(store.queue_counts().await.unwrap().pending, 3);
        assert!(store.record_deliveries(&[]).await.unwrap().is_empty());
        db
    })
    .await;
}

/// A trigger that refuses the delivery `refused`, as a constraint would.
async fn refuse_one(db: &TestDb) {
    if db.name == "sqlite" {
        db.execute(&["CREATE TRIGGER refuse BEFORE INSERT ON deliveries \
             WHEN NEW.delivery_id = 'refused' \
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"])
            .await;
    } else {
        db.execute(&[
            "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN \
             IF NEW.delivery_id = 'refused' THEN \
             RAISE EXCEPTION 'refused by the test' USING ERRCODE = 'check_violation'; \
             END IF; RETURN NEW; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER refuse BEFORE INSERT ON deliveries \
             FOR EACH ROW EXECUTE FUNCTION refuse()",
        ])
        .await;
    }
}

#[tokio::test]
async fn a_delivery_the_database_refuses_fails_alone() {
    on_both(|db: TestDb| async move {
        refuse_one(&db).await;
        let batch = [
            item("first", 2, true),
            item("refused", 2, true),
            item("first", 2, true),
            item("last", 2, false),
        ];
        let results = outcomes(db.store.record_deliveries(&batch).await.unwrap());
        assert_eq!(results[0], Ok(Inserted::New), "{}", db.name);
        assert!(
            results[1]
                .as_ref()
                .is_err_and(|e| e.contains("refused by the test")),
            "{}: {:?}",
            db.name,
            results[1]
        );
        assert_eq!(
            results[2..],
            [Ok(Inserted::Duplicate), Ok(Inserted::New)],
            "{}",
            db.name
        );
        let stored = db.store.recent_deliveries(10).await.unwrap();
        let mut ids: Vec<&str> = stored.iter().map(|d| d.delivery_id.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["first", "last"]);
        assert_eq!(db.store.queue_counts().await.unwrap().pending, 1);
        db
    })
    .await;
}

/// PostgreSQL cannot store a NUL character in text; such a delivery (an
/// `action` with `\u0000` in it, from a hostile sender with the secret) is
/// refused alone.
#[tokio::test]
async fn on_postgres_a_nul_in_a_field_fails_that_delivery_alone() {
    let Some(db) = TestDb::postgres().await else {
        return;
    };
    let mut nul = item("nul", 3, false);
    nul.delivery.action = Some("assi\0gned".into());
    let batch = [item("before", 3, true), nul, item("after", 3, true)];
    let results = outcomes(db.store.record_deliveries(&batch).await.unwrap());
    assert_eq!(results[0], Ok(Inserted::New));
    assert!(results[1].is_err(), "{:?}", results[1]);
    assert_eq!(results[2], Ok(Inserted::New));
    assert_eq!(db.store.queue_counts().await.unwrap().pending, 2);
    db.cleanup().await;
}

/// Bodies are stored compressed (0009) and read back as the text GitHub
/// sent, by a batch and alone; a row an older release wrote (text in
/// `body`, no frame) still reads.
#[tokio::test]
async fn bodies_are_stored_compressed_and_read_back_as_sent() {
    on_both(|db: TestDb| async move {
        let store = &db.store;
        let sent =
            std::fs::read_to_string("tests/data/github/webhooks/pull_request/opened.payload.json")
                .unwrap();
        let mut batched = item("batched", 1, true);
        batched.delivery.body = DeliveryBody::compress(sent.as_bytes());
        let mut alone = item("alone", 2, true);
        alone.delivery.body = DeliveryBody::compress(sent.as_bytes());
        store.record_deliveries(&[batched]).await.unwrap();
        store
            .record_delivery(&alone.delivery, &alone.outcome, alone.job.as_ref())
            .await
            .unwrap();
        db.execute(&[
            "INSERT INTO deliveries (delivery_id, event, outcome, body, received_at) \
             VALUES ('older', 'ping', 'queued', '{\"zen\":\"old\"}', 1)",
        ])
        .await;
        for id in ["batched", "alone"] {
            let got = store.delivery_body(&DeliveryId(id.into())).await.unwrap();
            assert_eq!(got.as_deref(), Some(sent.as_str()), "{}: {id}", db.name);
        }
        let older = store
            .delivery_body(&DeliveryId("older".into()))
            .await
            .unwrap();
        assert_eq!(older.as_deref(), Some(r#"{"zen":"old"}"#), "{}", db.name);
        let stored: Vec<i64> = db
            .scalars(
                "SELECT CAST(LENGTH(body) + LENGTH(body_zstd) AS BIGINT) FROM deliveries \
                      WHERE body_zstd IS NOT NULL ORDER BY delivery_id",
            )
            .await;
        assert_eq!(stored.len(), 2, "{}", db.name);
        for n in stored {
            assert!(
                n > 0 && (n as usize) < sent.len() / 5,
                "{}: {n} bytes stored",
                db.name
            );
        }
        db
    })
    .await;
}
