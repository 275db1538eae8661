//! Upgrading a database the previous release wrote (issue 22): migrations
//! 0001–0005, handler state as JSON in the `kv` table, jobs in flight with
//! the `{}` payload of that release. Migration 0006 copies every kv row into
//! its own table; the upgraded bot, on the same sandbox GitHub, then runs
//! the jobs in flight and dispatches, stages and comments nothing twice, and
//! a fork PR's binding still holds. On SQLite and on PostgreSQL.
//!
//! The old database is made the way the old release wrote it: the scenario
//! runs once on a scratch database (so the sandbox holds everything the bot
//! did), and its state is written out in the previous release's formats —
//! the kv namespaces, keys and JSON values of `src/handlers/*` before
//! issue 22 — next to the rows of the tables that did not change.
use crate::common;

use axum::body::Body;
use axum::http::Request;
use common::TestDb;
use common::transcript::{
    DISPATCH_ONLY, OWNER, REPO, World, add_results_repo, changelog_append, dispatch_world,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use sweepgate::config::server::Secret;
use sweepgate::server::{AppState, router};
use sweepgate::store::{DeliveryBody, now_ms};
use sweepgate_core::ids::{PrNumber, RepoName};
use tokio::sync::Notify;
use tower::ServiceExt;

const LABEL: &str = "full-sweep-fail-fast";

/// A SQL literal (both back ends read standard literals).
fn lit(v: &Option<String>) -> String {
    match v {
        None => "NULL".into(),
        Some(s) => format!("'{}'", s.replace('\'', "''")),
    }
}

fn int(v: Option<i64>) -> String {
    v.map_or_else(|| "NULL".into(), |n| n.to_string())
}

/// One value of a scratch row, as a literal.
fn value(row: &sqlx::sqlite::SqliteRow, i: usize) -> String {
    use sqlx::Row;
    match row.try_get::<Option<i64>, _>(i) {
        Ok(n) => int(n),
        Err(_) => lit(&row.try_get::<Option<String>, _>(i).unwrap()),
    }
}

/// Tables whose shape 0006 keeps, with the columns 0005 has.
const KEPT: &[(&str, &str)] = &[
    (
        "deliveries",
        "delivery_id, event, action, repository, installation_id, pr_number, outcome, reason, body, received_at",
    ),
    (
        "jobs",
        "id, delivery_id, kind, serial_key, payload, state, attempts, max_attempts, run_after, lease_token, lease_owner, lease_until, last_error, outcome, created_at, updated_at, finished_at",
    ),
    (
        "sweeps",
        "sweep_id, repository, installation_id, pr_number, head_sha, base_sha, primary_label, modifiers, matrix, token_sha256, expires_at, state, run_id, conclusion, reason, created_at, updated_at",
    ),
    (
        "sweep_jobs",
        "sweep_id, name, attempt, status, conclusion, updated_at",
    ),
    (
        "activity",
        "id, repository, pr_number, head_sha, kind, summary, detail, at",
    ),
    (
        "pr_heads",
        "repository, pr_number, head_sha, pushed_at, received_at, source",
    ),
];

async fn rows(pool: &sqlx::SqlitePool, sql: &str) -> Vec<sqlx::sqlite::SqliteRow> {
    sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_all(pool)
        .await
        .unwrap()
}

fn kv(ns: &str, key: &str, value: &str, at: i64) -> String {
    format!(
        "INSERT INTO kv (namespace, key, value, updated_at) VALUES ({}, {}, {}, {at});\n",
        lit(&Some(ns.into())),
        lit(&Some(key.into())),
        lit(&Some(value.into()))
    )
}

/// The scratch database as the previous release would have written it.
async fn as_previous_release(scratch: &str) -> String {
    use sqlx::Row;
    let pool = sqlx::SqlitePool::connect(scratch).await.unwrap();
    let mut sql = String::new();
    for (table, cols) in KEPT {
        let n = cols.split(',').count();
        // The previous release stored a body as text; this one compresses
        // it (0009), so the scratch row's body is read back for the old one.
        let extra = if *table == "deliveries" {
            ", body_zstd"
        } else {
            ""
        };
        for row in rows(&pool, &format!("SELECT {cols}{extra} FROM {table}")).await {
            let mut values: Vec<String> = (0..n).map(|i| value(&row, i)).collect();
            if *table == "deliveries" {
                let text = DeliveryBody::read(row.get("body"), row.get("body_zstd")).unwrap();
                values[8] = lit(&Some(text));
            }
            sql.push_str(&format!(
                "INSERT INTO {table} ({cols}) VALUES ({});\n",
                values.join(", ")
            ));
        }
    }
    // The previous release's kv rows (namespaces, keys and values as
    // `src/handlers/*` wrote them).
    for r in rows(
        &pool,
        "SELECT sweep_id, dispatch_sent_at FROM sweeps WHERE dispatch_sent_at IS NOT NULL",
    )
    .await
    {
        sql += &kv("sweep-dispatch-sent", r.get::<&str, _>(0), "sent", r.get(1));
    }
    for r in rows(
        &pool,
        "SELECT repository, pr_number, run_id, pinned_by, command_comment_id, updated_at FROM pins",
    )
    .await
    {
        let v = json!({ "run": r.get::<i64, _>(2), "by": r.get::<&str, _>(3), "comment": r.get::<Option<i64>, _>(4) });
        let key = format!("{}#{}", r.get::<&str, _>(0), r.get::<i64, _>(1));
        sql += &kv("pin", &key, &v.to_string(), r.get(5));
    }
    for r in rows(
        &pool,
        "SELECT repository, pr_number, head_sha, bound_at FROM fork_bindings",
    )
    .await
    {
        let key = format!("{}#{}", r.get::<&str, _>(0), r.get::<i64, _>(1));
        sql += &kv("fork-sweep-bound", &key, r.get(2), r.get(3));
    }
    for r in rows(
        &pool,
        "SELECT repository, head_sha, digest, published_at FROM verdict_check_runs",
    )
    .await
    {
        let key = format!("{}@{}", r.get::<&str, _>(0), r.get::<&str, _>(1));
        sql += &kv("verdict-check-run", &key, r.get(2), r.get(3));
    }
    for r in rows(
        &pool,
        "SELECT reply_comment_id, command_comment_id, run_id, updated_at FROM staging_replies",
    )
    .await
    {
        let v = json!({ "command_comment": r.get::<Option<i64>, _>(1), "run": r.get::<i64, _>(2) });
        sql += &kv(
            "staging-reply",
            &r.get::<i64, _>(0).to_string(),
            &v.to_string(),
            r.get(3),
        );
    }
    for r in rows(
        &pool,
        "SELECT run_id, attempt, reply_comment_id, sent_at FROM staging_sent",
    )
    .await
    {
        let key = format!(
            "{}:{}:{}",
            r.get::<i64, _>(0),
            r.get::<i64, _>(1),
            r.get::<i64, _>(2)
        );
        sql += &kv("staging-sent", &key, "sent", r.get(3));
    }
    let mut runs: BTreeMap<String, (Vec<i64>, i64)> = BTreeMap::new();
    for r in rows(
        &pool,
        "SELECT repository, pr_number, actor, at FROM verifier_runs ORDER BY at",
    )
    .await
    {
        let key = format!(
            "{}#{}:{}",
            r.get::<&str, _>(0),
            r.get::<i64, _>(1),
            r.get::<&str, _>(2)
        );
        let e = runs.entry(key).or_default();
        e.0.push(r.get(3));
        e.1 = r.get(3);
    }
    for (key, (times, at)) in runs {
        sql += &kv("verifier-runs", &key, &json!(times).to_string(), at);
    }
    let mut authored: BTreeMap<String, (serde_json::Value, i64)> = BTreeMap::new();
    // Both halves of a PR's record, as (section, key, value).
    let halves = "SELECT repository, pr_number, 'commands', CAST(comment_id AS TEXT), lines, \
         updated_at FROM authored_commands UNION ALL SELECT repository, pr_number, \
         'signoffs', url, body_sha256, updated_at FROM authored_signoffs";
    for r in rows(&pool, halves).await {
        let key = format!("{}#{}", r.get::<&str, _>(0), r.get::<i64, _>(1));
        let e = authored
            .entry(key)
            .or_insert((json!({"commands": {}, "signoffs": {}}), 0));
        let text: &str = r.get(4);
        let v = if r.get::<&str, _>(2) == "commands" {
            json!(
                text.split('\n')
                    .filter(|l| !l.is_empty())
                    .collect::<Vec<_>>()
            )
        } else {
            json!(text)
        };
        e.0[r.get::<&str, _>(2)][r.get::<&str, _>(3)] = v;
        e.1 = e.1.max(r.get(5));
    }
    for (key, (v, at)) in authored {
        sql += &kv("authored", &key, &v.to_string(), at);
    }
    for r in rows(
        &pool,
        "SELECT repository, text, updated_at FROM repo_configs",
    )
    .await
    {
        sql += &kv("repo-config", r.get(0), r.get(1), r.get(2));
    }
    for r in rows(
        &pool,
        "SELECT key_hex, created_at FROM signing_keys WHERE name = 'dashboard-link'",
    )
    .await
    {
        sql += &kv("dashboard", "link-key", r.get(0), r.get(1));
    }
    pool.close().await;
    sql
}

/// The typed state an upgrade must keep, as text, from either back end.
const KEPT_STATE: &[&str] = &[
    "SELECT sweep_id || ' ' || state || ' ' || COALESCE(CAST(run_id AS TEXT), '-') || ' ' || CAST(dispatch_sent_at IS NOT NULL AS TEXT) FROM sweeps ORDER BY sweep_id",
    "SELECT repository || '#' || CAST(pr_number AS TEXT) || ' ' || CAST(run_id AS TEXT) || ' ' || pinned_by || ' ' || COALESCE(CAST(command_comment_id AS TEXT), '-') FROM pins ORDER BY 1",
    "SELECT repository || '#' || CAST(pr_number AS TEXT) || ' ' || head_sha FROM fork_bindings ORDER BY 1",
    "SELECT repository || '@' || head_sha || ' ' || digest FROM verdict_check_runs ORDER BY 1",
    "SELECT CAST(reply_comment_id AS TEXT) || ' ' || COALESCE(CAST(command_comment_id AS TEXT), '-') || ' ' || CAST(run_id AS TEXT) FROM staging_replies ORDER BY 1",
    "SELECT CAST(run_id AS TEXT) || ':' || CAST(attempt AS TEXT) || ':' || CAST(reply_comment_id AS TEXT) FROM staging_sent ORDER BY 1",
    "SELECT repository || '#' || CAST(pr_number AS TEXT) || ':' || actor || ' ' || CAST(at AS TEXT) FROM verifier_runs ORDER BY 1",
    "SELECT repository || '#' || CAST(pr_number AS TEXT) || ' ' || CAST(comment_id AS TEXT) || ' ' || lines FROM authored_commands ORDER BY 1",
    "SELECT repository || '#' || CAST(pr_number AS TEXT) || ' ' || url || ' ' || body_sha256 FROM authored_signoffs ORDER BY 1",
    "SELECT repository || ' ' || text FROM repo_configs ORDER BY 1",
    "SELECT name || ' ' || key_hex FROM signing_keys ORDER BY 1",
    // 0008 rebuilds these two on SQLite (`DELIVERIES`, `SWEEP_JOBS`).
    // Bodies are compared as text through the store (`bodies`): 0009 keeps
    // old ones as text and new ones are compressed.
    "SELECT delivery_id || ' ' || event || ' ' || outcome || ' ' || COALESCE(reason, '-') FROM deliveries ORDER BY 1",
    "SELECT sweep_id || ' ' || name || ' ' || CAST(attempt AS TEXT) || ' ' || status || ' ' || COALESCE(conclusion, '-') FROM sweep_jobs ORDER BY 1",
];

/// Where `KEPT_STATE` reads the deliveries and the sweep jobs.
const DELIVERIES: usize = 11;
const SWEEP_JOBS: usize = 12;

/// Runs `$body` with a pool `$pool` on the database at `$url`, either back end.
macro_rules! with_pool {
    ($url:expr, |$pool:ident| $body:expr) => {
        if $url.starts_with("sqlite:") {
            let $pool = sqlx::SqlitePool::connect($url).await.unwrap();
            let out = $body;
            $pool.close().await;
            out
        } else {
            let $pool = sqlx::PgPool::connect($url).await.unwrap();
            let out = $body;
            $pool.close().await;
            out
        }
    };
}

/// Every stored delivery's body as the store reads it.
async fn bodies(store: &sweepgate::store::Store) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in store.recent_deliveries(1000).await.unwrap() {
        let id = sweepgate_core::ids::DeliveryId(d.delivery_id.clone());
        let body = store.delivery_body(&id).await.unwrap().unwrap();
        assert!(!body.is_empty(), "{}: empty body", d.delivery_id);
        out.push((d.delivery_id, body));
    }
    out.sort();
    out
}

async fn typed_state(url: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for q in KEPT_STATE {
        let q = q.replace(
            "CAST(dispatch_sent_at IS NOT NULL AS TEXT)",
            "CASE WHEN dispatch_sent_at IS NULL THEN 'unsent' ELSE 'sent' END",
        );
        let q = sqlx::AssertSqlSafe(q);
        let rows: Vec<String> = with_pool!(url, |pool| sqlx::query_scalar(q)
            .fetch_all(&pool)
            .await
            .unwrap());
        out.push(rows);
    }
    out
}

/// Migrations 0001–0005 only: the previous release's schema.
async fn previous_schema(db: &TestDb) {
    schema_before(db, "0006", 5).await;
}

/// The migrations numbered below `first_new` (there are `count` of them).
async fn schema_before(db: &TestDb, first_new: &str, count: usize) {
    let backend = if db.url.starts_with("sqlite:") {
        "sqlite"
    } else {
        "postgres"
    };
    let dir = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(backend);
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.as_str() < first_new {
            std::fs::copy(&path, dir.path().join(&name)).unwrap();
        }
    }
    let migrator = sqlx::migrate::Migrator::new(dir.path()).await.unwrap();
    assert_eq!(migrator.iter().count(), count);
    with_pool!(db.url.as_str(), |pool| migrator.run(&pool).await.unwrap());
}

async fn execute(url: &str, sql: &str) {
    let script = sqlx::AssertSqlSafe(sql.to_owned());
    with_pool!(url, |pool| sqlx::raw_sql(script)
        .execute(&pool)
        .await
        .unwrap()
        .rows_affected());
    if !url.starts_with("sqlite:") {
        // Ids were copied: PostgreSQL's sequences go on after them (SQLite's
        // AUTOINCREMENT follows inserted ids by itself).
        let setval = sqlx::AssertSqlSafe(
            "SELECT setval('jobs_id_seq', (SELECT MAX(id) FROM jobs)); \
             SELECT setval('activity_id_seq', (SELECT MAX(id) FROM activity));"
                .to_owned(),
        );
        with_pool!(url, |pool| sqlx::raw_sql(setval)
            .execute(&pool)
            .await
            .unwrap()
            .rows_affected());
    }
}

/// Jobs in flight when the previous release stopped, with its `{}`
/// payload: every delivery's job queued again (a retry), the run's
/// completion held by a worker that died, and a kind that release queued
/// with no handler.
fn in_flight(deliveries: &[(String, String)], pr: u64, now: i64) -> String {
    let serial = format!("'{OWNER}/{REPO}#{pr}'");
    let mut sql = String::new();
    for (id, kind) in deliveries {
        let (state, lease) = if kind == "workflow_run.completed" {
            (
                "running",
                format!("4242, 'old-replica-0', {}", now - 60_000),
            )
        } else {
            ("pending", "NULL, NULL, NULL".to_owned())
        };
        sql += &format!(
            "INSERT INTO jobs (delivery_id, kind, serial_key, payload, state, attempts, max_attempts, run_after, lease_token, lease_owner, lease_until, created_at, updated_at) \
             VALUES ('{id}', '{kind}', {serial}, '{{}}', '{state}', {}, 8, {now}, {lease}, {now}, {now});\n",
            i64::from(state == "running")
        );
    }
    let closed = &deliveries[0].0;
    sql += &format!(
        "INSERT INTO jobs (delivery_id, kind, serial_key, payload, state, attempts, max_attempts, run_after, created_at, updated_at) \
         VALUES ('{closed}', 'pull_request.closed', {serial}, '{{}}', 'pending', 0, 8, {now}, {now}, {now});\n"
    );
    sql
}

/// The bot's conversation-changing requests so far: dispatches, staging
/// requests, comments created or edited.
fn acts(w: &World) -> (usize, usize, Vec<(u64, String)>) {
    let comments = w
        .sandbox
        .comments(OWNER, REPO, 1)
        .into_iter()
        .filter(|c| c.by_app)
        .map(|c| (c.id, format!("{} {}", c.updated_at, c.body)))
        .collect();
    (
        w.sandbox.workflow_dispatches().len(),
        w.sandbox.repository_dispatches().len(),
        comments,
    )
}

async fn upgrade_keeps_everything(old: TestDb) -> TestDb {
    // The scenario, run by the bot on a scratch database.
    let mut w = dispatch_world(DISPATCH_ONLY, "https://gate.example.com").await;
    add_results_repo(&w.sandbox);
    let pr = w.open_fork_pr(
        "vendor",
        "retune",
        &[changelog_append("Retune TP8")],
        "vendor-dev",
    );
    assert_eq!(pr.number, 1);
    let s = w.sandbox.clone();
    for (user, permission, role) in [
        ("maint", "write", "maintain"),
        ("nvpohanh", "write", "write"),
    ] {
        s.set_permission(OWNER, REPO, user, permission, role)
            .unwrap();
    }
    w.deliver().await;
    let bound = pr.head_sha().unwrap();
    pr.add_label(LABEL, "maint").unwrap();
    w.deliver().await;
    let run = s.workflow_dispatches()[0].run_id;
    w.complete_run_with_results(run, "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c4");
    w.deliver().await;
    pr.post_comment("nvpohanh", "COLLABORATOR", &format!("/use {run}"))
        .unwrap();
    w.deliver().await;
    w.take_comments(pr.number);
    let before = acts(&w);
    assert_eq!(
        (before.0, before.1),
        (1, 1),
        "one sweep dispatched, one staging sent"
    );

    // The previous release's database: 0001–0005, its kv rows, and jobs
    // in flight.
    let scratch_url = w.db.url.clone();
    let scratch_state = typed_state(&scratch_url).await;
    let scratch_bodies = bodies(&w.db.store).await;
    previous_schema(&old).await;
    let script = as_previous_release(&scratch_url).await;
    let deliveries: Vec<(String, String)> = {
        let mut d = Vec::new();
        for row in w.db.store.recent_deliveries(1000).await.unwrap() {
            if row.outcome == "queued" {
                let jobs = w
                    .db
                    .store
                    .jobs_for_delivery(&sweepgate_core::ids::DeliveryId(row.delivery_id.clone()))
                    .await
                    .unwrap();
                d.push((row.delivery_id, jobs[0].kind.clone()));
            }
        }
        d.sort();
        d
    };
    assert!(
        deliveries
            .iter()
            .any(|(_, k)| k == "workflow_run.completed")
    );
    assert!(deliveries.iter().any(|(_, k)| k == "pull_request.labeled"));
    assert!(deliveries.iter().any(|(_, k)| k == "issue_comment.created"));
    execute(&old.url, &script).await;
    execute(&old.url, &in_flight(&deliveries, pr.number, now_ms())).await;

    // Upgrade: the release's own migration run.
    old.store.migrate().await.unwrap();
    assert!(old.store.ready().await.unwrap());
    assert_eq!(
        typed_state(&old.url).await,
        scratch_state,
        "{}: the upgrade kept every kv row",
        old.name
    );
    assert_eq!(
        bodies(&old.store).await,
        scratch_bodies,
        "{}: every delivery body reads back",
        old.name
    );
    assert!(
        !typed_state(&old.url).await[SWEEP_JOBS].is_empty(),
        "the run's jobs were recorded"
    );
    constrained_after_0008(&old.url).await;

    // The upgraded bot on the same GitHub runs what was in flight.
    let scratch = std::mem::replace(&mut w.db, old);
    scratch.cleanup().await;
    w.app = router(AppState::new(
        w.db.store.clone(),
        vec![Secret::new(w.sandbox.webhook_secret())],
        Arc::new(Notify::new()),
    ));
    let ran = w.drain().await;
    assert_eq!(ran, deliveries.len() + 1, "every job in flight ran");
    let outcomes: Vec<String> =
        w.db.store
            .jobs(None, 1000)
            .await
            .unwrap()
            .into_iter()
            .filter(|j| j.kind == "pull_request.closed")
            .filter_map(|j| j.outcome)
            .collect();
    assert_eq!(outcomes, ["no handler for `pull_request.closed`"]);
    w.deliver().await;
    let after = acts(&w);
    assert_eq!(
        (after.0, after.1),
        (before.0, before.1),
        "{}: dispatched or staged twice",
        w.db.name
    );
    let ids = |a: &[(u64, String)]| a.iter().map(|c| c.0).collect::<Vec<_>>();
    assert_eq!(
        ids(&after.2),
        ids(&before.2),
        "{}: no new comment",
        w.db.name
    );
    // The one edit a re-run makes (as it would without an upgrade): the
    // gate's comment now says the sweep it found was dispatched.
    let changed: Vec<&(u64, String)> = after.2.iter().filter(|c| !before.2.contains(c)).collect();
    assert!(
        changed
            .iter()
            .all(|(_, body)| body.contains("<!-- sweepgate:sweep-gate -->")
                && body.contains(&format!("was dispatched as run {run}."))),
        "{}: commented again: {changed:#?}",
        w.db.name
    );
    let edited = changed.len();
    assert_eq!(w.take_comments(pr.number).len(), edited);
    let repo = RepoName::new(OWNER, REPO);
    assert_eq!(
        w.db.store
            .fork_binding(&repo, PrNumber(pr.number))
            .await
            .unwrap(),
        Some(bound.clone())
    );

    // The binding holds: the fork's next push does not inherit the label.
    let second = pr
        .push(&[changelog_append("Retune TP8 again")], "retune again")
        .unwrap();
    w.deliver().await;
    let summary = w
        .sandbox
        .requests_matching("POST", &format!("/repos/{OWNER}/{REPO}/check-runs"))
        .into_iter()
        .filter_map(|r| r.body)
        .filter(|b| b["name"] == "sweepgate / sweep-gate" && b["head_sha"] == second.as_str())
        .map(|b| b["output"]["summary"].as_str().unwrap_or("").to_owned())
        .next_back()
        .unwrap();
    assert!(
        summary.contains(&format!(
            "on a fork PR the `{LABEL}` label allows a sweep of the commit it was applied on ({});",
            &bound[..8]
        )),
        "{summary}"
    );
    assert_eq!(s.workflow_dispatches().len(), 1);
    // A job queued by this release carries its event.
    let pushed = w.db.store.jobs(None, 1000).await.unwrap();
    let pushed = pushed
        .iter()
        .find(|j| j.kind == "pull_request.synchronize")
        .unwrap();
    assert_eq!(
        pushed.payload,
        r#"{"type":"delivery","event":"pull_request","action":"synchronize"}"#
    );
    w.take_comments(pr.number);
    let World { db, .. } = w;
    db
}

#[tokio::test]
async fn an_upgraded_sqlite_database_acts_on_nothing_twice() {
    let db = upgrade_keeps_everything(TestDb::sqlite_unmigrated().await).await;
    db.cleanup().await;
}

#[tokio::test]
async fn an_upgraded_postgres_database_acts_on_nothing_twice() {
    let Some(db) = TestDb::postgres_unmigrated().await else {
        return;
    };
    let db = upgrade_keeps_everything(db).await;
    db.cleanup().await;
}

/// Inserts of a value the code never writes, one per constrained column.
const OUT_OF_RANGE: &[&str] = &[
    "INSERT INTO deliveries (delivery_id, event, outcome, body, received_at) VALUES ('x-bad', 'ping', 'dropped', '{}', 1)",
    "INSERT INTO sweep_jobs (sweep_id, name, attempt, status, updated_at) VALUES ('s-bad', 'j', 1, 'waiting', 1)",
    "INSERT INTO jobs (kind, payload, state, max_attempts, run_after, created_at, updated_at) VALUES ('k', '{}', 'paused', 1, 1, 1, 1)",
    "INSERT INTO sweeps (sweep_id, repository, pr_number, head_sha, base_sha, primary_label, modifiers, matrix, token_sha256, expires_at, state, created_at, updated_at) VALUES ('s-bad', 'o/r', 1, 'a', 'b', 'l', '', '[]', 't', 1, 'lost', 1, 1)",
];

/// After 0008: every state column refuses a value the code never writes;
/// on SQLite the rebuilt tables kept their indexes and foreign keys hold.
async fn constrained_after_0008(url: &str) {
    for sql in OUT_OF_RANGE {
        let q = sqlx::AssertSqlSafe(sql.to_string());
        let err = with_pool!(url, |pool| sqlx::query(q).execute(&pool).await.unwrap_err());
        assert!(
            err.to_string().to_lowercase().contains("check"),
            "{sql}: {err}"
        );
    }
    let index_sql = if url.starts_with("sqlite:") {
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('deliveries_received', 'deliveries_pr') ORDER BY name"
    } else {
        "SELECT indexname::TEXT FROM pg_indexes WHERE indexname IN ('deliveries_received', 'deliveries_pr') ORDER BY indexname"
    };
    let q = sqlx::AssertSqlSafe(index_sql.to_owned());
    let indexes: Vec<String> = with_pool!(url, |pool| sqlx::query_scalar(q)
        .fetch_all(&pool)
        .await
        .unwrap());
    assert_eq!(indexes, ["deliveries_pr", "deliveries_received"]);
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        let broken = rows(&pool, "PRAGMA foreign_key_check").await;
        assert!(
            broken.is_empty(),
            "{} rows break a foreign key",
            broken.len()
        );
        // `jobs` still references the rebuilt `deliveries`.
        let fk: Vec<String> =
            sqlx::query_scalar("SELECT \"table\" FROM pragma_foreign_key_list('jobs')")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(fk, ["deliveries"]);
        pool.close().await;
    }
}

/// 0008 on a database 0007 wrote: rows whose state the code could not
/// have written are mapped as the code reads them, nothing else changes,
/// and a job keeps its delivery.
async fn check_constraints_added_by_0008(db: TestDb) {
    schema_before(&db, "0008", 7).await;
    execute(
        &db.url,
        "INSERT INTO deliveries (delivery_id, event, outcome, reason, body, received_at) VALUES \
         ('d1', 'pull_request', 'queued', NULL, '{}', 1), \
         ('d2', 'ping', 'ignored', 'no handler', '{}', 2), \
         ('d3', 'ping', 'dropped', NULL, '{}', 3);\n\
         INSERT INTO jobs (delivery_id, kind, payload, state, max_attempts, run_after, created_at, updated_at) \
         VALUES ('d1', 'pull_request.opened', '{}', 'pending', 8, 1, 1, 1);\n\
         INSERT INTO sweep_jobs (sweep_id, name, attempt, status, conclusion, updated_at) VALUES \
         ('s1', 'a', 1, 'queued', NULL, 1), ('s1', 'b', 2, 'in_progress', NULL, 1), \
         ('s1', 'c', 1, 'completed', 'success', 1), ('s1', 'd', 1, 'waiting', NULL, 1);\n",
    )
    .await;
    db.store.migrate().await.unwrap();
    let state = typed_state(&db.url).await;
    assert_eq!(
        state[DELIVERIES],
        [
            "d1 pull_request queued -",
            "d2 ping ignored no handler",
            "d3 ping ignored -"
        ]
    );
    // The rebuilt rows keep their bodies.
    let bodies = bodies(&db.store).await;
    let ids: Vec<&str> = bodies.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["d1", "d2", "d3"]);
    assert!(bodies.iter().all(|(_, b)| b == "{}"), "{bodies:?}");
    assert_eq!(
        state[SWEEP_JOBS],
        [
            "s1 a 1 queued -",
            "s1 b 2 in_progress -",
            "s1 c 1 completed success",
            "s1 d 1 queued -"
        ]
    );
    let jobs = db
        .store
        .jobs_for_delivery(&sweepgate_core::ids::DeliveryId("d1".into()))
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1);
    constrained_after_0008(&db.url).await;
    db.cleanup().await;
}

/// The values of every `CHECK (column IN (…))` in a migration, in order.
fn check_values(sql: &str, column: &str) -> Vec<Vec<String>> {
    let open = format!("CHECK ({column} IN (");
    sql.match_indices(&open)
        .map(|(i, _)| {
            let rest = &sql[i + open.len()..];
            rest[..rest.find(')').unwrap()]
                .split(',')
                .map(|v| v.trim().trim_matches('\'').to_owned())
                .collect()
        })
        .collect()
}

/// The constraints list exactly the values the store writes.
#[test]
fn check_constraints_match_the_stored_enums() {
    use sweepgate::store::{DeliveryOutcome, JobState, SWEEP_JOB_STATUSES, SweepState};
    let read = |backend: &str, file: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("migrations")
                .join(backend)
                .join(file),
        )
        .unwrap()
    };
    let outcomes = vec![
        DeliveryOutcome::Queued.as_str().to_owned(),
        DeliveryOutcome::Ignored(String::new()).as_str().to_owned(),
    ];
    let sweeps: Vec<String> = SweepState::ALL.iter().map(|s| s.as_str().into()).collect();
    let jobs: Vec<String> = JobState::ALL.iter().map(|s| s.as_str().into()).collect();
    for backend in ["sqlite", "postgres"] {
        let m8 = read(backend, "0008_state_checks.sql");
        assert_eq!(
            check_values(&m8, "outcome"),
            std::slice::from_ref(&outcomes),
            "{backend}"
        );
        assert_eq!(
            check_values(&m8, "status"),
            [SWEEP_JOB_STATUSES],
            "{backend}"
        );
        let m6 = read(backend, "0006_typed_state.sql");
        assert_eq!(
            check_values(&m6, "state"),
            [sweeps.clone(), jobs.clone()],
            "{backend}"
        );
    }
}

#[tokio::test]
async fn migration_0008_constrains_states_on_sqlite() {
    check_constraints_added_by_0008(TestDb::sqlite_unmigrated().await).await;
}

#[tokio::test]
async fn migration_0008_constrains_states_on_postgres() {
    let Some(db) = TestDb::postgres_unmigrated().await else {
        return;
    };
    check_constraints_added_by_0008(db).await;
}

/// What an operator sees: the dashboard answers on the upgraded store.
#[tokio::test]
async fn the_upgraded_store_serves_the_dashboard() {
    let db = TestDb::sqlite_unmigrated().await;
    previous_schema(&db).await;
    execute(&db.url, &kv("dashboard", "link-key", &"ab".repeat(32), 1)).await;
    db.store.migrate().await.unwrap();
    let app = sweepgate::dashboard::router(sweepgate::dashboard::DashState::new(
        db.store.clone(),
        Some(Secret::new("t")),
        None,
        Arc::new(Notify::new()),
    ));
    let resp = app
        .oneshot(
            Request::get("/")
                .header("authorization", "Bearer t")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        db.store
            .signing_key("dashboard-link", "ff", 2)
            .await
            .unwrap(),
        "ab".repeat(32),
        "the link key survives, so links already sent keep working"
    );
    db.cleanup().await;
}
