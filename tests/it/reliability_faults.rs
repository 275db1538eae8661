//! GitHub faults (issue 8, item 3): the sandbox fails a seeded 20% of every
//! GitHub call sweepgate makes — 500, 502, silent connections longer than
//! the client's read timeout, and 403 secondary rate limits with
//! `Retry-After` — while the real webhook server (over HTTP), the real
//! queue workers and the real handlers serve opened PRs and `/help`
//! commands. Every job must complete with its effect exactly once, every
//! `Retry-After` must be waited out (in process through the injected
//! sleeper, or by the queue's `run_after`), and one PR whose comments
//! always fail must have its jobs dead-lettered with the reason, then
//! succeed once the faults stop and an operator retries them through the
//! dashboard's admin action.
//!
//! Bounded here; `SWEEPGATE_FAULT_JOBS=2000 cargo test --release --test
//! reliability_faults -- --ignored` runs the full version and writes
//! `docs/reliability/faults.json`.
use crate::common;

use async_trait::async_trait;
use common::transcript::{ADMIN_TOKEN, OWNER, REPO, app_key_pem, fixture_files};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use sweepgate::config::server::Secret;
use sweepgate::events::EventRouter;
use sweepgate::github::{Credentials, GitHub, GitHubConfig, RetryPolicy, Sleeper};
use sweepgate::handlers::{Services, event_router};
use sweepgate::queue::{JobFailure, JobRunner, QueueConfig, WorkerPool};
use sweepgate::server::{AppState, router};
use sweepgate::store::{JobRow, JobState, Store, now_ms};
use sweepgate_sandbox::{Change, Fault, PullRequestSpec, Sandbox, SandboxConfig};
use tokio::sync::Notify;

/// The client gives up on a silent connection after this long…
const READ_TIMEOUT: Duration = Duration::from_millis(500);
/// …and a "timeout" fault keeps the connection silent this long.
const SILENCE: Duration = Duration::from_secs(3);
/// Waits up to this long are spent in process; longer ones go to the queue.
const MAX_WAIT: Duration = Duration::from_secs(1);
const GUIDE: &str = "<!-- recipe-reminder -->";
const LINT: &str = "<!-- sweepgate:recipe-lint";
const GATE: &str = "<!-- sweepgate:sweep-gate -->";

/// Records the in-process waits instead of spending them.
#[derive(Default)]
struct Waits(Mutex<Vec<Duration>>);

#[async_trait]
impl Sleeper for Waits {
    async fn sleep(&self, d: Duration) {
        self.0.lock().unwrap().push(d);
    }
}

/// One attempt of a job as the worker saw it.
#[derive(Debug, Clone)]
struct Attempt {
    job: i64,
    /// The job's attempt counter at this claim (1-based).
    attempt: i64,
    /// When the queue allowed it to run, and when it was claimed.
    run_after: i64,
    claimed_at: i64,
    failure: Option<(String, Option<Duration>, i64)>,
}

/// The real router, with every attempt written down.
struct Observed {
    inner: EventRouter,
    log: Mutex<Vec<Attempt>>,
}

#[async_trait]
impl JobRunner for Observed {
    async fn run(&self, store: &Store, job: &JobRow) -> Result<String, JobFailure> {
        let result = self.inner.run(store, job).await;
        self.log.lock().unwrap().push(Attempt {
            job: job.id,
            attempt: job.attempts,
            run_after: job.run_after,
            claimed_at: job.updated_at,
            failure: result
                .as_ref()
                .err()
                .map(|f| (f.message.clone(), f.retry_after, now_ms())),
        });
        result
    }
}

/// What one run did, for the assertions and the record.
#[derive(Debug, Default)]
struct Figures {
    prs: usize,
    jobs: usize,
    github_jobs: usize,
    calls: usize,
    token_fetches: usize,
    faults: BTreeMap<&'static str, usize>,
    in_process_waits: usize,
    retry_after_waits_in_process: usize,
    queue_retries: usize,
    retry_after_waits_in_queue: usize,
    dead_lettered: usize,
    retried: usize,
    bot_comments: usize,
    extra_check_runs: usize,
    seconds: f64,
}

fn fault_kind(recorded: &str) -> &'static str {
    if recorded.contains("Status(500)") {
        "500"
    } else if recorded.contains("Status(502)") {
        "502"
    } else if recorded.contains("retry_after: 1") {
        "403 Retry-After: 1"
    } else if recorded.contains("retry_after: 2") {
        "403 Retry-After: 2"
    } else {
        "other"
    }
}

/// Waits until nothing is pending, running or undelivered, three polls in
/// a row.
async fn settle(store: &Store, sandbox: &Sandbox, budget: Duration) {
    let start = Instant::now();
    let mut quiet = 0;
    while quiet < 3 {
        let c = store.queue_counts().await.unwrap();
        if c.pending == 0 && c.running == 0 && sandbox.pending_deliveries() == 0 {
            quiet += 1;
        } else {
            quiet = 0;
        }
        assert!(
            start.elapsed() < budget,
            "the queue never settled: {c:?}, {} deliveries undelivered",
            sandbox.pending_deliveries()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn changelog_append(i: usize) -> Change {
    let path = common::data_dir().join("inferencex/perf-changelog.yaml");
    let mut text = std::fs::read_to_string(path).unwrap();
    text.push_str(&format!(
        "\n- config-keys:\n    - dsv4-fp8-h200-vllm\n  description:\n    - \"Retune {i}\"\n  pr-link: https://github.com/InferenceX/InferenceX/pull/{i}\n"
    ));
    Change::write("perf-changelog.yaml", text)
}

/// `prs` PRs opened with a recipe change, `commands` `/help` comments on
/// each; `seed` chooses which calls fail.
async fn run(prs: usize, commands: usize, seed: u64) -> Figures {
    let started = Instant::now();
    let (sandbox, base) = Sandbox::start_with(SandboxConfig::default()).await.unwrap();
    sandbox.add_org(OWNER);
    sandbox
        .add_repo(OWNER, REPO, "main", fixture_files())
        .unwrap();
    sandbox.install_app(OWNER);
    let db = common::TestDb::sqlite().await;
    let store = db.store.clone();

    let waits = Arc::new(Waits::default());
    let github = GitHub::with_sleeper(
        GitHubConfig {
            api_url: base,
            credentials: Credentials::App {
                app_id: sandbox.app_id(),
                private_key_pem: Secret::new(app_key_pem()),
            },
            policy: RetryPolicy {
                base: Duration::from_millis(1),
                max_wait: MAX_WAIT,
                read_timeout: READ_TIMEOUT,
                ..RetryPolicy::default()
            },
        },
        waits.clone(),
    )
    .unwrap();
    let observed = Arc::new(Observed {
        inner: event_router(Services::new(github)),
        log: Mutex::default(),
    });
    let queue = QueueConfig {
        workers: 6,
        lease: Duration::from_secs(30),
        poll: Duration::from_millis(20),
        max_attempts: 8,
        backoff_base: Duration::from_millis(10),
        backoff_max: Duration::from_millis(200),
        drain: Duration::from_secs(5),
    };
    let wake = Arc::new(Notify::new());
    let pool = WorkerPool::start(
        store.clone(),
        observed.clone(),
        queue.clone(),
        wake.clone(),
        "faults",
    );
    // The webhook intake and the dashboard, as `sweepgate serve` mounts them.
    let mut intake = AppState::new(
        store.clone(),
        vec![Secret::new(sandbox.webhook_secret())],
        wake.clone(),
    );
    intake.max_attempts = queue.max_attempts;
    let app = router(intake).merge(sweepgate::dashboard::router(
        sweepgate::dashboard::DashState::new(
            store.clone(),
            Some(Secret::new(ADMIN_TOKEN)),
            None,
            wake.clone(),
        ),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    sandbox.take_deliveries();
    sandbox.deliver_to(&format!("{server}/webhook"));

    // One PR whose comments always fail: its jobs exhaust their attempts.
    let doomed = 1;
    sandbox.inject(Fault::status(502).always().on(
        "POST",
        &format!("/repos/{OWNER}/{REPO}/issues/{doomed}/comments"),
    ));
    // 20% of every other call, by kind; each fault is tried only when the
    // ones before it passed, so the rates are conditional.
    let mix: [(Fault, f64); 5] = [
        (Fault::status(500), 0.05),
        (Fault::status(502), 0.05),
        (Fault::delay(SILENCE), 0.04),
        (Fault::secondary_rate_limit(1), 0.03),
        (Fault::secondary_rate_limit(2), 0.03),
    ];
    let mut left = 1.0;
    for (i, (fault, rate)) in mix.into_iter().enumerate() {
        // Repository calls: the installation-token exchange happens inside
        // octocrab, outside sweepgate's retry policy.
        sandbox.inject(
            fault
                .path("/repos/")
                .probability(rate / left, seed + i as u64),
        );
        left -= rate;
    }

    let mut opened = Vec::new();
    for i in 0..prs {
        let branch = format!("retune-{i}");
        sandbox.create_branch(OWNER, REPO, &branch, "main").unwrap();
        sandbox
            .commit_as(
                OWNER,
                REPO,
                &branch,
                &[changelog_append(i)],
                "retune",
                "dev",
            )
            .unwrap();
        let pr = sandbox
            .open_pr(PullRequestSpec::new(OWNER, REPO, &branch, "dev").title("Retune"))
            .unwrap();
        opened.push(pr);
    }
    assert_eq!(opened[0].number, doomed);
    let mut asked: HashMap<u64, Vec<u64>> = HashMap::new();
    for round in 0..commands {
        // The doomed PR gets two: its dead letters are few but several.
        for pr in opened.iter().filter(|p| p.number != doomed || round < 2) {
            let user = format!("user{round}");
            let id = pr.post_comment(&user, "CONTRIBUTOR", "/help").unwrap();
            asked.entry(pr.number).or_default().push(id);
        }
    }
    let budget = Duration::from_secs(120 + (prs * commands) as u64 / 2);
    settle(&store, &sandbox, budget).await;

    // Phase 1: the doomed PR's jobs are dead, and any other job whose
    // eight attempts all met a fault (a job of many calls can: a 403 with a
    // long Retry-After fails its attempt at once); each with its reason.
    let dead = store.jobs(Some(JobState::Dead), 100_000).await.unwrap();
    let log = observed.log.lock().unwrap().clone();
    let doomed_path = format!("POST /repos/{OWNER}/{REPO}/issues/{doomed}/comments");
    let doomed_key = Some(format!("{OWNER}/{REPO}#{doomed}"));
    for job in &dead {
        assert_eq!(job.attempts, queue.max_attempts as i64, "{job:?}");
        let attempts: Vec<&Attempt> = log.iter().filter(|a| a.job == job.id).collect();
        assert_eq!(attempts.len(), queue.max_attempts as usize);
        let last = attempts.iter().max_by_key(|a| a.attempt).unwrap();
        let (reason, _, _) = last
            .failure
            .clone()
            .expect("a dead job's last attempt failed");
        assert_eq!(job.last_error.as_deref(), Some(reason.as_str()));
        assert!(reason.contains("GitHub"), "{reason}");
        if job.serial_key == doomed_key {
            assert!(
                attempts.iter().any(|a| a
                    .failure
                    .as_ref()
                    .is_some_and(|f| f.0.contains(&doomed_path))),
                "{job:?}"
            );
        }
    }
    let doomed_dead = dead.iter().filter(|j| j.serial_key == doomed_key).count();
    assert_eq!(
        doomed_dead, 3,
        "the doomed PR's opening and its two commands"
    );

    // Phase 2: the faults stop; the operator retries through the dashboard.
    let requests = sandbox.requests();
    let injected = sandbox.faults_injected() as usize;
    sandbox.clear_faults();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for job in &dead {
        let resp = http
            .post(format!("{server}/queue/{}/retry", job.id))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 303, "retry of job {}", job.id);
    }
    settle(&store, &sandbox, budget).await;
    pool.shutdown().await;

    let jobs = store.jobs(None, 1_000_000).await.unwrap();
    let not_done: Vec<&JobRow> = jobs.iter().filter(|j| j.state != "done").collect();
    assert!(not_done.is_empty(), "{not_done:#?}");

    // Every effect exactly once.
    let mut bot_comments = 0;
    let mut extra_check_runs = 0;
    for pr in &opened {
        let comments = sandbox.bot_comments(OWNER, REPO, pr.number);
        bot_comments += comments.len();
        let count = |prefix: &str| {
            comments
                .iter()
                .filter(|c| c.body.starts_with(prefix))
                .count()
        };
        assert_eq!(count(GUIDE), 1, "#{}: one guide", pr.number);
        assert_eq!(count(LINT), 1, "#{}: one lint summary", pr.number);
        assert_eq!(count(GATE), 1, "#{}: one gate comment", pr.number);
        let ids = &asked[&pr.number];
        for id in ids {
            let marker = sweepgate::comments::reply_marker(*id);
            assert_eq!(
                count(&marker),
                1,
                "#{}: one reply to comment {id}",
                pr.number
            );
        }
        assert_eq!(
            comments.len(),
            3 + ids.len(),
            "#{}: nothing else",
            pr.number
        );
        // A retried job may report a check again on the same commit; GitHub
        // shows the newest, which must say what a fault-free run says.
        let head = pr.head_sha().unwrap();
        let runs = sandbox.check_runs(OWNER, REPO, &head);
        for name in ["sweepgate / recipe-lint", "sweepgate / sweep-gate"] {
            let named: Vec<_> = runs.iter().filter(|r| r.name == name).collect();
            assert!(!named.is_empty(), "#{}: no {name}", pr.number);
            let conclusions: Vec<_> = named.iter().map(|r| r.conclusion.clone()).collect();
            assert!(
                conclusions.windows(2).all(|w| w[0] == w[1]),
                "#{} {name}: {conclusions:?}",
                pr.number
            );
            extra_check_runs += named.len() - 1;
        }
    }
    // Every `/help` reply says the same thing (only the marker differs).
    let replies: Vec<String> = opened
        .iter()
        .flat_map(|pr| sandbox.bot_comments(OWNER, REPO, pr.number))
        .filter(|c| c.body.starts_with("<!-- sweepgate:reply"))
        .map(|c| {
            c.body
                .split_once('\n')
                .unwrap()
                .1
                .replace(char::is_numeric, "")
        })
        .collect();
    let asked_total: usize = asked.values().map(Vec::len).sum();
    assert_eq!(replies.len(), asked_total);
    assert!(replies.iter().all(|r| r == &replies[0]), "{replies:#?}");

    // The faults the sandbox injected, by kind. A timeout is a fault the
    // client hung up on: injected, but never answered, so never recorded.
    let mut faults: BTreeMap<&'static str, usize> = BTreeMap::new();

    for r in &requests {
        if let Some(f) = &r.fault {
            let doomed_call = r.method == "POST"
                && r.path == format!("/repos/{OWNER}/{REPO}/issues/{doomed}/comments");
            let kind = if doomed_call {
                "502 (doomed PR)"
            } else {
                fault_kind(f)
            };
            *faults.entry(kind).or_default() += 1;
        }
    }
    let answered_faults: usize = faults.values().sum();
    let delays = injected - answered_faults;
    // Nothing failed but the injected faults. (A timed-out POST that still
    // took effect would show above as a duplicate comment.)
    assert!(
        requests.iter().all(|r| r.fault.is_some() || r.status < 500),
        "only injected faults fail"
    );
    faults.insert("timeout", delays);
    // One installation token serves every job (a few when the first jobs
    // start together), not one per job.
    let token_fetches = requests
        .iter()
        .filter(|r| r.path.ends_with("/access_tokens"))
        .count();
    assert!(
        (1..=queue.workers).contains(&token_fetches),
        "{token_fetches} installation tokens fetched"
    );
    for kind in [
        "500",
        "502",
        "timeout",
        "403 Retry-After: 1",
        "403 Retry-After: 2",
    ] {
        assert!(
            faults.get(kind).copied().unwrap_or(0) > 0,
            "no {kind}: {faults:?}"
        );
    }

    // `Retry-After` was honoured. In process: each 403 was followed by a
    // wait of exactly its `Retry-After`, unless it was the call's last
    // attempt, whose error carries it to the queue.
    let recorded = waits.0.lock().unwrap().clone();
    let failures: Vec<&Attempt> = log.iter().filter(|a| a.failure.is_some()).collect();
    let failed_with = |d: u64| {
        failures
            .iter()
            .filter(|a| a.failure.as_ref().unwrap().1 == Some(Duration::from_secs(d)))
            .count()
    };
    let waited = |d: u64| {
        recorded
            .iter()
            .filter(|w| **w == Duration::from_secs(d))
            .count()
    };
    // Every 403 the client read was waited out in process or handed to the
    // queue. On a loaded machine the client may time out before reading a
    // 403 the sandbox sent (a transport error to it): a few may fall short.
    let honoured = |sent: usize, seen: usize, what: &str| {
        assert!(
            seen <= sent && seen + 1 + sent / 50 >= sent,
            "{what}: {sent} sent, {seen} waited out"
        );
    };
    honoured(
        faults["403 Retry-After: 1"],
        waited(1) + failed_with(1),
        "Retry-After: 1, in process or by the queue",
    );
    assert_eq!(waited(2), 0, "a wait over max_wait never blocks a worker");
    honoured(
        faults["403 Retry-After: 2"],
        failed_with(2),
        "Retry-After: 2, by the queue",
    );
    assert!(recorded.iter().all(|w| *w <= MAX_WAIT));
    // In the queue: the next attempt was scheduled no sooner than the
    // failure plus its `Retry-After`, and did not run before that.
    let mut by_attempt: HashMap<(i64, i64), &Attempt> = HashMap::new();
    for a in &log {
        by_attempt.insert((a.job, a.attempt), a);
    }
    let mut queue_ra = 0;
    let mut queue_retries = 0;
    for a in &failures {
        let (_, retry_after, failed_at) = a.failure.clone().unwrap();
        let Some(next) = by_attempt.get(&(a.job, a.attempt + 1)) else {
            continue;
        };
        queue_retries += 1;
        assert!(next.claimed_at >= next.run_after, "{next:?} ran early");
        if let Some(ra) = retry_after {
            queue_ra += 1;
            assert!(
                next.run_after >= failed_at + ra.as_millis() as i64,
                "job {} retried {} ms after a Retry-After of {ra:?}",
                a.job,
                next.run_after - failed_at
            );
        }
    }
    assert!(queue_ra > 0);

    let kind = |k: &str| jobs.iter().filter(|j| j.kind == k).count();
    assert_eq!(kind("pull_request.opened"), prs);
    // The commands, and a delivery for each comment the bot posted.
    assert_eq!(kind("issue_comment.created"), asked_total + bot_comments);
    let github_jobs = prs + asked_total;
    db.cleanup().await;
    Figures {
        prs,
        jobs: jobs.len(),
        github_jobs,
        calls: requests.len() + delays,
        token_fetches,
        in_process_waits: recorded.len(),
        retry_after_waits_in_process: waited(1),
        queue_retries,
        retry_after_waits_in_queue: queue_ra,
        dead_lettered: dead.len(),
        retried: dead.len(),
        bot_comments,
        extra_check_runs,
        faults,
        seconds: started.elapsed().as_secs_f64(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fifth_of_github_calls_fail_and_every_job_still_has_its_effect_once() {
    // Few PRs, many commands: an opening (lint, gate) costs seconds in a
    // debug build, a command milliseconds.
    let f = run(5, 50, 8).await;
    assert!(f.github_jobs >= 200, "{f:#?}");
    eprintln!("{f:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "full run: SWEEPGATE_FAULT_JOBS=2000 cargo test --release --test reliability_faults -- --ignored"]
async fn full_fault_run_writes_its_record() {
    let jobs: usize = std::env::var("SWEEPGATE_FAULT_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    // 51 GitHub-calling jobs per PR: the opening and 50 commands.
    let prs = jobs.div_ceil(51).max(2);
    let f = run(prs, 50, 2026).await;
    eprintln!("{f:#?}");
    let injected: usize = f.faults.values().sum();
    let kinds: Vec<String> = f.faults.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let record = serde_json::json!({
        "order": 30,
        "property": "GitHub faults",
        "tried": format!(
            "{} jobs calling GitHub ({} PRs opened, {} /help commands), {} GitHub calls, a seeded 20% of repository calls failing, and every comment on one PR: {}",
            f.github_jobs, f.prs, f.github_jobs - f.prs, f.calls, kinds.join(", ")
        ),
        "result": format!(
            "all {} jobs done, every comment exactly once ({} bot comments, 0 duplicates); {} in-process waits ({} of them a Retry-After), {} queue retries ({} after a Retry-After, none sooner); {} jobs dead-lettered with their reason, {} done after an admin retry; {} check runs reported again on the same commit by retried jobs (the newest is shown, same conclusion); {injected} faults injected; {} installation token fetched",
            f.jobs, f.bot_comments, f.in_process_waits, f.retry_after_waits_in_process,
            f.queue_retries, f.retry_after_waits_in_queue, f.dead_lettered, f.retried,
            f.extra_check_runs, f.token_fetches
        ),
        "command": format!(
            "SWEEPGATE_FAULT_JOBS={jobs} cargo test {}--test reliability_faults -- --ignored",
            if cfg!(debug_assertions) { "" } else { "--release " }
        ),
        "ran_at": chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "duration_s": (f.seconds * 10.0).round() / 10.0,
    });
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reliability/faults.json");
    std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&record).unwrap() + "\n").unwrap();
}
