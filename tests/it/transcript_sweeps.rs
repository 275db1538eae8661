//! Transcripts of sweep runs: result links when a run completes, `/use`
//! pinning and staging a run, the results repository's callbacks editing
//! the reply, and refusals naming the fact that failed.
use crate::common;

use common::transcript::{OWNER, REPO, World};
use serde_json::json;
use sweepgate_core::ids::{InstallationId, PrNumber, RepoName, RunId};
use sweepgate_sandbox::{Change, RunSpec};

const RUN: u64 = 38614048439;
const RESULTS_OWNER: &str = "SemiAnalysisAI";
const RESULTS_REPO: &str = "InferenceX-app";

fn changelog_append() -> Change {
    let path = common::data_dir().join("inferencex/perf-changelog.yaml");
    let mut text = std::fs::read_to_string(path).unwrap();
    text.push_str(
        "\n- config-keys:\n    - dsv4-fp8-h200-vllm\n  description:\n    - \"Retune the H200 TP8 points\"\n  pr-link: https://github.com/InferenceX/InferenceX/pull/1\n",
    );
    Change::write("perf-changelog.yaml", text)
}

/// A PR appending a changelog entry, labelled for a full sweep, with one
/// completed run of the sweep workflow on its head.
async fn world_with_run() -> (World, sweepgate_sandbox::Pr) {
    world_with_run_in(World::new().await).await
}

/// [`world_with_run`] in a given world.
async fn world_with_run_in(mut w: World) -> (World, sweepgate_sandbox::Pr) {
    w.sandbox.add_org(RESULTS_OWNER);
    w.sandbox
        .add_repo(RESULTS_OWNER, RESULTS_REPO, "main", [("README.md", "app")])
        .unwrap();
    w.sandbox.install_app(RESULTS_OWNER);
    let pr = w.open_pr("dsv4-h200", &[changelog_append()], "vendor-dev");
    pr.add_label("full-sweep-fail-fast", "maint").unwrap();
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .starts_with("<!-- recipe-reminder -->")
    );
    assert!(
        w.next_comment(pr.number)
            .starts_with("<!-- sweepgate:recipe-lint")
    );
    let head = pr.head_sha().unwrap();
    let s = &w.sandbox;
    let run = s
        .add_workflow_run(
            RunSpec::new(OWNER, REPO, "run-sweep.yml", &head)
                .id(RUN)
                .branch("dsv4-h200"),
        )
        .unwrap();
    s.add_job(run, "check-changelog", Some("success")).unwrap();
    s.add_job(
        run,
        "canary / p1 | dsv4 fp8 h200 vllm TP8 c4",
        Some("success"),
    )
    .unwrap();
    for (c, outcome) in [("c8", "success"), ("c16", "success"), ("c32", "failure")] {
        s.add_job(
            run,
            &format!("single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 {c}"),
            Some(outcome),
        )
        .unwrap();
    }
    s.add_job(
        run,
        "eval / p1 | dsv4 fp8 h200 vllm TP8 c16 | eval",
        Some("cancelled"),
    )
    .unwrap();
    s.add_artifact(run, "results_bmk", [("agg_bmk.json", "[]")])
        .unwrap();
    s.add_artifact(
        run,
        "changelog-metadata",
        [("changelog_metadata.json", "{}")],
    )
    .unwrap();
    s.complete_run(run, "failure").unwrap();
    w.deliver().await;
    (w, pr)
}

#[tokio::test]
async fn a_completed_run_gets_its_result_links_once() {
    let (mut w, pr) = world_with_run().await;
    insta::assert_snapshot!("results", w.next_comment(pr.number));
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn use_pins_stages_and_the_callbacks_edit_the_reply() {
    let (mut w, pr) = world_with_run().await;
    let (cmd, reply) = use_run(&mut w, &pr).await;
    assert_eq!(
        reply,
        format!("<!-- sweepgate:reply comment={cmd} -->\n@nvpohanh staging run {RUN}…\n")
    );
    let dispatches = w.sandbox.repository_dispatches();
    assert_eq!(dispatches.len(), 1);
    let d = &dispatches[0];
    assert_eq!(d.event_type, "stage-results");
    assert_eq!(d.client_payload["run-id"], RUN.to_string());
    assert_eq!(d.client_payload["pr-number"], pr.number.to_string());
    assert_eq!(d.client_payload["requested-by"], "nvpohanh");
    assert_eq!(d.client_payload["run-date"], "2026-10-14");
    let reply_id = d.client_payload["comment-id"].as_str().unwrap().to_owned();
    let stored =
        w.db.store
            .pin(&RepoName::new(OWNER, REPO), PrNumber(pr.number))
            .await
            .unwrap();
    assert_eq!(stored.map(|p| p.run), Some(RunId(RUN)));

    // The results repository calls back into the benchmark repository.
    let gh = common::transcript::github_for(&w.sandbox);
    let callback = |event: &str, extra: serde_json::Value| {
        let mut payload = json!({
            "source-repository": format!("{RESULTS_OWNER}/{RESULTS_REPO}"),
            "pr-number": pr.number.to_string(),
            "run-id": RUN.to_string(),
            "run-date": "2026-10-14",
            "requested-by": "nvpohanh",
            "comment-id": reply_id,
            "app-run-id": "555",
        });
        payload
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({ "event_type": event, "client_payload": payload })
    };
    let main_repo = RepoName::new(OWNER, REPO);
    let inst_api = gh.installation(InstallationId(w.installation)).unwrap();
    inst_api
        .repository_dispatch(&main_repo, &callback("stage-results-started", json!({})))
        .await
        .unwrap();
    w.deliver().await;
    insta::assert_snapshot!("staging_started", w.next_comment(pr.number));
    inst_api
        .repository_dispatch(
            &main_repo,
            &callback(
                "stage-results-completed",
                json!({ "stage-succeeded": "true" }),
            ),
        )
        .await
        .unwrap();
    w.deliver().await;
    insta::assert_snapshot!("staged", w.next_comment(pr.number));
    // A forged callback from elsewhere changes nothing.
    let forged = json!({ "event_type": "stage-results-completed", "client_payload": {
        "source-repository": "evil/app", "pr-number": pr.number.to_string(), "run-id": "1",
        "run-date": "2026-10-14", "requested-by": "x", "stage-succeeded": "false" } });
    inst_api
        .repository_dispatch(&main_repo, &forged)
        .await
        .unwrap();
    let refused = run_refusing(&mut w).await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("source-repository"),
        "a forged callback is refused: {}",
        refused[0]
    );
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn invalid_runs_are_refused_with_the_reason() {
    let (mut w, pr) = world_with_run().await;
    w.next_comment(pr.number);
    w.sandbox
        .set_permission(OWNER, REPO, "nvpohanh", "write", "write")
        .unwrap();
    // No such run.
    let c1 = pr
        .post_comment("nvpohanh", "COLLABORATOR", "/use 12345")
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!(
            "<!-- sweepgate:reply comment={c1} -->\n@nvpohanh run 12345 cannot be used: no such workflow run in this repository.\n"
        )
    );
    // Without an id only a successful run is picked; this one failed.
    let c2 = pr
        .post_comment("nvpohanh", "COLLABORATOR", "/reuse-sweep-run")
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!(
            "<!-- sweepgate:reply comment={c2} -->\n@nvpohanh no run of this PR can be used (1 completed runs checked; the newest: run {RUN}: it concluded `failure`; without a run id only a successful run is picked). Pin one with `/use <run_id>`.\n"
        )
    );
    // A new push moves the head; the run's commit stays in the PR, so it
    // still counts. A run on a commit outside the PR does not.
    let other = w.sandbox.branch_sha(OWNER, REPO, "main").unwrap();
    let stray = w
        .sandbox
        .add_workflow_run(
            RunSpec::new(OWNER, REPO, "run-sweep.yml", &other)
                .id(777)
                .branch("main"),
        )
        .unwrap();
    w.sandbox
        .add_artifact(stray, "results_bmk", [("agg_bmk.json", "[]")])
        .unwrap();
    w.sandbox.complete_run(stray, "success").unwrap();
    w.sandbox.take_deliveries();
    let c3 = pr
        .post_comment("nvpohanh", "COLLABORATOR", "/use 777")
        .unwrap();
    w.deliver().await;
    let body = w.next_comment(pr.number);
    assert!(
        body.starts_with(&format!("<!-- sweepgate:reply comment={c3} -->\n@nvpohanh run 777 cannot be used: its commit `{}` is no longer among this PR's commits.", &other[..12])),
        "{body}"
    );
    assert!(w.sandbox.repository_dispatches().is_empty());
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn the_gate_explains_a_refusal_once_and_turns_green_when_fixed() {
    let mut w = World::new().await;
    let pr = w.open_pr("dsv4-h200", &[changelog_append()], "vendor-dev");
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .starts_with("<!-- recipe-reminder -->")
    );
    assert!(
        w.next_comment(pr.number)
            .starts_with("<!-- sweepgate:recipe-lint")
    );
    // No label yet: the gate says so (the PR appends an entry).
    insta::assert_snapshot!("gate_no_label", w.next_comment(pr.number));
    pr.add_label("full-sweep-fail-fast", "maint").unwrap();
    pr.add_label("full-sweep-enabled", "maint").unwrap();
    w.deliver().await;
    insta::assert_snapshot!("gate_two_labels", w.next_comment(pr.number));
    pr.remove_label("full-sweep-enabled", "maint").unwrap();
    w.deliver().await;
    insta::assert_snapshot!("gate_passes", w.next_comment(pr.number));
    assert_eq!(
        pr.bot_comments().len(),
        3,
        "guide, lint summary and one gate comment edited in place"
    );
    let head = pr.head_sha().unwrap();
    let runs: Vec<_> = w
        .sandbox
        .check_runs(OWNER, REPO, &head)
        .into_iter()
        .filter(|c| c.name == "sweepgate / sweep-gate")
        .collect();
    let last = runs.iter().max_by_key(|c| c.id).unwrap();
    assert_eq!(last.conclusion.as_deref(), Some("success"));
    assert!(
        runs.iter()
            .any(|c| c.conclusion.as_deref() == Some("failure"))
    );
    // An unrelated label changes nothing.
    let before = w.sandbox.check_runs(OWNER, REPO, &head).len();
    pr.add_label("documentation", "maint").unwrap();
    w.deliver().await;
    assert_eq!(w.sandbox.check_runs(OWNER, REPO, &head).len(), before);
    w.finish(&[pr.number]).await;
}

/// The gate comment's reasons (its `- ` lines), or `passes` when it says so.
fn gate_reasons(comment: &str) -> Vec<String> {
    assert!(
        comment.starts_with("<!-- sweepgate:sweep-gate -->"),
        "{comment}"
    );
    if comment.contains("The sweep gate passes") {
        return vec!["passes".into()];
    }
    comment
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_fork_pr_sweeps_only_the_commit_a_maintainer_labelled() {
    let mut w = World::new().await;
    w.sandbox.fork(OWNER, REPO, "vendor-dev").unwrap();
    w.sandbox
        .set_permission(OWNER, REPO, "maint", "maintain", "maintain")
        .unwrap();
    w.sandbox
        .set_permission(OWNER, REPO, "drive-by", "read", "read")
        .unwrap();
    w.sandbox
        .create_branch("vendor-dev", REPO, "dsv4-h200", "main")
        .unwrap();
    w.sandbox
        .commit_as(
            "vendor-dev",
            REPO,
            "dsv4-h200",
            &[changelog_append()],
            "Retune",
            "vendor-dev",
        )
        .unwrap();
    let pr = w
        .sandbox
        .open_pr(
            sweepgate_sandbox::PullRequestSpec::new(
                OWNER,
                REPO,
                "vendor-dev:dsv4-h200",
                "vendor-dev",
            )
            .title("A recipe change from a fork"),
        )
        .unwrap();
    w.deliver().await;
    let opened = w.take_comments(pr.number);
    assert!(opened[0].starts_with("<!-- recipe-reminder -->"));
    assert!(opened[1].starts_with("<!-- sweepgate:recipe-lint"));
    assert_eq!(
        gate_reasons(&opened[2]),
        vec![
            "no primary sweep label: add exactly one of `full-sweep-fail-fast`, `full-sweep-enabled`, `non-canary-full-sweep-enabled`"
        ]
    );

    // Anyone can label a PR they can triage; on a fork only a writer's
    // label counts.
    pr.add_label("full-sweep-fail-fast", "drive-by").unwrap();
    w.deliver().await;
    assert_eq!(
        gate_reasons(&w.next_comment(pr.number)),
        vec![
            "on a fork PR the `full-sweep-fail-fast` label must be applied by a user with write access; @drive-by has read"
        ]
    );
    pr.remove_label("full-sweep-fail-fast", "maint").unwrap();
    pr.add_label("full-sweep-fail-fast", "maint").unwrap();
    w.deliver().await;
    assert_eq!(gate_reasons(&w.next_comment(pr.number)), vec!["passes"]);
    let first = pr.head_sha().unwrap();

    // The author pushes again: the label does not carry over.
    let second = pr
        .push(&[Change::write("NOTES.md", "more\n")], "notes")
        .unwrap();
    w.deliver().await;
    let comments = w.take_comments(pr.number);
    let gate = comments
        .iter()
        .find(|c| c.starts_with("<!-- sweepgate:sweep-gate -->"))
        .unwrap();
    assert_eq!(
        gate_reasons(gate),
        vec![format!(
            "on a fork PR the `full-sweep-fail-fast` label allows a sweep of the commit it was applied on ({}); the head is now {}: a user with write access must apply it again",
            &first[..8],
            &second[..8]
        )]
    );
    let red = w
        .sandbox
        .check_runs(OWNER, REPO, &second)
        .into_iter()
        .filter(|c| c.name == "sweepgate / sweep-gate")
        .max_by_key(|c| c.id)
        .unwrap();
    assert_eq!(red.conclusion.as_deref(), Some("failure"));

    // A maintainer applies it again: the new head may be swept.
    pr.remove_label("full-sweep-fail-fast", "maint").unwrap();
    pr.add_label("full-sweep-fail-fast", "maint").unwrap();
    w.deliver().await;
    let comments = w.take_comments(pr.number);
    assert_eq!(gate_reasons(comments.last().unwrap()), vec!["passes"]);
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn every_other_gate_refusal_names_its_rule() {
    let mut w = World::new().await;
    let pr = w.open_pr("dsv4-h200", &[changelog_append()], "vendor-dev");
    w.deliver().await;
    assert_eq!(w.take_comments(pr.number).len(), 3, "guide, lint, gate");

    // A modifier alone.
    pr.add_label("evals-only", "maint").unwrap();
    w.deliver().await;
    assert_eq!(
        gate_reasons(&w.next_comment(pr.number)),
        vec![
            "no primary sweep label: add exactly one of `full-sweep-fail-fast`, `full-sweep-enabled`, `non-canary-full-sweep-enabled` (the modifiers `evals-only` need one)"
        ]
    );
    pr.remove_label("evals-only", "maint").unwrap();
    pr.add_label("full-sweep-enabled", "maint").unwrap();
    w.deliver().await;
    assert_eq!(gate_reasons(&w.next_comment(pr.number)), vec!["passes"]);

    // An appended entry the PR gate refuses, named by file and line.
    let path = common::data_dir().join("inferencex/perf-changelog.yaml");
    let mut text = std::fs::read_to_string(path).unwrap();
    let line = text.lines().count() + 2;
    text.push_str("\n- config-keys:\n    - no-such-key\n  description:\n    - \"x\"\n  pr-link: https://github.com/InferenceX/InferenceX/pull/1\n");
    pr.push(&[Change::write("perf-changelog.yaml", text)], "typo")
        .unwrap();
    w.deliver().await;
    let comments = w.take_comments(pr.number);
    let gate = comments
        .iter()
        .find(|c| c.starts_with("<!-- sweepgate:sweep-gate -->"))
        .unwrap();
    let reasons = gate_reasons(gate);
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons[0].starts_with(&format!("perf-changelog.yaml:{}", line + 1))
            && reasons[0].contains("no-such-key"),
        "{reasons:?}"
    );

    // `[skip-sweep]` in the head commit: no sweep, by the author's choice
    // (neutral, and the gate comment no longer lists a problem).
    let skip = pr.push(&[changelog_append()], "docs [skip-sweep]").unwrap();
    w.deliver().await;
    w.take_comments(pr.number);
    let last = w
        .sandbox
        .check_runs(OWNER, REPO, &skip)
        .into_iter()
        .filter(|c| c.name == "sweepgate / sweep-gate")
        .max_by_key(|c| c.id)
        .unwrap();
    assert_eq!(last.conclusion.as_deref(), Some("neutral"));
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn stage_results_stages_without_pinning_and_refusals_change_nothing() {
    let (mut w, pr) = world_with_run().await;
    w.next_comment(pr.number); // the result links
    let pin_key = (RepoName::new(OWNER, REPO), PrNumber(pr.number));

    // A COLLABORATOR association with only the read role: refused.
    w.sandbox
        .set_permission(OWNER, REPO, "drive-by", "read", "read")
        .unwrap();
    let c0 = pr
        .post_comment("drive-by", "COLLABORATOR", &format!("/use {RUN}"))
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!(
            "<!-- sweepgate:reply comment={c0} -->\n@drive-by line 1: `/use` may be used only by repository owners, members and collaborators with the write, maintain or admin role; your repository role is read.\n"
        )
    );

    // A run whose results expired.
    let head = pr.head_sha().unwrap();
    let s = &w.sandbox;
    let old = s
        .add_workflow_run(
            RunSpec::new(OWNER, REPO, "run-sweep.yml", &head)
                .id(888)
                .branch("dsv4-h200"),
        )
        .unwrap();
    let results = s
        .add_artifact(old, "results_bmk", [("agg_bmk.json", "[]")])
        .unwrap();
    s.add_artifact(
        old,
        "changelog-metadata",
        [("changelog_metadata.json", "{}")],
    )
    .unwrap();
    s.expire_artifact(results).unwrap();
    s.complete_run(old, "success").unwrap();
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .starts_with("<!-- sweepgate:results run=888 -->")
    );
    w.sandbox
        .set_permission(OWNER, REPO, "maint", "maintain", "maintain")
        .unwrap();
    let c1 = pr.post_comment("maint", "MEMBER", "/use 888").unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!(
            "<!-- sweepgate:reply comment={c1} -->\n@maint run 888 cannot be used: it has no unexpired result artifact (`results_bmk`, `eval_results_all` or `bmk_agentic_*`).\n"
        )
    );
    assert!(w.sandbox.repository_dispatches().is_empty());
    assert_eq!(w.db.store.pin(&pin_key.0, pin_key.1).await.unwrap(), None);

    // `/stage-results` stages a valid run for a writer, and pins nothing.
    let c2 = pr
        .post_comment("maint", "MEMBER", &format!("/stage-results {RUN}"))
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!("<!-- sweepgate:reply comment={c2} -->\n@maint staging run {RUN}…\n")
    );
    let dispatches = w.sandbox.repository_dispatches();
    assert_eq!(dispatches.len(), 1);
    assert_eq!(dispatches[0].client_payload["requested-by"], "maint");
    assert_eq!(w.db.store.pin(&pin_key.0, pin_key.1).await.unwrap(), None);

    // The results repository reports a failure: the reply says so.
    let reply_id = dispatches[0].client_payload["comment-id"]
        .as_str()
        .unwrap()
        .to_owned();
    let gh = common::transcript::github_for(&w.sandbox);
    gh.installation(InstallationId(w.installation))
        .unwrap()
        .repository_dispatch(
            &RepoName::new(OWNER, REPO),
            &json!({ "event_type": "stage-results-completed", "client_payload": {
                "source-repository": format!("{RESULTS_OWNER}/{RESULTS_REPO}"),
                "pr-number": pr.number.to_string(), "run-id": RUN.to_string(),
                "run-date": "2026-10-14", "requested-by": "maint", "comment-id": reply_id,
                "app-run-id": "556", "stage-succeeded": "false" } }),
        )
        .await
        .unwrap();
    w.deliver().await;
    let failed = w.next_comment(pr.number);
    assert!(
        failed.starts_with(&format!(
            "<!-- sweepgate:reply comment={c2} -->\n@maint staging run {RUN} failed. [Inspect the staging workflow]("
        )),
        "{failed}"
    );
    w.finish(&[pr.number]).await;
}

/// The result links consumed, a writer's `/use` of the run: the command's
/// id and the reply.
async fn use_run(w: &mut World, pr: &sweepgate_sandbox::Pr) -> (u64, String) {
    w.next_comment(pr.number); // the result links
    w.sandbox
        .set_permission(OWNER, REPO, "nvpohanh", "write", "write")
        .unwrap();
    let cmd = pr
        .post_comment("nvpohanh", "COLLABORATOR", "/use 38614048439")
        .unwrap();
    w.deliver().await;
    (cmd, w.next_comment(pr.number))
}

/// Runs every queued job; the permanent failures' messages (a refused
/// callback dead-letters its job and changes nothing).
async fn run_refusing(w: &mut World) -> Vec<String> {
    w.post_pending().await;
    let store = w.db.store.clone();
    let mut refused = Vec::new();
    while let Some(c) = store
        .claim(
            "t",
            sweepgate::store::now_ms(),
            std::time::Duration::from_secs(60),
        )
        .await
        .unwrap()
    {
        match sweepgate::queue::JobRunner::run(&w.events, &store, &c.job).await {
            Ok(outcome) => {
                store
                    .complete(&c, sweepgate::store::now_ms(), &outcome)
                    .await
                    .unwrap();
            }
            Err(f) => {
                assert!(f.permanent, "{}", f.message);
                store
                    .fail(
                        &c,
                        sweepgate::store::now_ms(),
                        &f.message,
                        sweepgate::store::AfterFailure::Dead,
                    )
                    .await
                    .unwrap();
                refused.push(f.message);
            }
        }
    }
    refused
}

/// Issue 18, item 7: a staging callback is taken only from sweepgate or a
/// configured sender (GitHub's `sender`, never the payload's
/// `source-repository`), and only for a staging that is pending.
#[tokio::test]
async fn staging_callbacks_from_strangers_or_for_nothing_pending_change_nothing() {
    let (mut w, pr) = world_with_run().await;
    let (cmd, reply) = use_run(&mut w, &pr).await;
    let reply_id = w.sandbox.repository_dispatches()[0].client_payload["comment-id"]
        .as_str()
        .unwrap()
        .to_owned();
    let completed = |run: u64| {
        json!({ "event_type": "stage-results-completed", "client_payload": {
            "source-repository": format!("{RESULTS_OWNER}/{RESULTS_REPO}"),
            "pr-number": pr.number.to_string(), "run-id": run.to_string(),
            "run-date": "2026-10-14", "requested-by": "nvpohanh", "comment-id": reply_id,
            "stage-succeeded": "false" } })
    };
    let main_repo = RepoName::new(OWNER, REPO);

    // A writer of the benchmark repository forges the results repository's
    // callback with a correct payload.
    w.sandbox
        .set_permission(OWNER, REPO, "mallory", "write", "write")
        .unwrap();
    let mallory = sweepgate::github::GitHub::new(sweepgate::github::GitHubConfig {
        api_url: w.sandbox.base_url(),
        credentials: sweepgate::github::Credentials::Token(sweepgate::config::server::Secret::new(
            w.sandbox.user_token("mallory"),
        )),
        policy: sweepgate::github::RetryPolicy::default(),
    })
    .unwrap();
    mallory
        .installation(InstallationId(0))
        .unwrap()
        .repository_dispatch(&main_repo, &completed(RUN))
        .await
        .unwrap();
    let refused = run_refusing(&mut w).await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("sender `mallory` is not sweepgate nor one of sweep.staging-senders"),
        "{}",
        refused[0]
    );

    // sweepgate's own identity, for a run no staging was asked for.
    let gh = common::transcript::github_for(&w.sandbox);
    gh.installation(InstallationId(w.installation))
        .unwrap()
        .repository_dispatch(&main_repo, &completed(1234))
        .await
        .unwrap();
    let refused = run_refusing(&mut w).await;
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("no staging of run 1234 is pending"),
        "{}",
        refused[0]
    );
    // The reply still says what it said.
    let body = w
        .sandbox
        .bot_comments(OWNER, REPO, pr.number)
        .into_iter()
        .find(|c| {
            c.body
                .starts_with(&format!("<!-- sweepgate:reply comment={cmd} -->"))
        })
        .map(|c| c.body)
        .unwrap();
    assert_eq!(body, reply);
    w.finish(&[pr.number]).await;
}

/// Issue 18, item 14: GitHub lists at most 250 commits of a PR; `/use` of
/// a run on the head of a longer PR still finds the head among the PR's
/// commits (the head's history back to the merge base).
#[tokio::test]
async fn use_finds_the_head_of_a_pr_of_more_than_250_commits() {
    let mut w = World::new().await;
    w.sandbox.add_org(RESULTS_OWNER);
    w.sandbox
        .add_repo(RESULTS_OWNER, RESULTS_REPO, "main", [("README.md", "app")])
        .unwrap();
    w.sandbox.install_app(RESULTS_OWNER);
    let s = w.sandbox.clone();
    let branch = "long-history";
    s.create_branch(OWNER, REPO, branch, "main").unwrap();
    for i in 0..260 {
        s.commit_as(
            OWNER,
            REPO,
            branch,
            &[Change::write("notes/progress.md", format!("step {i}\n"))],
            &format!("step {i}"),
            "vendor-dev",
        )
        .unwrap();
    }
    s.commit_as(
        OWNER,
        REPO,
        branch,
        &[changelog_append()],
        "changelog",
        "vendor-dev",
    )
    .unwrap();
    // The pushes before the PR existed are not news.
    s.take_deliveries();
    let pr = s
        .open_pr(sweepgate_sandbox::PullRequestSpec::new(
            OWNER,
            REPO,
            branch,
            "vendor-dev",
        ))
        .unwrap();
    pr.add_label("full-sweep-fail-fast", "maint").unwrap();
    w.deliver().await;
    w.take_comments(pr.number);
    let head = pr.head_sha().unwrap();
    let run = s
        .add_workflow_run(
            RunSpec::new(OWNER, REPO, "run-sweep.yml", &head)
                .id(RUN)
                .branch(branch),
        )
        .unwrap();
    s.add_job(
        run,
        "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c8",
        Some("success"),
    )
    .unwrap();
    s.add_artifact(run, "results_bmk", [("agg_bmk.json", "[]")])
        .unwrap();
    s.complete_run(run, "success").unwrap();
    w.deliver().await;
    w.take_comments(pr.number);
    s.set_permission(OWNER, REPO, "nvpohanh", "write", "write")
        .unwrap();
    let cmd = pr
        .post_comment("nvpohanh", "COLLABORATOR", &format!("/use {RUN}"))
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!("<!-- sweepgate:reply comment={cmd} -->\n@nvpohanh staging run {RUN}…\n")
    );
    w.finish(&[pr.number]).await;
}

/// Issue 18, "Manifest": staging requests go out with the staging token
/// (`contents: write` on the results repository alone), so the App keeps
/// `contents: read` on the benchmark repository.
#[tokio::test]
async fn staging_requests_use_the_staging_credential_not_the_app() {
    let world = World::with_setup(
        common::TestDb::sqlite().await,
        common::transcript::Setup {
            staging_user: Some("results-stager".into()),
            ..Default::default()
        },
    )
    .await;
    let (mut w, pr) = world_with_run_in(world).await;
    use_run(&mut w, &pr).await;
    let sent = w.sandbox.requests_matching(
        "POST",
        &format!("/repos/{RESULTS_OWNER}/{RESULTS_REPO}/dispatches"),
    );
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (sent[0].auth.as_str(), sent[0].caller.as_deref()),
        ("token", Some("user:results-stager"))
    );
    // The App's manifest still asks for `contents: read` only.
    assert!(sweepgate::deploy::PERMISSIONS.contains(&("contents", "read")));
    w.finish(&[pr.number]).await;
}
