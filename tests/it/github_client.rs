//! The GitHub client against the sandbox over real HTTP: App auth and
//! installation tokens, pagination, and the retry policy with an injected
//! clock (the waits are recorded, not spent).
use crate::common;

use async_trait::async_trait;
use common::transcript::{OWNER, REPO, app_key_pem, fixture_files};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sweepgate::config::server::Secret;
use sweepgate::github::{Credentials, GitHub, GitHubConfig, RetryPolicy, Sleeper};
use sweepgate_core::ids::{InstallationId, PrNumber, RepoName};
use sweepgate_sandbox::{Change, Fault, PullRequestSpec, Sandbox, SandboxConfig};

#[derive(Default)]
struct Recorder(Mutex<Vec<Duration>>);

#[async_trait]
impl Sleeper for Recorder {
    async fn sleep(&self, d: Duration) {
        self.0.lock().unwrap().push(d);
    }
}

impl Recorder {
    fn waits(&self) -> Vec<Duration> {
        self.0.lock().unwrap().clone()
    }
}

async fn setup() -> (Sandbox, GitHub, Arc<Recorder>, u64, u64) {
    // Wall-clock time, so rate-limit reset epochs mean what they say.
    let (sandbox, base) = Sandbox::start_with(SandboxConfig {
        real_time: true,
        ..SandboxConfig::default()
    })
    .await
    .unwrap();
    sandbox.add_org(OWNER);
    sandbox
        .add_repo(OWNER, REPO, "main", fixture_files())
        .unwrap();
    let inst = sandbox.install_app(OWNER);
    sandbox.create_branch(OWNER, REPO, "b", "main").unwrap();
    sandbox
        .commit(OWNER, REPO, "b", &[Change::write("docs/x.md", "x")], "x")
        .unwrap();
    let pr = sandbox
        .open_pr(PullRequestSpec::new(OWNER, REPO, "b", "dev"))
        .unwrap();
    let rec = Arc::new(Recorder::default());
    let gh = GitHub::with_sleeper(
        GitHubConfig {
            api_url: base,
            credentials: Credentials::App {
                app_id: sandbox.app_id(),
                private_key_pem: Secret::new(app_key_pem()),
            },
            policy: RetryPolicy::default(),
        },
        rec.clone(),
    )
    .unwrap();
    (sandbox, gh, rec, inst, pr.number)
}

fn repo() -> RepoName {
    RepoName::new(OWNER, REPO)
}

#[tokio::test]
async fn a_secondary_rate_limit_is_retried_after_its_retry_after() {
    let (sandbox, gh, rec, inst, pr) = setup().await;
    let api = gh.installation(InstallationId(inst)).unwrap();
    sandbox.inject(Fault::secondary_rate_limit(7).path("/repos/*/*/issues/*/comments"));
    let comments = api.issue_comments(&repo(), PrNumber(pr)).await.unwrap();
    assert!(comments.is_empty());
    assert_eq!(rec.waits(), vec![Duration::from_secs(7)]);
    assert_eq!(sandbox.faults_injected(), 1);
}

#[tokio::test]
async fn server_errors_back_off_exponentially_then_give_up() {
    let (sandbox, gh, rec, inst, pr) = setup().await;
    let api = gh.installation(InstallationId(inst)).unwrap();
    sandbox.inject(Fault::status(502).times(2).path("/repos/**"));
    api.issue_comments(&repo(), PrNumber(pr)).await.unwrap();
    let base = RetryPolicy::default().base;
    assert_eq!(rec.waits(), vec![base, base * 2]);

    sandbox.inject(Fault::status(500).always().path("/repos/**"));
    let err = api.issue_comments(&repo(), PrNumber(pr)).await.unwrap_err();
    assert_eq!(err.status(), Some(500));
    assert!(err.is_transient(), "the queue retries it later");
    assert_eq!(rec.waits().len(), 2 + 3, "four attempts, three waits");
    sandbox.clear_faults();
}

#[tokio::test]
async fn a_primary_limit_waits_for_the_reset_and_a_long_wait_goes_to_the_queue() {
    let (sandbox, gh, rec, inst, pr) = setup().await;
    let api = gh.installation(InstallationId(inst)).unwrap();
    sandbox.inject(Fault::primary_rate_limit(20).path("/repos/**"));
    api.issue_comments(&repo(), PrNumber(pr)).await.unwrap();
    let w = rec.waits();
    assert_eq!(w.len(), 1);
    assert!(
        w[0] >= Duration::from_secs(18) && w[0] <= Duration::from_secs(21),
        "{w:?}"
    );

    sandbox.inject(Fault::secondary_rate_limit(3600).path("/repos/**"));
    let err = api.issue_comments(&repo(), PrNumber(pr)).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert!(err.is_transient());
    assert_eq!(rec.waits().len(), 1, "an hour is not spent in a worker");
}

#[tokio::test]
async fn installation_tokens_are_cached_and_refreshed() {
    let (sandbox, gh, _rec, inst, pr) = setup().await;
    let api = gh.installation(InstallationId(inst)).unwrap();
    for _ in 0..3 {
        api.issue_comments(&repo(), PrNumber(pr)).await.unwrap();
    }
    let token_path = format!("/app/installations/{inst}/access_tokens");
    assert_eq!(sandbox.requests_matching("POST", &token_path).len(), 1);
    // GitHub revokes it: the 401 makes the client fetch a new one.
    sandbox.expire_tokens();
    api.issue_comments(&repo(), PrNumber(pr)).await.unwrap();
    assert_eq!(sandbox.requests_matching("POST", &token_path).len(), 2);
    // Calls as an installation carry a token, never the App's JWT.
    let calls = sandbox.requests_matching("GET", "/repos/");
    assert!(calls.iter().all(|r| r.auth == "token"), "{calls:?}");
}

#[tokio::test]
async fn every_page_is_read() {
    let (sandbox, gh, _rec, inst, pr) = setup().await;
    for i in 0..250 {
        sandbox
            .post_comment(OWNER, REPO, pr, "r", "MEMBER", &format!("c{i}"))
            .unwrap();
    }
    let api = gh.installation(InstallationId(inst)).unwrap();
    let comments = api.issue_comments(&repo(), PrNumber(pr)).await.unwrap();
    assert_eq!(comments.len(), 250);
    assert_eq!(comments[249].body(), "c249");
    let pages = sandbox.requests_matching(
        "GET",
        &format!("/repos/{OWNER}/{REPO}/issues/{pr}/comments"),
    );
    assert_eq!(pages.len(), 3);
}

#[tokio::test]
async fn file_contents_at_a_ref_and_missing_files() {
    let (_sandbox, gh, _rec, inst, _pr) = setup().await;
    let api = gh.installation(InstallationId(inst)).unwrap();
    let owners = api
        .file_at(&repo(), ".github/CODEOWNERS", "main")
        .await
        .unwrap()
        .unwrap();
    assert!(
        String::from_utf8(owners)
            .unwrap()
            .starts_with("* @InferenceX/core")
    );
    assert!(
        api.file_at(&repo(), "no/such.yaml", "main")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        api.file_at(&repo(), "docs/x.md", "b")
            .await
            .unwrap()
            .is_some()
    );
}
