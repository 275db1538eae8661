//! Check runs (`filter=latest` vs `all`), statuses, workflow dispatch with
//! `return_run_details`, runs, jobs, artifacts and repository dispatch in
//! the sandbox GitHub, over real HTTP.
use serde_json::{Value, json};
use std::io::Read;
use sweepgate_sandbox::{Change, PullRequestSpec, RunSpec, Sandbox};

const OWNER: &str = "SemiAnalysisAI";
const REPO: &str = "InferenceX";

struct W {
    sb: Sandbox,
    base: String,
    http: reqwest::Client,
    token: String,
}

async fn world() -> W {
    let (sb, base) = Sandbox::start().await.unwrap();
    sb.add_org(OWNER);
    sb.add_repo(OWNER, REPO, "main", [("README.md", "r\n")])
        .unwrap();
    sb.add_repo(OWNER, "InferenceX-app", "main", [("README.md", "app\n")])
        .unwrap();
    let inst = sb.install_app(OWNER);
    let token = sb.issue_token(inst).unwrap();
    W {
        sb,
        base,
        http: reqwest::Client::new(),
        token,
    }
}

impl W {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> reqwest::Response {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("authorization", format!("token {}", self.token));
        if let Some(b) = body {
            req = req.json(&b);
        }
        req.send().await.unwrap()
    }
    async fn get_json(&self, path: &str) -> Value {
        let resp = self.call(reqwest::Method::GET, path, None).await;
        assert_eq!(resp.status(), 200, "GET {path}");
        resp.json().await.unwrap()
    }
}

#[tokio::test]
async fn check_runs_filter_latest_keeps_the_newest_per_name() {
    let w = world().await;
    let sha = w.sb.branch_sha(OWNER, REPO, "main").unwrap();
    // Actions jobs: "gb300 canary" failed in attempt 1, passed in attempt 2.
    w.sb.add_check_run(OWNER, REPO, &sha, "gb300 canary", Some("failure"))
        .unwrap();
    w.sb.add_check_run(OWNER, REPO, &sha, "eval", Some("success"))
        .unwrap();
    w.sb.add_check_run(OWNER, REPO, &sha, "gb300 canary", Some("success"))
        .unwrap();

    let latest = w
        .get_json(&format!("/repos/{OWNER}/{REPO}/commits/{sha}/check-runs"))
        .await;
    assert_eq!(latest["total_count"], 2);
    let canary: Vec<&Value> = latest["check_runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "gb300 canary")
        .collect();
    assert_eq!(canary.len(), 1);
    assert_eq!(canary[0]["conclusion"], "success");
    assert_eq!(canary[0]["app"]["slug"], "github-actions");

    let all = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/commits/{sha}/check-runs?filter=all"
        ))
        .await;
    assert_eq!(all["total_count"], 3);
    let named = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/commits/main/check-runs?filter=all&check_name=eval"
        ))
        .await;
    assert_eq!(named["total_count"], 1);
    let bad = w
        .call(
            reqwest::Method::GET,
            &format!("/repos/{OWNER}/{REPO}/commits/{sha}/check-runs?filter=newest"),
            None,
        )
        .await;
    assert_eq!(bad.status(), 422);
}

#[tokio::test]
async fn check_run_create_update_with_annotations_and_statuses() {
    let w = world().await;
    let sha =
        w.sb.commit(OWNER, REPO, "f", &[Change::write("a.yaml", "a: 1\n")], "a")
            .unwrap();
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/check-runs"),
            Some(
                json!({ "name": "sweepgate / verdict", "head_sha": sha, "status": "in_progress" }),
            ),
        )
        .await;
    assert_eq!(resp.status(), 201);
    let created: Value = resp.json().await.unwrap();
    assert_eq!(created["status"], "in_progress");
    assert_eq!(created["app"]["id"], w.sb.app_id());
    let id = created["id"].as_u64().unwrap();

    let update = json!({
        "conclusion": "failure",
        "output": {
            "title": "REJECTED",
            "summary": "2 blocking checks",
            "annotations": [
                { "path": "a.yaml", "start_line": 1, "end_line": 1, "annotation_level": "failure", "message": "Check 12: not append-only" }
            ]
        }
    });
    let resp = w
        .call(
            reqwest::Method::PATCH,
            &format!("/repos/{OWNER}/{REPO}/check-runs/{id}"),
            Some(update),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(
        (v["status"].as_str(), v["conclusion"].as_str()),
        (Some("completed"), Some("failure"))
    );
    assert_eq!(v["output"]["annotations_count"], 1);
    assert!(v["completed_at"].is_string());
    let anns: Vec<Value> = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/check-runs/{id}/annotations"
        ))
        .await
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(anns[0]["message"], "Check 12: not append-only");
    let view = w.sb.check_runs(OWNER, REPO, &sha);
    assert_eq!(view[0].title.as_deref(), Some("REJECTED"));

    // GitHub-shaped validation errors.
    let resp = w
        .call(
            reqwest::Method::PATCH,
            &format!("/repos/{OWNER}/{REPO}/check-runs/{id}"),
            Some(json!({ "conclusion": "great" })),
        )
        .await;
    assert_eq!(resp.status(), 422);
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/check-runs"),
            Some(json!({ "name": "x", "head_sha": "0".repeat(40) })),
        )
        .await;
    assert_eq!(resp.status(), 422);
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/check-runs"),
            Some(json!({ "name": "x", "head_sha": sha, "output": { "title": "t", "summary": "s", "annotations": [{ "path": "a" }] } })),
        )
        .await;
    assert_eq!(resp.status(), 422);

    for state in ["pending", "failure"] {
        let resp = w
            .call(
                reqwest::Method::POST,
                &format!("/repos/{OWNER}/{REPO}/statuses/{sha}"),
                Some(json!({ "state": state, "context": "codeowner-signoff-verify", "description": "Sign-off verification rejected - see verdict comment", "target_url": "https://github.com/x" })),
            )
            .await;
        assert_eq!(resp.status(), 201);
    }
    let list = w
        .get_json(&format!("/repos/{OWNER}/{REPO}/commits/{sha}/statuses"))
        .await;
    assert_eq!(list[0]["state"], "failure", "newest first");
    let combined = w
        .get_json(&format!("/repos/{OWNER}/{REPO}/commits/{sha}/status"))
        .await;
    assert_eq!(combined["state"], "failure");
    assert_eq!(combined["total_count"], 1);
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/statuses/{sha}"),
            Some(json!({ "state": "great" })),
        )
        .await;
    assert_eq!(resp.status(), 422);
    assert_eq!(w.sb.statuses(OWNER, REPO, &sha).len(), 2);
}

#[tokio::test]
async fn workflow_dispatch_returns_run_details_only_when_asked() {
    let w = world().await;
    w.sb.add_workflow(OWNER, REPO, "run-sweep.yml", "Run Sweep")
        .unwrap();
    w.sb.configure_workflow(
        OWNER,
        REPO,
        "run-sweep.yml",
        Some("sweep ${{ inputs.sweep-id }}"),
        true,
    )
    .unwrap();
    let body = json!({ "ref": "main", "inputs": { "sweep-id": "sw-1", "pr-number": "7" }, "return_run_details": true });
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/actions/workflows/run-sweep.yml/dispatches"),
            Some(body),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let details: Value = resp.json().await.unwrap();
    let run_id = details["workflow_run_id"].as_u64().unwrap();
    assert!(
        details["run_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/actions/runs/{run_id}"))
    );
    assert!(
        details["html_url"]
            .as_str()
            .unwrap()
            .starts_with("https://github.com/")
    );

    let run = w
        .get_json(&format!("/repos/{OWNER}/{REPO}/actions/runs/{run_id}"))
        .await;
    assert_eq!(run["display_title"], "sweep sw-1");
    assert_eq!(run["event"], "workflow_dispatch");
    assert_eq!(run["status"], "queued");
    assert_eq!(run["actor"]["login"], "sweepgate[bot]");

    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/actions/workflows/run-sweep.yml/dispatches"),
            Some(json!({ "ref": "main", "inputs": { "sweep-id": "sw-2" } })),
        )
        .await;
    assert_eq!(resp.status(), 204);
    assert!(resp.bytes().await.unwrap().is_empty());
    let dispatches = w.sb.workflow_dispatches();
    assert_eq!(dispatches.len(), 2);
    assert_eq!(dispatches[1].inputs["sweep-id"], "sw-2");

    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/actions/workflows/run-sweep.yml/dispatches"),
            Some(json!({ "ref": "nope" })),
        )
        .await;
    assert_eq!(resp.status(), 422);
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/actions/workflows/missing.yml/dispatches"),
            Some(json!({ "ref": "main" })),
        )
        .await;
    assert_eq!(resp.status(), 404);
    w.sb.configure_workflow(OWNER, REPO, "run-sweep.yml", None, false)
        .unwrap();
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/actions/workflows/run-sweep.yml/dispatches"),
            Some(json!({ "ref": "main" })),
        )
        .await;
    assert_eq!(resp.status(), 422);
}

#[tokio::test]
async fn runs_filter_cancel_rerun_jobs_and_artifacts() {
    let w = world().await;
    let head =
        w.sb.commit(OWNER, REPO, "pr", &[Change::write("x", "x\n")], "x")
            .unwrap();
    let pr =
        w.sb.open_pr(PullRequestSpec::new(OWNER, REPO, "pr", "alice"))
            .unwrap();
    let created = chrono::DateTime::parse_from_rfc3339("2026-10-14T03:00:00Z")
        .unwrap()
        .to_utc();
    let run =
        w.sb.add_workflow_run(
            RunSpec::new(OWNER, REPO, "run-sweep.yml", &head)
                .id(38614048439)
                .created_at(created),
        )
        .unwrap();
    assert_eq!(run, 38614048439);
    let other =
        w.sb.add_workflow_run(
            RunSpec::new(OWNER, REPO, "lint.yml", "main")
                .event("push")
                .completed("success"),
        )
        .unwrap();

    let listed = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/actions/runs?head_sha={head}"
        ))
        .await;
    assert_eq!(listed["total_count"], 1);
    assert_eq!(
        listed["workflow_runs"][0]["pull_requests"][0]["number"],
        pr.number
    );
    let by_wf = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/actions/workflows/run-sweep.yml/runs?event=pull_request"
        ))
        .await;
    assert_eq!(by_wf["total_count"], 1);
    // The pinned run was created at 03:00; the push run later that day.
    let dated = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/actions/runs?created=2026-10-14"
        ))
        .await;
    assert_eq!(dated["total_count"], 2);
    let early = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/actions/runs?created=2026-10-14T00:00:00Z..2026-10-14T05:00:00Z"
        ))
        .await;
    assert_eq!(early["total_count"], 1);
    assert_eq!(early["workflow_runs"][0]["id"], run);
    let none = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/actions/runs?created=>=2026-10-15"
        ))
        .await;
    assert_eq!(none["total_count"], 0);
    let success = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/actions/runs?status=success"
        ))
        .await;
    assert_eq!(success["workflow_runs"][0]["id"], other);

    // Jobs: one fails; cancel is refused once completed; re-run failed jobs.
    w.sb.start_run(run).unwrap();
    let ok_job =
        w.sb.add_job(run, "single-node 8k1k", Some("success"))
            .unwrap();
    let bad_job = w.sb.add_job(run, "canary", Some("failure")).unwrap();
    w.sb.complete_run(run, "failure").unwrap();
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/actions/runs/{run}/cancel"),
            None,
        )
        .await;
    assert_eq!(resp.status(), 409);
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/actions/runs/{run}/rerun-failed-jobs"),
            None,
        )
        .await;
    assert_eq!(resp.status(), 201);
    let again = w
        .get_json(&format!("/repos/{OWNER}/{REPO}/actions/runs/{run}"))
        .await;
    assert_eq!(
        (again["run_attempt"].as_u64(), again["status"].as_str()),
        (Some(2), Some("queued"))
    );
    let jobs = w
        .get_json(&format!("/repos/{OWNER}/{REPO}/actions/runs/{run}/jobs"))
        .await;
    assert_eq!(
        jobs["total_count"], 2,
        "latest attempt: re-run canary + carried-over job"
    );
    let all_jobs = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/actions/runs/{run}/jobs?filter=all"
        ))
        .await;
    assert_eq!(all_jobs["total_count"], 4);
    let first_attempt = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/actions/runs/{run}/attempts/1"
        ))
        .await;
    assert_eq!(first_attempt["conclusion"], "failure");
    let _ = (ok_job, bad_job);

    // Cancel the running second attempt.
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/{REPO}/actions/runs/{run}/cancel"),
            None,
        )
        .await;
    assert_eq!(resp.status(), 202);
    assert_eq!(
        w.sb.run_state(run),
        Some(("completed".into(), Some("cancelled".into())))
    );

    // Artifacts: list, download through the 302, expire.
    let art =
        w.sb.add_artifact(
            run,
            "results_bmk",
            [("agg_bmk.json", br#"[{"tput": 1.5}]"#.to_vec())],
        )
        .unwrap();
    let list = w
        .get_json(&format!(
            "/repos/{OWNER}/{REPO}/actions/runs/{run}/artifacts"
        ))
        .await;
    assert_eq!(list["total_count"], 1);
    assert_eq!(list["artifacts"][0]["name"], "results_bmk");
    assert_eq!(list["artifacts"][0]["expired"], false);
    let url = list["artifacts"][0]["archive_download_url"]
        .as_str()
        .unwrap()
        .to_string();
    let resp = w
        .http
        .get(&url)
        .header("authorization", format!("token {}", w.token))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let zip_bytes = resp.bytes().await.unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes.to_vec())).unwrap();
    let mut content = String::new();
    archive
        .by_name("agg_bmk.json")
        .unwrap()
        .read_to_string(&mut content)
        .unwrap();
    assert_eq!(content, r#"[{"tput": 1.5}]"#);
    let no_redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = no_redirect
        .get(&url)
        .header("authorization", format!("token {}", w.token))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 302);
    w.sb.expire_artifact(art).unwrap();
    let resp = w
        .call(
            reqwest::Method::GET,
            &format!("/repos/{OWNER}/{REPO}/actions/artifacts/{art}/zip"),
            None,
        )
        .await;
    assert_eq!(resp.status(), 410);
}

#[tokio::test]
async fn repository_dispatch_is_recorded_and_validated() {
    let w = world().await;
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/InferenceX-app/dispatches"),
            Some(json!({ "event_type": "stage-results", "client_payload": { "run_id": 38614048439u64, "attempt": 1 } })),
        )
        .await;
    assert_eq!(resp.status(), 204);
    let d = w.sb.repository_dispatches();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].event_type, "stage-results");
    assert_eq!(d[0].client_payload["run_id"], 38614048439u64);
    let resp = w
        .call(
            reqwest::Method::POST,
            &format!("/repos/{OWNER}/InferenceX-app/dispatches"),
            Some(json!({ "client_payload": {} })),
        )
        .await;
    assert_eq!(resp.status(), 422);
    let deliveries = w.sb.take_deliveries();
    let rd = deliveries
        .iter()
        .find(|d| d.event == "repository_dispatch")
        .unwrap();
    assert_eq!(rd.payload["action"], "stage-results");
    assert_eq!(rd.payload["client_payload"]["attempt"], 1);
    assert_eq!(rd.payload["repository"]["name"], "InferenceX-app");
}
