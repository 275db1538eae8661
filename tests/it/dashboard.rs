//! The dashboard's login, its queue page and its one action: pages need a
//! login with the admin token (or `--dashboard-public`); retrying a
//! dead-lettered job needs the token itself. On both back ends.
use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{TestDb, on_both};
use serde_json::json;
use std::sync::Arc;
use sweepgate::config::server::Secret;
use sweepgate::dashboard::{DashState, router};
use sweepgate::store::{AfterFailure, JobState, NewJob, now_ms};
use tokio::sync::Notify;
use tower::ServiceExt;

async fn call(app: &axum::Router, req: Request<Body>) -> (StatusCode, String, Option<String>) {
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let location = resp
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap(), location)
}

fn retry(id: i64, form: &str) -> Request<Body> {
    Request::post(format!("/queue/{id}/retry"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(form.to_owned()))
        .unwrap()
}

/// A job that exhausted its attempts.
async fn dead_job(db: &TestDb) -> i64 {
    let store = &db.store;
    let job = NewJob {
        kind: "issue_comment.created".into(),
        serial_key: Some("InferenceX/InferenceX#7".into()),
        payload: "{}".into(),
        max_attempts: 1,
        run_after: 0,
    };
    let id = store.enqueue(&job, now_ms()).await.unwrap();
    let c = store
        .claim("t", now_ms(), std::time::Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.job.id, id.0 as i64);
    store
        .fail(
            &c,
            now_ms(),
            "GitHub answered 404 on /repos/x",
            AfterFailure::Dead,
        )
        .await
        .unwrap();
    id.0 as i64
}

#[tokio::test]
async fn a_dead_job_is_retried_only_with_the_admin_token() {
    on_both(|db| async move {
        let id = dead_job(&db).await;
        let app = router(DashState::new(
            db.store.clone(),
            Some(Secret::new("s3cret")),
            Some("https://ops.example.com/sweepgate/"),
            Arc::new(Notify::new()),
        ));
        // Without a login, the page sends the browser to the login form.
        let (status, _, location) =
            call(&app, Request::get("/queue").body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert_eq!(
            location.as_deref(),
            Some("/sweepgate/login?next=%2Fsweepgate%2Fqueue")
        );
        let (status, _) = login(&app, "guess").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, cookie) = login(&app, "s3cret").await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let (status, html, _) = call(
            &app,
            Request::get("/queue")
                .header("cookie", &cookie)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            html.contains("dead-lettered <b class=\"dead\">1</b>"),
            "{html}"
        );
        assert!(html.contains("GitHub answered 404 on /repos/x"));
        assert!(html.contains(&format!(
            r#"<form class="inline" method="post" action="/sweepgate/queue/{id}/retry">"#
        )));

        let (status, body, _) = call(&app, retry(id, "")).await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::UNAUTHORIZED, "the admin token is required\n")
        );
        let (status, body, _) = call(&app, retry(id, "token=guess")).await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::FORBIDDEN, "wrong admin token\n")
        );
        let job = db
            .store
            .job(sweepgate_core::ids::JobId(id as u64))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            job.state(),
            Some(JobState::Dead),
            "a refused retry changes nothing"
        );

        let (status, _, location) = call(&app, retry(id, "token=s3cret")).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert_eq!(
            location.as_deref(),
            Some(format!("/sweepgate/queue?retried={id}").as_str())
        );
        let job = db
            .store
            .job(sweepgate_core::ids::JobId(id as u64))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(job.state(), Some(JobState::Pending));

        // The same again is a conflict: the job is no longer dead.
        let req = Request::post(format!("/queue/{id}/retry"))
            .header("authorization", "Bearer s3cret")
            .body(Body::empty())
            .unwrap();
        let (status, body, _) = call(&app, req).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");

        let (_, html, _) = call(
            &app,
            Request::get(format!("/queue?retried={id}"))
                .header("cookie", &cookie)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert!(html.contains(&format!("Job {id} is back in the queue.")));
        assert!(html.contains("pending <b class=\"pending\">1</b>"));
        db
    })
    .await;
}

/// Logs in with `token`; the status and the session cookie.
async fn login(app: &axum::Router, token: &str) -> (StatusCode, String) {
    let resp = app
        .clone()
        .oneshot(
            Request::post("/login")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Body::from(format!(
                    "token={token}&next=%2Fsweepgate%2Fqueue"
                )))
                .unwrap(),
        )
        .await
        .unwrap();
    let cookie = resp
        .headers()
        .get("set-cookie")
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .unwrap_or_default();
    (resp.status(), cookie)
}

#[tokio::test]
async fn without_an_admin_token_the_pages_are_refused_unless_public() {
    on_both(|db| async move {
        let id = dead_job(&db).await;
        let closed = router(DashState::new(
            db.store.clone(),
            None,
            None,
            Arc::new(Notify::new()),
        ));
        for path in ["/", "/queue", "/repos/InferenceX/InferenceX/pulls/99"] {
            let (status, body, _) =
                call(&closed, Request::get(path).body(Body::empty()).unwrap()).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{path}");
            assert!(body.contains("--dashboard-public"), "{body}");
        }
        // `--dashboard-public`: readable by anyone, and still read-only.
        let app = router(
            DashState::new(db.store.clone(), None, None, Arc::new(Notify::new())).public(true),
        );
        let (_, html, _) = call(&app, Request::get("/queue").body(Body::empty()).unwrap()).await;
        assert!(html.contains("read-only"));
        assert!(!html.contains("<form"));
        let (status, _, _) = call(&app, retry(id, "token=anything")).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, html, _) = call(&app, Request::get("/").body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("No deliveries yet."));
        let (status, body, _) = call(
            &app,
            Request::get("/repos/InferenceX/InferenceX/pulls/99")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(
            body,
            "sweepgate has no record of InferenceX/InferenceX#99\n"
        );
        db
    })
    .await;
}

/// A run's artifacts are written by whoever runs the workflow: a value
/// near `f64::MAX` once made the plot's tick loop spin forever and one GET
/// of the PR page exhaust the server. Now the page answers at once and
/// says what it left out.
#[tokio::test]
async fn an_absurd_artifact_value_does_not_hang_the_pr_page_or_its_plot() {
    let db = TestDb::sqlite().await;
    let point = |x: f64, y: f64| json!({ "x": x, "y": y, "label": "tp8 conc4" });
    let detail = json!({
        "verdict": {
            "head_sha": "a".repeat(40),
            "signer": "lead",
            "rows": [],
            "run": 7,
            "pareto": [{
                "label": "dsv4/1k1k/h200_vllm/fp8/run7",
                "percentile": "P90 E2EL",
                "points": [point(1.5e308, 100.0), point(2.0, 1.7e308), point(1.0, 50.0)],
                "frontier": [2, 0],
            }],
        },
        "comment_url": "",
    });
    db.store
        .record_activity(&sweepgate::store::NewActivity {
            repository: "o/r".into(),
            pr_number: 3,
            head_sha: Some("a".repeat(40)),
            kind: "verdict".into(),
            summary: "REJECTED".into(),
            detail: detail.to_string(),
            at: now_ms(),
        })
        .await
        .unwrap();
    let app =
        router(DashState::new(db.store.clone(), None, None, Arc::new(Notify::new())).public(true));
    for path in ["/repos/o/r/pulls/3", "/repos/o/r/pulls/3/pareto.svg"] {
        let (status, body, _) = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            call(&app, Request::get(path).body(Body::empty()).unwrap()),
        )
        .await
        .unwrap_or_else(|_| panic!("{path} hung"));
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(
            body.contains("2 points not plotted: not a number from 0 to 1e9"),
            "{path}: {body}"
        );
        assert!(body.len() < 100_000, "{path}: {} bytes", body.len());
    }
    db.cleanup().await;
}
