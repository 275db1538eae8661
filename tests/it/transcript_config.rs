//! Transcripts of sweepgate's own configuration: a PR that edits
//! `.github/sweepgate.toml` gets a validation comment with file:line
//! errors (edited in place when fixed) and a `sweepgate / config` check
//! run; a push to the default branch reloads the configuration, and an
//! invalid one there leaves the last valid configuration in force.
use crate::common;

use common::transcript::{OWNER, REPO, World};
use sweepgate_sandbox::Change;

const CONFIG: &str = ".github/sweepgate.toml";

fn config_runs(w: &World, sha: &str) -> Vec<(Option<String>, Vec<serde_json::Value>)> {
    w.sandbox
        .check_runs(OWNER, REPO, sha)
        .into_iter()
        .filter(|r| r.name == "sweepgate / config")
        .map(|r| (r.conclusion, r.annotations))
        .collect()
}

#[tokio::test]
async fn a_pr_changing_the_configuration_gets_file_line_errors_then_a_pass() {
    let mut w = World::new().await;
    let pr = w.open_pr(
        "retune-sweeps",
        &[Change::write(
            CONFIG,
            "[sweep]\nworkflow = \"run-sweep.yml\"\nmode = \"yolo\"\n",
        )],
        "maint",
    );
    w.deliver().await;
    let body = w.next_comment(pr.number);
    let head = pr.head_sha().unwrap();
    insta::assert_snapshot!("invalid", body.replace(&head, "<HEAD>"));
    assert!(
        body.contains("\n- .github/sweepgate.toml:3:8: unknown variant"),
        "{body}"
    );
    let runs = config_runs(&w, &head);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].0.as_deref(), Some("failure"));
    assert_eq!(runs[0].1[0]["path"], CONFIG);
    assert_eq!(runs[0].1[0]["start_line"], 3);

    // Fixed: the same comment, edited.
    pr.push(
        &[Change::write(CONFIG, "[sweep]\nmode = \"track\"\n")],
        "fix the mode",
    )
    .unwrap();
    w.deliver().await;
    let head = pr.head_sha().unwrap();
    assert_eq!(
        w.next_comment(pr.number),
        format!(
            "<!-- sweepgate:config-check -->\n### sweepgate configuration in {head}\n✅ `.github/sweepgate.toml` is valid; it takes effect when this PR is merged into `main`."
        )
    );
    assert_eq!(config_runs(&w, &head)[0].0.as_deref(), Some("success"));
    assert_eq!(w.sandbox.bot_comments(OWNER, REPO, pr.number).len(), 1);
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn a_push_to_the_default_branch_reloads_and_an_invalid_one_keeps_the_last_valid() {
    let mut w = World::new().await;
    // A valid configuration lands on main: reloaded.
    let good = w
        .sandbox
        .commit(
            OWNER,
            REPO,
            "main",
            &[Change::write(CONFIG, "[sweep]\nworkflow = \"sweep.yml\"\n")],
            "configure sweepgate",
        )
        .unwrap();
    w.deliver().await;
    assert_eq!(
        config_runs(&w, &good),
        vec![(Some("success".into()), vec![])]
    );
    // A broken one: the check run says so, at the line.
    let bad = w
        .sandbox
        .commit(
            OWNER,
            REPO,
            "main",
            &[Change::write(CONFIG, "[sweep]\nworkflow = 3\n")],
            "oops",
        )
        .unwrap();
    w.deliver().await;
    let runs = config_runs(&w, &bad);
    assert_eq!(runs[0].0.as_deref(), Some("failure"));
    assert_eq!(runs[0].1[0]["start_line"], 2);
    // The last valid configuration stays in force.
    let loaded = sweepgate::handlers::repo_config::load(
        &common::transcript::github_for(&w.sandbox)
            .installation(sweepgate_core::ids::InstallationId(w.installation))
            .unwrap(),
        &w.db.store,
        &sweepgate_core::ids::RepoName::new(OWNER, REPO),
        "main",
    )
    .await
    .unwrap();
    assert_eq!(loaded.config.sweep.workflow, "sweep.yml");
    assert!(loaded.error.is_some());
    // A push to another branch does nothing.
    let other = w
        .sandbox
        .create_branch(OWNER, REPO, "scratch", "main")
        .unwrap();
    let side = w
        .sandbox
        .commit(OWNER, REPO, "scratch", &[Change::write(CONFIG, "x")], "wip")
        .unwrap();
    w.deliver().await;
    assert!(config_runs(&w, &side).is_empty(), "{other}");
    w.finish(&[]).await;
}

/// Issue 18, item 6: a key written to ping a team and hide the rest of the
/// comment is quoted harmlessly (`docs/contracts.md` §4).
#[tokio::test]
async fn a_hostile_key_mentions_nobody_and_hides_nothing() {
    let mut w = World::new().await;
    let pr = w.open_pr(
        "hostile",
        &[Change::write(
            CONFIG,
            "[sweep]\n\"x @InferenceX/core <!-- |`\" = 1\n",
        )],
        "maint",
    );
    w.deliver().await;
    let body = w.next_comment(pr.number);
    let head = pr.head_sha().unwrap();
    insta::assert_snapshot!("hostile_key", body.replace(&head, "<HEAD>"));
    assert!(!body.contains("@InferenceX/core"), "{body}");
    assert_eq!(body.matches("<!--").count(), 1, "only the marker: {body}");
    w.finish(&[pr.number]).await;
}
