//! `dispatch` mode on the sandbox (`docs/contracts.md` §5): a labelled PR gets
//! exactly one `workflow_dispatch` whose inputs and served matrix match the
//! repository model's job list; a new push cancels the superseded run; a
//! lost `workflow_run` is recovered by the timer; a workflow that still
//! has a `pull_request` trigger keeps dispatch mode off.
use crate::common;

use common::transcript::{DISPATCH_ONLY, OWNER, REPO, World, dispatch_world, github_for};
use serde_json::Value;
use sweepgate::handlers::{Services, dispatch};
use sweepgate_core::matrix::{self, jobs};
use sweepgate_sandbox::Change;

const PUBLIC: &str = "https://gate.example.com";
const BOTH_TRIGGERS: &str = "name: Run sweep\non:\n  pull_request:\n  workflow_dispatch:\n";

fn changelog_append(description: &str) -> Change {
    let path = common::data_dir().join("inferencex/perf-changelog.yaml");
    let mut text = std::fs::read_to_string(path).unwrap();
    text.push_str(&format!(
        "\n- config-keys:\n    - dsv4-fp8-h200-vllm\n  description:\n    - \"{description}\"\n  pr-link: https://github.com/InferenceX/InferenceX/pull/1\n"
    ));
    Change::write("perf-changelog.yaml", text)
}

async fn world(workflow: &str) -> World {
    dispatch_world(workflow, PUBLIC).await
}

/// The repository model's job list for the appended entry.
fn expected_jobs() -> jobs::JobList {
    let shared = matrix::SharedOptions {
        config_files: vec![
            "configs/amd-master.yaml".into(),
            "configs/nvidia-master.yaml".into(),
        ],
        ..matrix::SharedOptions::default()
    };
    let inputs = matrix::load(&shared, |f| {
        std::fs::read(common::data_dir().join("inferencex").join(f)).ok()
    })
    .unwrap();
    let entry = jobs::EntryFlags {
        config_keys: vec!["dsv4-fp8-h200-vllm".into()],
        ..jobs::EntryFlags::default()
    };
    jobs::jobs_for_entries(&inputs, &[entry], jobs::LabelFlags::default()).unwrap()
}

/// The PR's sweeps as stored, oldest first.
async fn stored_sweeps(w: &World, pr: u64) -> Vec<sweepgate::store::SweepRow> {
    w.db.store
        .pr_sweeps(&format!("{OWNER}/{REPO}"), pr as i64)
        .await
        .unwrap()
}

/// The bodies of the gate's check runs, newest last.
fn gate_summaries(w: &World) -> Vec<String> {
    w.sandbox
        .requests_matching("POST", &format!("/repos/{OWNER}/{REPO}/check-runs"))
        .into_iter()
        .filter_map(|r| r.body)
        .filter(|b| b["name"] == "sweepgate / sweep-gate")
        .map(|b| b["output"]["summary"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Opens the PR, labels it and lets the bot act; the PR.
async fn labelled_pr(w: &mut World) -> sweepgate_sandbox::Pr {
    let pr = w.open_pr("dsv4-h200", &[changelog_append("Retune TP8")], "vendor-dev");
    pr.add_label("full-sweep-fail-fast", "maint").unwrap();
    w.deliver().await;
    let comments = w.take_comments(pr.number);
    assert_eq!(comments.len(), 2, "{comments:#?}");
    assert!(comments[0].starts_with("<!-- recipe-reminder -->"));
    assert!(comments[1].starts_with("<!-- sweepgate:recipe-lint"));
    pr
}

#[tokio::test]
async fn a_labelled_pr_is_dispatched_once_with_the_matrix_of_its_entries() {
    let mut w = world(DISPATCH_ONLY).await;
    let pr = labelled_pr(&mut w).await;
    let head = pr.head_sha().unwrap();
    let base = w.sandbox.branch_sha(OWNER, REPO, "main").unwrap();

    let dispatches = w.sandbox.workflow_dispatches();
    assert_eq!(dispatches.len(), 1, "exactly one dispatch per sweep");
    let d = &dispatches[0];
    assert_eq!(
        d.git_ref, "main",
        "the workflow definition comes from the default branch"
    );
    let sweeps = stored_sweeps(&w, pr.number).await;
    assert_eq!(sweeps.len(), 1);
    let sweep = &sweeps[0];
    assert_eq!(sweep.state, sweepgate::store::SweepState::Dispatched);
    assert_eq!(sweep.run_id, Some(d.run_id as i64));
    let id = sweep.sweep_id.as_str();
    let url = d.inputs["matrix-url"].as_str().unwrap();
    let token = url
        .strip_prefix(&format!("{PUBLIC}/api/sweeps/{id}/matrix?token="))
        .unwrap_or_else(|| panic!("matrix URL {url}"));
    assert_eq!(token.len(), 48);
    assert_eq!(
        d.inputs,
        serde_json::json!({
            "sweep-id": id,
            "matrix-url": url,
            "pr-number": pr.number.to_string(),
            "head-sha": head,
            "base-sha": base,
            "primary-label": "full-sweep-fail-fast",
            "modifiers": "",
            "canary": "true",
            "fail-fast": "true",
        })
    );
    // The run title names the sweep (the fallback when GitHub returns no
    // run details).
    let summaries = gate_summaries(&w);
    let j = expected_jobs();
    assert!(
        summaries.contains(&format!(
            "`full-sweep-fail-fast`\n\nSweep `{id}` dispatched as run {} with {} jobs.",
            d.run_id,
            j.throughput_len() + j.eval_len()
        )),
        "{summaries:#?}"
    );
    // A later gate run on the same head finds the sweep.
    assert_eq!(
        summaries.last().unwrap(),
        &format!(
            "`full-sweep-fail-fast`\n\nSweep `{id}` was dispatched as run {}.",
            d.run_id
        )
    );

    // The matrix the workflow fetches is the repository model's job list,
    // grouped by family and chunked.
    let (status, body) = w
        .page(&format!("/api/sweeps/{id}/matrix?token={token}"))
        .await;
    assert_eq!(status, 200, "{body}");
    let served: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        served,
        sweepgate_core::sweep::dispatch::matrix_document(id, &expected_jobs(), 256)
    );
    let families: Vec<&str> = served["families"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["family"].as_str().unwrap())
        .collect();
    assert!(families.contains(&"single-node 8k1k"), "{families:?}");
    assert!(families.contains(&"eval"), "{families:?}");

    // Wrong, missing and expired tokens are refused.
    let (status, body) = w
        .page(&format!("/api/sweeps/{id}/matrix?token=guess"))
        .await;
    assert_eq!(
        (status.as_u16(), body.as_str()),
        (403, "wrong token for this sweep\n")
    );
    let (status, _) = w.page(&format!("/api/sweeps/{id}/matrix")).await;
    assert_eq!(status, 401);
    let (status, _) = w
        .page(&format!("/api/sweeps/sg-unknown/matrix?token={token}"))
        .await;
    assert_eq!(status, 403, "an unknown sweep looks like a wrong token");

    // The same decision again (a redelivered label event) dispatches nothing.
    pr.remove_label("full-sweep-fail-fast", "maint").unwrap();
    w.sandbox.take_deliveries();
    pr.add_label("full-sweep-fail-fast", "maint").unwrap();
    w.deliver().await;
    assert_eq!(w.sandbox.workflow_dispatches().len(), 1);
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn a_new_push_cancels_the_superseded_run_and_dispatches_the_new_head() {
    let mut w = world(DISPATCH_ONLY).await;
    let pr = labelled_pr(&mut w).await;
    let first = w.sandbox.workflow_dispatches()[0].clone();
    w.sandbox.start_run(first.run_id).unwrap();

    pr.push(&[changelog_append("Retune TP8 again")], "retune")
        .unwrap();
    w.deliver().await;
    let lint = w.take_comments(pr.number);
    assert!(
        lint.iter()
            .all(|c| c.starts_with("<!-- sweepgate:recipe-lint")),
        "{lint:#?}"
    );

    let dispatches = w.sandbox.workflow_dispatches();
    assert_eq!(dispatches.len(), 2);
    assert_eq!(dispatches[1].inputs["head-sha"], pr.head_sha().unwrap());
    assert_eq!(
        w.sandbox.run_state(first.run_id),
        Some(("completed".into(), Some("cancelled".into())))
    );
    let sweeps = stored_sweeps(&w, pr.number).await;
    assert_eq!(sweeps.len(), 2);
    assert_eq!(sweeps[0].state, sweepgate::store::SweepState::Cancelled);
    assert_eq!(
        sweeps[0].reason.as_deref(),
        Some(
            format!(
                "superseded by a new push or label change ({})",
                sweeps[1].sweep_id
            )
            .as_str()
        )
    );
    assert_eq!(sweeps[1].state, sweepgate::store::SweepState::Dispatched);

    // Removing the label refuses the appended entry and cancels the live
    // sweep too.
    pr.remove_label("full-sweep-fail-fast", "maint").unwrap();
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .starts_with("<!-- sweepgate:sweep-gate -->")
    );
    let sweeps = stored_sweeps(&w, pr.number).await;
    assert_eq!(sweeps[1].state, sweepgate::store::SweepState::Cancelled);
    assert_eq!(
        sweeps[1].reason.as_deref(),
        Some(
            "the sweep gate refused: no primary sweep label: add exactly one of `full-sweep-fail-fast`, `full-sweep-enabled`, `non-canary-full-sweep-enabled`"
        )
    );
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn a_lost_workflow_run_is_recovered_by_the_timer() {
    let mut w = world(DISPATCH_ONLY).await;
    let pr = labelled_pr(&mut w).await;
    let run = w.sandbox.workflow_dispatches()[0].run_id;
    w.sandbox
        .add_job(
            run,
            "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c4",
            Some("success"),
        )
        .unwrap();
    w.sandbox.complete_run(run, "success").unwrap();
    // The webhook never arrives.
    let lost = w.sandbox.take_deliveries();
    assert!(lost.iter().any(|d| d.event == "workflow_run"));

    let services = Services::new(github_for(&w.sandbox));
    assert_eq!(
        dispatch::refresh_open_sweeps(&services, &w.db.store)
            .await
            .unwrap(),
        1
    );
    w.drain().await;
    let links = w.next_comment(pr.number);
    assert!(
        links.starts_with(&format!("<!-- sweepgate:results run={run} -->")),
        "{links}"
    );
    let sweeps = stored_sweeps(&w, pr.number).await;
    assert_eq!(sweeps[0].state, sweepgate::store::SweepState::Completed);
    assert_eq!(sweeps[0].conclusion.as_deref(), Some("success"));
    // Nothing is open any more: the next tick rebuilds nothing.
    assert_eq!(
        dispatch::refresh_open_sweeps(&services, &w.db.store)
            .await
            .unwrap(),
        0
    );
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn dispatch_mode_stays_off_while_the_workflow_has_a_pull_request_trigger() {
    let mut w = world(BOTH_TRIGGERS).await;
    let pr = labelled_pr(&mut w).await;
    assert!(w.sandbox.workflow_dispatches().is_empty());
    assert_eq!(
        gate_summaries(&w).last().unwrap(),
        "`full-sweep-fail-fast`\n\nDispatch mode is off: the sweep workflow still has a `pull_request` trigger; remove it before using dispatch mode, or every sweep would run twice."
    );
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn use_accepts_a_dispatched_run_by_the_commit_its_sweep_tested() {
    let mut w = world(DISPATCH_ONLY).await;
    common::transcript::add_results_repo(&w.sandbox);
    let pr = labelled_pr(&mut w).await;
    let run = w.sandbox.workflow_dispatches()[0].run_id;
    w.sandbox
        .add_job(
            run,
            "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c4",
            Some("success"),
        )
        .unwrap();
    w.sandbox
        .add_artifact(run, "results_bmk", [("agg_bmk.json", "[]")])
        .unwrap();
    w.sandbox.complete_run(run, "success").unwrap();
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .starts_with(&format!("<!-- sweepgate:results run={run} -->"))
    );

    w.sandbox
        .set_permission(OWNER, REPO, "nvpohanh", "write", "write")
        .unwrap();
    let cmd = pr
        .post_comment("nvpohanh", "COLLABORATOR", &format!("/use {run}"))
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!("<!-- sweepgate:reply comment={cmd} -->\n@nvpohanh staging run {run}…\n")
    );
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn workflow_job_and_check_run_events_follow_the_sweeps_jobs() {
    let mut w = world(DISPATCH_ONLY).await;
    let pr = labelled_pr(&mut w).await;
    let run = w.sandbox.workflow_dispatches()[0].run_id;
    let canary = w
        .sandbox
        .add_job(run, "canary / dsv4 fp8 h200 vllm TP8 c4", None)
        .unwrap();
    let point = w
        .sandbox
        .add_job(
            run,
            "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c4",
            None,
        )
        .unwrap();
    w.deliver().await;
    let sweep = stored_sweeps(&w, pr.number).await.remove(0);
    assert_eq!(
        sweep.state,
        sweepgate::store::SweepState::Running,
        "a queued job means the run is under way"
    );
    let states =
        |jobs: Vec<sweepgate::store::SweepJob>| -> Vec<(String, i64, String, Option<String>)> {
            jobs.into_iter()
                .map(|j| (j.name, j.attempt, j.status, j.conclusion))
                .collect()
        };
    let jobs = w.db.store.sweep_jobs(&sweep.sweep_id).await.unwrap();
    assert_eq!(
        states(jobs),
        vec![
            (
                "canary / dsv4 fp8 h200 vllm TP8 c4".into(),
                1,
                "queued".into(),
                None
            ),
            (
                "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c4".into(),
                1,
                "queued".into(),
                None
            ),
        ]
    );

    w.sandbox.set_job(canary, "in_progress", None).unwrap();
    w.sandbox
        .set_job(canary, "completed", Some("success"))
        .unwrap();
    w.sandbox.set_job(point, "in_progress", None).unwrap();
    w.sandbox
        .set_job(point, "completed", Some("failure"))
        .unwrap();
    w.deliver().await;
    let jobs = w.db.store.sweep_jobs(&sweep.sweep_id).await.unwrap();
    assert_eq!(
        states(jobs.clone()),
        vec![
            (
                "canary / dsv4 fp8 h200 vllm TP8 c4".into(),
                1,
                "completed".into(),
                Some("success".into())
            ),
            (
                "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c4".into(),
                1,
                "completed".into(),
                Some("failure".into())
            ),
        ]
    );

    // A late, older event (delivered out of order) changes nothing.
    let mut stale = jobs[1].clone();
    stale.status = "in_progress".into();
    stale.conclusion = None;
    assert!(!w.db.store.record_sweep_job(&stale).await.unwrap());

    w.sandbox.complete_run(run, "failure").unwrap();
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .starts_with(&format!("<!-- sweepgate:results run={run} -->"))
    );
    let sweep = stored_sweeps(&w, pr.number).await.remove(0);
    assert_eq!(
        (sweep.state.as_str(), sweep.conclusion.as_deref()),
        ("completed", Some("failure"))
    );

    // Re-running the failed job is a new attempt: its row starts again.
    w.sandbox.rerun(run, false, "maint").unwrap();
    w.deliver().await;
    let jobs = w.db.store.sweep_jobs(&sweep.sweep_id).await.unwrap();
    let rerun: Vec<_> = states(jobs).into_iter().filter(|j| j.1 == 2).collect();
    assert_eq!(
        rerun,
        vec![(
            "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c4".into(),
            2,
            "queued".into(),
            None
        )]
    );

    // The dashboard shows the sweep with its job counts.
    let (status, page) = w
        .page(&format!("/repos/{OWNER}/{REPO}/pulls/{}", pr.number))
        .await;
    assert_eq!(status, 200);
    assert!(
        page.contains(&format!(
            "<tr class=\"sweep\"><td class=\"mono\">{}</td>",
            sweep.sweep_id
        )),
        "{page}"
    );
    assert!(
        page.contains("<td>1 passed, 0 failed, 1 running or queued</td>"),
        "{page}"
    );
    w.finish(&[pr.number]).await;
}

/// The fixture repository's checklist template, every box ticked.
fn signoff(signer: &str) -> String {
    let doc =
        std::fs::read_to_string(common::data_dir().join("inferencex/docs/PR_REVIEW_CHECKLIST.md"))
            .unwrap();
    let (_, rest) = doc.split_once("## Template\n```\n").unwrap();
    let (template, _) = rest.split_once("```").unwrap();
    template
        .replace("- [ ]", "- [x]")
        .replace("FILL_IN_GITHUB_USERNAME", signer)
}

/// `(outcome, reason)` of the verdict row of check `n`.
fn verdict_row(verdict: &str, n: u8) -> (String, String) {
    let line = verdict
        .lines()
        .find(|l| l.contains(&format!("Check {n} (")))
        .unwrap_or_else(|| panic!("no row {n} in {verdict}"));
    let (_, rest) = line.split_once("): ").unwrap();
    let (outcome, reason) = rest.split_once(" — ").unwrap_or((rest, ""));
    (outcome.to_owned(), reason.to_owned())
}

#[tokio::test]
async fn the_verifier_counts_a_dispatched_run_for_the_commit_its_sweep_tested() {
    let mut w = world(DISPATCH_ONLY).await;
    common::transcript::add_results_repo(&w.sandbox);
    let pr = labelled_pr(&mut w).await;
    let head = pr.head_sha().unwrap();
    let main = w.sandbox.branch_sha(OWNER, REPO, "main").unwrap();
    let run = w.sandbox.workflow_dispatches()[0].run_id;
    for job in [
        "single-node 8k1k / p1 | dsv4 fp8 h200 vllm TP8 c4",
        "eval / gsm8k | dsv4 fp8 h200 vllm TP8 c32",
    ] {
        w.sandbox.add_job(run, job, Some("success")).unwrap();
    }
    w.sandbox
        .add_artifact(run, "results_bmk", [("agg_bmk.json", "[]")])
        .unwrap();
    w.sandbox.complete_run(run, "success").unwrap();
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .starts_with(&format!("<!-- sweepgate:results run={run} -->"))
    );
    // GitHub files the jobs' check runs under the commit the dispatched run
    // checked out (the default branch), none under the PR's head.
    let named = |sha: &str| -> Vec<String> {
        w.sandbox
            .check_runs(OWNER, REPO, sha)
            .into_iter()
            .map(|c| c.name)
            .filter(|n| n.contains(" / "))
            .filter(|n| !n.starts_with("sweepgate"))
            .collect()
    };
    assert_eq!(named(&head), Vec::<String>::new());
    assert_eq!(named(&main).len(), 2);

    w.sandbox
        .set_permission(OWNER, REPO, "nvpohanh", "write", "write")
        .unwrap();
    let cmd = pr
        .post_comment("nvpohanh", "COLLABORATOR", &format!("/use {run}"))
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!("<!-- sweepgate:reply comment={cmd} -->\n@nvpohanh staging run {run}…\n")
    );

    w.sandbox
        .set_permission(OWNER, REPO, "ankur-singh", "write", "write")
        .unwrap();
    // A sign-off covers a head that stood a minute before it.
    w.sandbox.advance_clock(chrono::Duration::minutes(2));
    pr.post_comment("ankur-singh", "COLLABORATOR", &signoff("ankur-singh"))
        .unwrap();
    w.deliver().await;
    let verdict = w.next_comment(pr.number);
    assert!(
        verdict.starts_with(&format!("<!-- codeowner-signoff-verify sha={head} -->")),
        "{verdict}"
    );
    // Checks 1 and 4 see the dispatched run as a sweep of the PR's head.
    let short = &head[..8];
    let (c1, why1) = verdict_row(&verdict, 1);
    assert_eq!(c1, "PASS", "{verdict}");
    assert!(why1.contains(short), "{why1}");
    let (c4, why4) = verdict_row(&verdict, 4);
    assert_eq!(c4, "PASS", "{verdict}");
    assert!(why4.contains(&run.to_string()), "{why4}");
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn a_family_over_256_jobs_is_served_in_chunks_of_at_most_256() {
    let mut w = world(DISPATCH_ONLY).await;
    let shared = matrix::SharedOptions {
        config_files: vec![
            "configs/amd-master.yaml".into(),
            "configs/nvidia-master.yaml".into(),
        ],
        ..matrix::SharedOptions::default()
    };
    let inputs = matrix::load(&shared, |f| {
        std::fs::read(common::data_dir().join("inferencex").join(f)).ok()
    })
    .unwrap();
    // Every single-node H200 and B200 recipe in one entry.
    let keys: Vec<String> = inputs
        .master
        .keys()
        .filter(|k| k.contains("-h200-") || k.contains("-b200-"))
        .filter(|k| inputs.master.get(k).is_some_and(|e| !e.disagg()))
        .map(str::to_owned)
        .collect();
    let entry = jobs::EntryFlags {
        config_keys: keys.clone(),
        ..jobs::EntryFlags::default()
    };
    let expected = jobs::jobs_for_entries(&inputs, &[entry], jobs::LabelFlags::default()).unwrap();
    let big = sweepgate_core::sweep::dispatch::families(&expected)
        .into_iter()
        .map(|(f, rows)| (f, rows.len()))
        .max_by_key(|(_, n)| *n)
        .unwrap();
    assert!(big.1 > 256, "{big:?}");

    let path = common::data_dir().join("inferencex/perf-changelog.yaml");
    let mut text = std::fs::read_to_string(path).unwrap();
    text.push_str("\n- config-keys:\n");
    for k in &keys {
        text.push_str(&format!("    - {k}\n"));
    }
    text.push_str("  description:\n    - \"Re-sweep every H200 and B200 recipe\"\n  pr-link: https://github.com/InferenceX/InferenceX/pull/1\n");
    let pr = w.open_pr(
        "resweep",
        &[Change::write("perf-changelog.yaml", text)],
        "vendor-dev",
    );
    pr.add_label("full-sweep-fail-fast", "maint").unwrap();
    w.deliver().await;
    w.take_comments(pr.number);
    let dispatches = w.sandbox.workflow_dispatches();
    assert_eq!(dispatches.len(), 1);
    let url = dispatches[0].inputs["matrix-url"].as_str().unwrap();
    let path = url.strip_prefix(PUBLIC).unwrap();
    let (status, body) = w.page(path).await;
    assert_eq!(status, 200, "{body}");
    let served: Value = serde_json::from_str(&body).unwrap();
    let id = stored_sweeps(&w, pr.number).await[0].sweep_id.clone();
    assert_eq!(
        served,
        sweepgate_core::sweep::dispatch::matrix_document(&id, &expected, 256)
    );
    let family = served["families"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["family"] == big.0.as_str())
        .unwrap();
    assert_eq!(family["jobs"], big.1);
    let chunks = family["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), big.1.div_ceil(256));
    assert!(chunks.iter().all(|c| c.as_array().unwrap().len() <= 256));
    assert_eq!(
        chunks
            .iter()
            .map(|c| c.as_array().unwrap().len())
            .sum::<usize>(),
        big.1
    );
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn a_sweep_stored_before_a_crash_but_never_dispatched_is_dispatched_once() {
    let mut w = world(DISPATCH_ONLY).await;
    let pr = w.open_pr("dsv4-h200", &[changelog_append("Retune TP8")], "vendor-dev");
    let head = pr.head_sha().unwrap();
    let repo = format!("{OWNER}/{REPO}");
    let id = sweepgate_core::sweep::dispatch::sweep_id(
        &repo,
        pr.number,
        &head,
        "full-sweep-fail-fast",
        &[],
    );
    // What a first attempt stored before its process was killed: the row,
    // no run, and a token nobody knows any more.
    let lost_digest = "0".repeat(64);
    let now = sweepgate::store::now_ms();
    assert!(
        w.db.store
            .create_sweep(&sweepgate::store::SweepRow {
                sweep_id: id.clone(),
                repository: repo.clone(),
                installation_id: Some(w.installation as i64),
                pr_number: pr.number as i64,
                head_sha: head.clone(),
                base_sha: w.sandbox.branch_sha(OWNER, REPO, "main").unwrap(),
                primary_label: "full-sweep-fail-fast".into(),
                modifiers: String::new(),
                matrix: "{}".into(),
                token_sha256: lost_digest.clone(),
                expires_at: now + 3_600_000,
                state: sweepgate::store::SweepState::Dispatched,
                run_id: None,
                conclusion: None,
                reason: None,
                created_at: now,
                updated_at: now,
                dispatch_sent_at: None,
            })
            .await
            .unwrap()
    );
    pr.add_label("full-sweep-fail-fast", "maint").unwrap();
    w.deliver().await;
    w.take_comments(pr.number);

    // The retry dispatched it, once, and the run is recorded.
    let dispatches = w.sandbox.workflow_dispatches();
    assert_eq!(dispatches.len(), 1);
    assert_eq!(dispatches[0].inputs["sweep-id"], id.as_str());
    let sweeps = stored_sweeps(&w, pr.number).await;
    assert_eq!(sweeps.len(), 1);
    assert_eq!(sweeps[0].run_id, Some(dispatches[0].run_id as i64));
    assert_ne!(sweeps[0].token_sha256, lost_digest);
    // The workflow can fetch its matrix with the new token.
    let url = dispatches[0].inputs["matrix-url"].as_str().unwrap();
    let path = url.strip_prefix(PUBLIC).unwrap();
    assert_eq!(w.page(path).await.0, 200);
}
