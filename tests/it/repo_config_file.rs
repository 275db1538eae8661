//! Transcripts of the one repository configuration file (issue 22, item
//! 1): `.github/sweepgate.toml` with `[paths]`, `[labels]`, `[sweep]`,
//! `[verifier]`, `[lint]` and `[legacy]`, one test per section. A valid
//! section takes effect; a broken one keeps the last valid configuration
//! and its file:line is on the check run of the pushed commit and of every
//! PR; a section's old file (or old key) still works with a deprecation
//! note; when both exist the section wins. No job fails for any of it.
use crate::common;

use common::transcript::{OWNER, REPO, World};
use sweepgate::handlers::repo_config::{Loaded, load};
use sweepgate_core::config::RepoConfig;
use sweepgate_sandbox::Change;

const CONFIG: &str = ".github/sweepgate.toml";
const VERIFIER: &str = ".github/sweepgate-verifier.toml";
const LINT: &str = ".github/sweepgate-lint.toml";

/// An annotation as (path, line, level).
type Note = (String, u64, String);

/// The `sweepgate / config` check run on a commit: conclusion, its
/// annotations and its summary.
type Run = (String, Vec<Note>, String);

/// Whether a configuration is in force.
type Took = fn(&RepoConfig) -> bool;

fn config_run(w: &World, sha: &str) -> Option<Run> {
    let runs: Vec<_> = w
        .sandbox
        .check_runs(OWNER, REPO, sha)
        .into_iter()
        .filter(|r| r.name == "sweepgate / config")
        .collect();
    assert!(
        runs.len() <= 1,
        "one config check run per commit: {runs:#?}"
    );
    runs.into_iter().next().map(|r| {
        let notes = r
            .annotations
            .iter()
            .map(|a| {
                (
                    a["path"].as_str().unwrap_or("").to_owned(),
                    a["start_line"].as_u64().unwrap_or(0),
                    a["annotation_level"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        (
            r.conclusion.unwrap_or_default(),
            notes,
            r.summary.unwrap_or_default(),
        )
    })
}

/// What the handlers load from the default branch now.
async fn loaded(w: &World) -> Loaded {
    let api = common::transcript::github_for(&w.sandbox)
        .installation(sweepgate_core::ids::InstallationId(w.installation))
        .unwrap();
    load(
        &api,
        &w.db.store,
        &sweepgate_core::ids::RepoName::new(OWNER, REPO),
        "main",
    )
    .await
    .unwrap()
}

/// Commits `changes` to main and handles the push.
async fn push(w: &mut World, changes: &[Change], message: &str) -> String {
    let sha = w
        .sandbox
        .commit(OWNER, REPO, "main", changes, message)
        .unwrap();
    w.deliver().await;
    sha
}

/// Opens a PR that touches no configuration and returns its head's
/// config check run.
async fn pr_run(w: &mut World, branch: &str) -> (u64, Option<Run>) {
    let pr = w.open_pr(
        branch,
        &[Change::write(format!("docs/{branch}.md"), "notes\n")],
        "vendor-dev",
    );
    w.deliver().await;
    let head = pr.head_sha().unwrap();
    (pr.number, config_run(w, &head))
}

/// How a section's old form is written.
enum Old {
    /// A file of its own (the file, its text).
    File(&'static str, &'static str),
    /// A key of the main file (the whole main file).
    Key(&'static str),
}

/// One section's transcript.
struct Case {
    /// Branch-name-safe name of the section.
    name: &'static str,
    /// A main file setting the section, and what it sets.
    valid: &'static str,
    took: Took,
    /// A main file with the section broken, and the line of the error.
    broken: &'static str,
    line: u64,
    /// The old form, what it sets, and the main file beside it for "both"
    /// (which sets what `took` checks).
    old: Option<(Old, Took, &'static str)>,
}

async fn transcript(case: Case) {
    let mut w = World::new().await;
    let mut prs = Vec::new();

    // A valid section takes effect.
    let good = push(&mut w, &[Change::write(CONFIG, case.valid)], "configure").await;
    let (conclusion, notes, _) = config_run(&w, &good).unwrap();
    assert_eq!((conclusion.as_str(), notes.len()), ("success", 0));
    let l = loaded(&w).await;
    assert!((case.took)(&l.config), "{}: not in force", case.name);
    assert!(l.error.is_none() && l.notes.is_empty());

    // A broken one: failure at the line on the commit; the last valid
    // configuration stays in force; every PR says so at the same line.
    let bad = push(&mut w, &[Change::write(CONFIG, case.broken)], "oops").await;
    let (conclusion, notes, summary) = config_run(&w, &bad).unwrap();
    assert_eq!(conclusion, "failure", "{summary}");
    assert_eq!(
        notes,
        vec![(CONFIG.to_owned(), case.line, "failure".to_owned())],
        "{summary}"
    );
    assert!(
        summary.contains("The last valid configuration stays in force."),
        "{summary}"
    );
    let l = loaded(&w).await;
    assert!((case.took)(&l.config), "{}: last valid not kept", case.name);
    let e = l.error.unwrap();
    assert_eq!((e.file.as_str(), e.line as u64), (CONFIG, case.line));
    let (n, run) = pr_run(&mut w, &format!("{}-broken", case.name)).await;
    prs.push(n);
    let (conclusion, notes, summary) = run.unwrap();
    assert_eq!(conclusion, "neutral", "{summary}");
    assert_eq!(
        notes,
        vec![(CONFIG.to_owned(), case.line, "warning".to_owned())]
    );
    assert!(summary.starts_with("The configuration of `main` is invalid; the last valid one is in force.\n.github/sweepgate.toml:"), "{summary}");

    if let Some((old, took_old, both)) = case.old {
        // The old form alone still works, with a deprecation note on the
        // commit and on every PR.
        let (changes, noted) = match old {
            Old::File(path, text) => (
                vec![Change::delete(CONFIG), Change::write(path, text)],
                path,
            ),
            Old::Key(main) => (vec![Change::write(CONFIG, main)], CONFIG),
        };
        let sha = push(&mut w, &changes, "the old way").await;
        let (conclusion, notes, summary) = config_run(&w, &sha).unwrap();
        assert_eq!(conclusion, "success", "{summary}");
        assert_eq!(notes.len(), 1, "{summary}");
        assert_eq!(
            (notes[0].0.as_str(), notes[0].2.as_str()),
            (noted, "notice")
        );
        assert!(summary.contains("deprecated"), "{summary}");
        let l = loaded(&w).await;
        assert!((took_old)(&l.config), "{}: old form not read", case.name);
        assert!(l.error.is_none());
        assert_eq!(l.notes.len(), 1);
        let (n, run) = pr_run(&mut w, &format!("{}-old", case.name)).await;
        prs.push(n);
        let (conclusion, notes, summary) = run.unwrap();
        assert_eq!(conclusion, "success", "{summary}");
        assert_eq!(notes[0].2, "notice");
        assert!(
            summary.starts_with("The configuration of `main`:\nDeprecated configuration:\n- "),
            "{summary}"
        );

        // Both: the section wins; the old form is noted as ignored.
        let sha = push(
            &mut w,
            &[Change::write(CONFIG, both)],
            "move to the section",
        )
        .await;
        let (conclusion, _, summary) = config_run(&w, &sha).unwrap();
        assert_eq!(conclusion, "success", "{summary}");
        assert!(summary.contains("ignored"), "{summary}");
        let l = loaded(&w).await;
        assert!(
            (case.took)(&l.config) && !(took_old)(&l.config),
            "{}: old form won",
            case.name
        );
    }
    w.finish(&prs).await;
}

#[tokio::test]
async fn paths_section() {
    transcript(Case {
        name: "paths",
        valid: "[paths]\nchangelog = \"infx/perf-changelog.yaml\"\n",
        took: |c| c.paths.changelog == "infx/perf-changelog.yaml",
        broken: "[paths]\nchangelog = \"infx/perf-changelog.yaml\"\nmaster-configs = []\n",
        line: 3,
        old: None,
    })
    .await;
}

#[tokio::test]
async fn labels_section() {
    transcript(Case {
        name: "labels",
        valid: "[labels]\nprimary = [\"sweep-all\"]\n",
        took: |c| c.labels.primary == ["sweep-all"],
        broken: "[labels]\nprimary = [\"sweep-all\"]\nmodifiers = [\"sweep-all\"]\n",
        line: 3,
        old: None,
    })
    .await;
}

#[tokio::test]
async fn sweep_section() {
    transcript(Case {
        name: "sweep",
        valid: "[sweep]\nworkflow = \"sweep.yml\"\n",
        took: |c| c.sweep.workflow == "sweep.yml",
        broken: "[sweep]\nworkflow = \"sweep.yml\"\n\nchunk-size = 0\n",
        line: 4,
        old: None,
    })
    .await;
}

#[tokio::test]
async fn verifier_section() {
    transcript(Case {
        name: "verifier",
        valid: "[verifier]\npareto-min-points = 3\n",
        took: |c| c.verifier.pareto_min_points == 3,
        broken: "[verifier]\npareto-min-points = 3\nupstream-image-scope = \"loose\"\n",
        line: 3,
        old: Some((
            Old::File(VERIFIER, "pareto-min-points = 7\n"),
            |c| c.verifier.pareto_min_points == 7,
            "[verifier]\npareto-min-points = 3\n",
        )),
    })
    .await;
}

#[tokio::test]
async fn legacy_section() {
    transcript(Case {
        name: "legacy",
        valid: "[legacy]\nlogins = [\"old-verifier[bot]\"]\n",
        took: |c| c.legacy.logins == ["old-verifier[bot]"],
        broken: "[legacy]\nlogins = \"old-verifier[bot]\"\n",
        line: 2,
        old: Some((
            Old::Key("[signoff]\nlegacy-logins = [\"older[bot]\"]\n"),
            |c| c.legacy.logins == ["older[bot]"],
            "[signoff]\nlegacy-logins = [\"older[bot]\"]\n[legacy]\nlogins = [\"old-verifier[bot]\"]\n",
        )),
    })
    .await;
}

/// The flags the benchmark client accepts, plus `--isl`/`--osl`.
const LINT_FLAGS: &str = "benchmark-serving-flags = [\"--model\", \"--port\", \"--backend\", \"--input-len\", \"--output-len\", \"--random-range-ratio\", \"--num-prompts\", \"--max-concurrency\", \"--result-filename\", \"--result-dir\", \"--isl\", \"--osl\"]\n";

#[tokio::test]
async fn lint_section() {
    transcript(Case {
        name: "lint",
        valid: "[lint]\nestablished-skus = [\"h100\"]\n",
        took: |c| c.lint.get("established-skus").is_some(),
        broken: "[lint]\nestablished-skus = [\"h100\"]\n[lint.vllm]\ncanonical-flag = []\n",
        line: 4,
        old: Some((
            Old::File(LINT, "watched-variables = [\"X\"]\n"),
            |c| c.lint.get("watched-variables").is_some(),
            "[lint]\nestablished-skus = [\"h100\"]\n",
        )),
    })
    .await;
}

/// A script whose client flags L26 refuses unless the lint data accepts
/// them (`tests/it/transcript_lint.rs`).
fn script() -> String {
    "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n\ncheck_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN RANDOM_RANGE_RATIO RESULT_FILENAME\n\npip install fastokens==0.1.3\n\nvllm serve \"$MODEL\" --host 0.0.0.0 --port 8888 --tensor-parallel-size \"$TP\" --max-model-len \"$MAX_MODEL_LEN\" &\n\nwait_for_server_ready\nrun_benchmark_serving --model \"$MODEL\" --port 8888 --backend vllm --isl \"$ISL\" --osl \"$OSL\" --random-range-ratio \"$RANDOM_RANGE_RATIO\" --max-concurrency \"$CONC\" --num-prompts \"$((CONC * 10))\" --result-filename \"$RESULT_FILENAME\" --result-dir /workspace/\n".to_owned()
}

/// Whether the lint check run on a PR's head annotates L26.
async fn l26_on_pr(w: &mut World, branch: &str) -> bool {
    let pr = w.open_pr(
        branch,
        &[Change::write(
            "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh",
            script(),
        )],
        "vendor-dev",
    );
    w.deliver().await;
    w.take_comments(pr.number);
    let lint = crate::transcript_lint::lint_run(w, &pr.head_sha().unwrap());
    lint.annotations.iter().any(|a| a["title"] == "L26")
}

/// The lint reads its data from the configuration in force: `[lint]`, or
/// the old file while the section is absent; a broken override keeps the
/// last valid one and the lint still runs (it used to be retried, then
/// dead-lettered).
#[tokio::test]
async fn lint_overrides_take_effect_on_a_pr() {
    let mut w = World::new().await;
    assert!(l26_on_pr(&mut w, "defaults").await);
    push(&mut w, &[Change::write(LINT, LINT_FLAGS)], "old file").await;
    assert!(!l26_on_pr(&mut w, "old-file").await);
    push(
        &mut w,
        &[
            Change::delete(LINT),
            Change::write(CONFIG, format!("[lint]\n{LINT_FLAGS}")),
        ],
        "section",
    )
    .await;
    assert!(!l26_on_pr(&mut w, "section").await);
    push(
        &mut w,
        &[Change::write(
            CONFIG,
            "[lint]\nbenchmark-serving-flags = 3\n",
        )],
        "broken",
    )
    .await;
    // No job failed (`deliver` fails the test on any failed job).
    assert!(
        !l26_on_pr(&mut w, "broken").await,
        "the last valid [lint] stays"
    );
    w.finish(&[]).await;
}

/// `[legacy] logins`: a marked comment by the replaced automation's
/// account suppresses a second contribution guide.
#[tokio::test]
async fn a_legacy_login_from_the_section_suppresses_the_guide() {
    let mut w = World::new().await;
    push(
        &mut w,
        &[Change::write(
            CONFIG,
            "[legacy]\nlogins = [\"old-verifier[bot]\"]\n",
        )],
        "legacy",
    )
    .await;
    let path = common::data_dir().join("inferencex/configs/nvidia-master.yaml");
    let mut master = std::fs::read_to_string(path).unwrap();
    master.push_str("\n# tuned\n");
    let pr = w.open_pr(
        "tune",
        &[Change::write("configs/nvidia-master.yaml", master)],
        "vendor-dev",
    );
    w.sandbox.take_deliveries();
    pr.post_comment(
        "old-verifier[bot]",
        "NONE",
        "<!-- recipe-reminder -->\nThanks for the contribution! (old bot)",
    )
    .unwrap();
    pr.close("vendor-dev").unwrap();
    pr.reopen("vendor-dev").unwrap();
    w.deliver().await;
    let posted = w.take_comments(pr.number);
    assert!(
        posted
            .iter()
            .all(|c| !c.starts_with("<!-- recipe-reminder -->")),
        "{posted:#?}"
    );
    w.finish(&[pr.number]).await;
}
