//! Transcript of the recipe lint across two pushes: annotations on the check
//! run, one summary comment edited in place, and the check turning green
//! when the error is fixed.
use crate::common;

use common::transcript::{OWNER, REPO, World};
use sweepgate_sandbox::Change;

/// A single-node script in the layout the launchers expect; `client` is
/// the benchmark client's length flags (§1.9: `--input-len`/`--output-len`;
/// anything else makes the run fail, L26).
pub(crate) fn script(client: &str) -> String {
    format!(
        "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n\ncheck_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN RANDOM_RANGE_RATIO RESULT_FILENAME\n\npip install fastokens==0.1.3\n\nvllm serve \"$MODEL\" --host 0.0.0.0 --port 8888 --tensor-parallel-size \"$TP\" --max-model-len \"$MAX_MODEL_LEN\" &\n\nwait_for_server_ready\nrun_benchmark_serving --model \"$MODEL\" --port 8888 --backend vllm {client} --random-range-ratio \"$RANDOM_RANGE_RATIO\" --max-concurrency \"$CONC\" --num-prompts \"$((CONC * 10))\" --result-filename \"$RESULT_FILENAME\" --result-dir /workspace/\n"
    )
}

pub(crate) const PATH: &str = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh";

#[tokio::test]
async fn lint_annotates_and_turns_green_when_fixed() {
    let mut w = World::new().await;
    let pr = w.open_pr(
        "lint",
        &[Change::write(PATH, script("--isl \"$ISL\" --osl \"$OSL\""))],
        "vendor-dev",
    );
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .starts_with("<!-- recipe-reminder -->")
    );
    let first = w.next_comment(pr.number);
    insta::assert_snapshot!("lint_first_push", first);
    let head1 = pr.head_sha().unwrap();
    let runs = w.sandbox.check_runs(OWNER, REPO, &head1);
    let lint = runs
        .iter()
        .find(|c| c.name == "sweepgate / recipe-lint")
        .unwrap();
    assert_eq!(lint.conclusion.as_deref(), Some("failure"));
    assert!(
        lint.annotations.iter().any(|a| a["title"] == "L26"
            && a["path"] == PATH
            && a["annotation_level"] == "failure"),
        "{:#?}",
        lint.annotations
    );

    pr.push(
        &[Change::write(
            PATH,
            script("--input-len \"$ISL\" --output-len \"$OSL\""),
        )],
        "use the client's flag names",
    )
    .unwrap();
    w.deliver().await;
    let second = w.next_comment(pr.number);
    insta::assert_snapshot!("lint_second_push", second);
    let head2 = pr.head_sha().unwrap();
    let lint2 = w
        .sandbox
        .check_runs(OWNER, REPO, &head2)
        .into_iter()
        .find(|c| c.name == "sweepgate / recipe-lint")
        .unwrap();
    assert_eq!(lint2.conclusion.as_deref(), Some("success"));
    assert_eq!(
        pr.bot_comments().len(),
        2,
        "guide + one summary edited in place"
    );
    w.finish(&[pr.number]).await;
}

/// The recipe-lint check run on a head.
pub(crate) fn lint_run(w: &World, sha: &str) -> sweepgate_sandbox::CheckRunView {
    w.sandbox
        .check_runs(OWNER, REPO, sha)
        .into_iter()
        .find(|c| c.name == "sweepgate / recipe-lint")
        .unwrap()
}

/// A PR is judged on what it changes (issue 17 item 5): an error already
/// on main in a script the PR edits does not fail the check run, is
/// annotated only once the PR touches its line, and is listed collapsed
/// in the comment.
#[tokio::test]
async fn an_error_already_on_main_does_not_fail_the_pr() {
    let mut w = World::new().await;
    let bad = script("--isl \"$ISL\" --osl \"$OSL\"");
    w.sandbox
        .commit(
            OWNER,
            REPO,
            "main",
            &[Change::write(PATH, bad.clone())],
            "main has L26",
        )
        .unwrap();
    w.sandbox.take_deliveries();
    // The PR edits the server line only.
    let edited = bad.replace("--port 8888 --tensor", "--port 8889 --tensor");
    let pr = w.open_pr("port", &[Change::write(PATH, edited.clone())], "vendor-dev");
    w.deliver().await;
    let _guide = w.next_comment(pr.number);
    let body = w.next_comment(pr.number);
    assert!(body.contains("✅ No new recipe lint findings on"), "{body}");
    assert!(
        body.contains("Already on the base branch, in files this PR touches: 2 errors"),
        "{body}"
    );
    assert!(body.contains("**L26**") && !body.contains("**🔴"), "{body}");
    let run = lint_run(&w, &pr.head_sha().unwrap());
    assert_eq!(run.conclusion.as_deref(), Some("success"));
    assert!(
        run.annotations
            .iter()
            .all(|a| a["title"] != "L26" && a["title"] != "L26 (pre-existing)"),
        "{:#?}",
        run.annotations
    );

    // Now the PR edits the line the error is on: annotated as pre-existing,
    // still not failing.
    let touched = edited.replace("--result-dir /workspace/", "--result-dir /workspace/out/");
    pr.push(&[Change::write(PATH, touched)], "move the results")
        .unwrap();
    w.deliver().await;
    let _edited_summary = w.take_comments(pr.number);
    let run = lint_run(&w, &pr.head_sha().unwrap());
    assert_eq!(run.conclusion.as_deref(), Some("success"));
    assert!(
        run.annotations
            .iter()
            .any(|a| a["title"] == "L26 (pre-existing)" && a["path"] == PATH),
        "{:#?}",
        run.annotations
    );
    w.finish(&[pr.number]).await;
}

/// A PR that replaces the changelog with a file of comments only: every
/// check run the bot publishes is accepted (the sweep gate's summary, one
/// reason per removed line, once went over GitHub's limit: 422), cut with
/// a note, and each annotation points at a real line.
#[tokio::test]
async fn a_comment_only_changelog_publishes_valid_check_runs() {
    let mut w = World::new().await;
    let pr = w.open_pr(
        "empty-changelog",
        &[Change::write(
            "perf-changelog.yaml",
            "# entries moved elsewhere\n# nothing here\n",
        )],
        "vendor-dev",
    );
    w.deliver().await;
    let head = pr.head_sha().unwrap();
    let runs = w.sandbox.check_runs(OWNER, REPO, &head);
    let gate = runs
        .iter()
        .find(|c| c.name == "sweepgate / sweep-gate")
        .unwrap();
    assert_eq!(gate.conclusion.as_deref(), Some("failure"));
    let summary = gate.summary.as_deref().unwrap_or("");
    assert!(summary.chars().count() <= 65_535);
    assert!(summary.contains("deletions are not allowed"), "{summary}");
    assert!(summary.contains("were left out to stay within GitHub's limit"));
    for r in &runs {
        for a in &r.annotations {
            let line = a["start_line"].as_u64().unwrap_or(0);
            assert!(line >= 1, "{}: {a}", r.name);
            assert!(
                !a["path"].as_str().unwrap_or("").is_empty(),
                "{}: {a}",
                r.name
            );
            assert!(
                !a["message"].as_str().unwrap_or("").is_empty(),
                "{}: {a}",
                r.name
            );
        }
    }
}
