//! Fault injection and request recording in the sandbox GitHub.
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use sweepgate_sandbox::{Change, Fault, PullRequestSpec, Sandbox};

const OWNER: &str = "SemiAnalysisAI";
const REPO: &str = "InferenceX";

async fn world() -> (Sandbox, String, String, u64) {
    let (sb, base) = Sandbox::start().await.unwrap();
    sb.add_repo(OWNER, REPO, "main", [("README.md", "r\n")])
        .unwrap();
    let inst = sb.install_app(OWNER);
    let token = sb.issue_token(inst).unwrap();
    sb.commit(OWNER, REPO, "f", &[Change::write("a", "a\n")], "a")
        .unwrap();
    let pr = sb
        .open_pr(PullRequestSpec::new(OWNER, REPO, "f", "alice"))
        .unwrap();
    (sb, base, token, pr.number)
}

async fn get(base: &str, token: &str, path: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(format!("{base}{path}"))
        .header("authorization", format!("token {token}"))
        .send()
        .await
        .unwrap()
}

async fn post_comment(base: &str, token: &str, n: u64, body: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{base}/repos/{OWNER}/{REPO}/issues/{n}/comments"))
        .header("authorization", format!("token {token}"))
        .json(&json!({ "body": body }))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn secondary_rate_limit_has_retry_after_and_github_body() {
    let (sb, base, token, _) = world().await;
    sb.inject(Fault::secondary_rate_limit(7).times(1));
    let resp = get(&base, &token, &format!("/repos/{OWNER}/{REPO}")).await;
    assert_eq!(resp.status(), 403);
    assert_eq!(resp.headers().get("retry-after").unwrap(), "7");
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("secondary rate limit")
    );
    assert!(
        body["documentation_url"]
            .as_str()
            .unwrap()
            .contains("secondary-rate-limits")
    );
    // Only once.
    assert_eq!(
        get(&base, &token, &format!("/repos/{OWNER}/{REPO}"))
            .await
            .status(),
        200
    );

    sb.inject(Fault::too_many_requests(3));
    let resp = get(&base, &token, "/rate_limit").await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers().get("retry-after").unwrap(), "3");

    sb.inject(Fault::primary_rate_limit(120));
    let resp = get(&base, &token, "/rate_limit").await;
    assert_eq!(resp.status(), 403);
    assert_eq!(resp.headers().get("x-ratelimit-remaining").unwrap(), "0");
    let reset: i64 = resp
        .headers()
        .get("x-ratelimit-reset")
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(reset > chrono::Utc::now().timestamp());
}

#[tokio::test]
async fn matching_faults_hit_only_their_route_and_leave_state_untouched() {
    let (sb, base, token, n) = world().await;
    sb.inject(
        Fault::status(502)
            .times(2)
            .on("POST", "/repos/*/*/issues/*/comments"),
    );
    assert_eq!(
        get(
            &base,
            &token,
            &format!("/repos/{OWNER}/{REPO}/issues/{n}/comments")
        )
        .await
        .status(),
        200
    );
    assert_eq!(post_comment(&base, &token, n, "one").await.status(), 502);
    assert_eq!(post_comment(&base, &token, n, "two").await.status(), 502);
    assert_eq!(post_comment(&base, &token, n, "three").await.status(), 201);
    let bodies: Vec<String> = sb
        .comments(OWNER, REPO, n)
        .into_iter()
        .map(|c| c.body)
        .collect();
    assert_eq!(bodies, ["three"], "a failed call changes nothing");
    assert_eq!(sb.faults_injected(), 2);

    let posts = sb.requests_matching(
        "POST",
        &format!("/repos/{OWNER}/{REPO}/issues/{n}/comments"),
    );
    let statuses: Vec<u16> = posts.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [502, 502, 201]);
    assert_eq!(posts[2].body.as_ref().unwrap()["body"], "three");
    assert!(posts[0].fault.is_some());
}

#[tokio::test]
async fn after_effect_faults_apply_the_change_but_lose_the_response() {
    let (sb, base, token, n) = world().await;
    sb.inject(
        Fault::status(502)
            .on("POST", "/repos/*/*/issues/*/comments")
            .after_effect(),
    );
    assert_eq!(post_comment(&base, &token, n, "posted").await.status(), 502);
    // The comment exists: a client that retries blindly would duplicate it.
    assert_eq!(sb.comments(OWNER, REPO, n).len(), 1);
}

#[tokio::test]
async fn delay_faults_answer_slowly() {
    let (sb, base, token, _) = world().await;
    sb.inject(Fault::delay(Duration::from_millis(300)).on("GET", "/rate_limit"));
    let t = Instant::now();
    assert_eq!(get(&base, &token, "/rate_limit").await.status(), 200);
    assert!(t.elapsed() >= Duration::from_millis(300));
    let t = Instant::now();
    assert_eq!(get(&base, &token, "/rate_limit").await.status(), 200);
    assert!(t.elapsed() < Duration::from_millis(300));
}

#[tokio::test]
async fn probability_faults_are_seeded_and_deterministic() {
    async fn pattern(seed: u64) -> Vec<u16> {
        let (sb, base, token, _) = world().await;
        sb.inject(Fault::status(500).probability(0.2, seed));
        let mut out = Vec::new();
        for _ in 0..60 {
            out.push(get(&base, &token, "/rate_limit").await.status().as_u16());
        }
        out
    }
    let a = pattern(42).await;
    assert_eq!(a, pattern(42).await);
    let failures = a.iter().filter(|s| **s == 500).count();
    assert!((3..=25).contains(&failures), "{failures} of 60 failed");
    assert!(a.iter().all(|s| *s == 200 || *s == 500));
    assert_ne!(a, pattern(43).await);
}

#[tokio::test]
async fn every_request_is_recorded_with_method_path_query_body_status() {
    let (sb, base, token, n) = world().await;
    sb.clear_requests();
    let _ = get(
        &base,
        &token,
        &format!("/repos/{OWNER}/{REPO}/pulls/{n}/files?per_page=100"),
    )
    .await;
    let _ = reqwest::Client::new()
        .get(format!("{base}/repos/{OWNER}/{REPO}"))
        .send()
        .await
        .unwrap();
    let all = sb.requests();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].method, "GET");
    assert_eq!(
        all[0].path,
        format!("/repos/{OWNER}/{REPO}/pulls/{n}/files")
    );
    assert_eq!(all[0].query.as_deref(), Some("per_page=100"));
    assert_eq!(all[0].status, 200);
    assert_eq!(
        all[0]
            .caller
            .as_deref()
            .map(|c| c.starts_with("installation:")),
        Some(true)
    );
    assert_eq!((all[1].status, all[1].auth.as_str()), (401, "none"));
}
