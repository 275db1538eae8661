//! Transcripts of the sign-off verifier on the server: seed 002's world in
//! the sandbox (policy and base on `main`, the PR in the seed's two
//! commits, the sweep run with its artifacts on the first, `/use`, the
//! merged upstream cookbook PR), a CODEOWNER's sign-off, and the verdict
//! comment, the required status and the check run the bot publishes.
//! Also: a non-owner's sign-off, a stale checklist, a head that moved,
//! superseded verdicts, `/verify` and `/ack-check`.
use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use common::transcript::{OWNER, REPO, Setup, World};
use serde_json::{Value, json};
use sweepgate::handlers::Clock;
use sweepgate_sandbox::{Change, Pr, PullRequestSpec, RunSpec};

pub(crate) const RUN: u64 = 38614048439;
pub(crate) const SIGNER: &str = "nvpohanh";
const AUTHOR: &str = "weireweire";

fn seed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify/seed002")
}

fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    common::read_tree(root)
}

pub(crate) fn github_json() -> Value {
    serde_json::from_str(&std::fs::read_to_string(seed().join("github.json")).unwrap()).unwrap()
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// Moves the sandbox clock forward to `t`.
pub(crate) fn clock_to(w: &World, t: &str) {
    let now = w.sandbox.now();
    let target = at(t);
    assert!(target >= now, "clock would go back from {now} to {target}");
    w.sandbox.advance_clock(target - now);
}

/// The file an upstream patch leaves behind: its context and added lines.
fn patched(patch: &str) -> String {
    patch
        .lines()
        .filter(|l| !l.starts_with("@@") && !l.starts_with('-'))
        .map(|l| format!("{}\n", l.get(1..).unwrap_or("")))
        .collect()
}

/// Upstream `sgl-project/sglang` with the seed's merged PRs #44712 (the
/// cookbook) and #43104 (an engine change the sign-off cites).
fn upstream(w: &World, cookbook_patch: &str) {
    let s = &w.sandbox;
    s.add_org("sgl-project");
    let path = "docs/src/snippets/agentx/deepseek-ai/deepseek-v4_1.jsx";
    s.add_repo(
        "sgl-project",
        "sglang",
        "main",
        [
            (path, "const x = 1;\n"),
            ("python/pyproject.toml", "[project]\n"),
        ],
    )
    .unwrap();
    for (n, branch, change) in [
        (
            43104,
            "fastokens-floor",
            Change::write("python/pyproject.toml", "[project]\n# fastokens>=0.3.2\n"),
        ),
        (
            44712,
            "dsv41-cookbook",
            Change::write(path, patched(cookbook_patch)),
        ),
    ] {
        s.create_branch("sgl-project", "sglang", branch, "main")
            .unwrap();
        s.commit_as(
            "sgl-project",
            "sglang",
            branch,
            &[change],
            branch,
            "upstream-dev",
        )
        .unwrap();
        let pr = s
            .open_pr(
                PullRequestSpec::new("sgl-project", "sglang", branch, "upstream-dev").number(n),
            )
            .unwrap();
        pr.merge("upstream-maint").unwrap();
    }
}

/// The upstream cookbook without its DEP2 line: data parallelism and DP
/// attention are absent upstream, so Check 3 is REVIEW.
pub(crate) fn cookbook_without_dep2() -> String {
    github_json()["upstream_prs"][0]["files"][0]["patch"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| !l.contains("const dep2"))
        .map(|l| format!("{l}\n"))
        .collect()
}

pub(crate) struct Seed {
    pub w: World,
    pub pr: Pr,
    /// The swept commit and the `[skip-sweep]` head.
    pub swept: String,
    pub head: String,
    pub signoff: String,
}

/// Seed 002 up to the moment the CODEOWNER signs off.
pub(crate) async fn seed002() -> Seed {
    let gh = github_json();
    seed002_with(
        gh["upstream_prs"][0]["files"][0]["patch"].as_str().unwrap(),
        None,
    )
    .await
}

/// Seed 002 with the upstream cookbook PR's patch and the dashboard's URL.
pub(crate) async fn seed002_with(cookbook_patch: &str, public_url: Option<&str>) -> Seed {
    seed002_config(cookbook_patch, public_url, "").await
}

/// Seed 002 with `extra` appended to the repository's configuration.
pub(crate) async fn seed002_config(
    cookbook_patch: &str,
    public_url: Option<&str>,
    extra: &str,
) -> Seed {
    let dir = seed();
    let gh = github_json();
    let mut files = tree(&dir.join("policy"));
    files.extend(tree(&dir.join("base")));
    let mut config = std::fs::read(dir.join("config.toml")).unwrap();
    config.extend_from_slice(extra.as_bytes());
    files.insert(".github/sweepgate.toml".into(), config);
    files.insert(
        ".github/sweepgate-verifier.toml".into(),
        std::fs::read(dir.join("verifier.toml")).unwrap(),
    );
    files.insert("README.md".into(), b"# InferenceX\n".to_vec());
    // Seed 002 lines 245-285: the review happened on 2026-10-16.
    let mut w = World::with_setup(
        common::TestDb::sqlite().await,
        Setup {
            files: Some(files.into_iter().collect()),
            clock_start: Some(Utc.with_ymd_and_hms(2026, 10, 14, 20, 0, 0).unwrap()),
            clock: Clock::Fixed(NaiveDate::from_ymd_opt(2026, 10, 16).unwrap()),
            public_url: public_url.map(str::to_owned),
            ..Setup::default()
        },
    )
    .await;
    common::transcript::add_results_repo(&w.sandbox);
    upstream(&w, cookbook_patch);
    w.sandbox.take_deliveries();

    // The PR in the seed's two commits: the recipe, then the changelog
    // under `[skip-sweep]`.
    let changelog = "inferencex-e2e/perf-changelog.yaml";
    let head_files = tree(&dir.join("head"));
    let recipe: Vec<Change> = head_files
        .iter()
        .filter(|(p, _)| p.as_str() != changelog)
        .map(|(p, b)| Change::write(p.clone(), b.clone()))
        .collect();
    let branch = "dsv41flash-gb300-fastokens";
    let s = w.sandbox.clone();
    s.create_branch(OWNER, REPO, branch, "main").unwrap();
    let swept = s
        .commit_as(
            OWNER,
            REPO,
            branch,
            &recipe,
            "[AgentX] GB300 DSV4.1 Flash SGLang",
            AUTHOR,
        )
        .unwrap();
    let head = s
        .commit_as(
            OWNER,
            REPO,
            branch,
            &[Change::write(changelog, head_files[changelog].clone())],
            "[skip-sweep] changelog: fastokens 0.3.4",
            AUTHOR,
        )
        .unwrap();
    let pr = s
        .open_pr(
            PullRequestSpec::new(OWNER, REPO, branch, AUTHOR)
                .title(gh["pr"]["title"].as_str().unwrap())
                .body(gh["pr"]["body"].as_str().unwrap()),
        )
        .unwrap();
    s.set_permission(OWNER, REPO, "maint", "maintain", "maintain")
        .unwrap();
    pr.add_label("full-sweep-enabled", "maint").unwrap();
    w.deliver().await;
    loop {
        let c = w.next_comment(pr.number);
        if c.starts_with("<!-- sweepgate:recipe-lint") {
            break;
        }
        assert!(c.starts_with("<!-- recipe-reminder -->"), "{c}");
    }

    // The sweep on the first commit: its check runs, run attempt 2 and the
    // artifacts of seed 002's Pareto paragraph.
    for cr in gh["check_runs"][swept_key(&gh)].as_array().unwrap() {
        s.add_check_run_json(
            OWNER,
            REPO,
            &json!({
                "name": cr["name"],
                "head_sha": swept,
                "status": "completed",
                "conclusion": cr["conclusion"],
                "details_url": format!("https://github.com/{OWNER}/{REPO}/actions/runs/{RUN}/job/1"),
            }),
        )
        .unwrap();
    }
    clock_to(&w, "2026-10-14T22:05:00Z");
    let run = s
        .add_workflow_run(
            RunSpec::new(OWNER, REPO, "run-sweep.yml", &swept)
                .id(RUN)
                .branch(branch)
                .attempt(2)
                .created_at(at("2026-10-14T22:05:00Z")),
        )
        .unwrap();
    s.add_job(run, "agentic / benchmark (tp4 c1)", Some("success"))
        .unwrap();
    for (name, files) in tree(&dir.join("artifacts")).into_iter().fold(
        BTreeMap::<String, Vec<(String, Vec<u8>)>>::new(),
        |mut m, (p, b)| {
            let (art, file) = p.split_once('/').unwrap();
            m.entry(art.to_owned())
                .or_default()
                .push((file.to_owned(), b));
            m
        },
    ) {
        s.add_artifact(run, &name, files).unwrap();
    }
    s.add_artifact(run, "results_bmk", [("agg_bmk.json", "[]")])
        .unwrap();
    clock_to(&w, "2026-10-15T06:00:00Z");
    s.complete_run(run, "success").unwrap();
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .contains("unofficialRun=38614048439")
    );

    // The conversation: the cookbook promise, then `/use` by a collaborator.
    s.set_permission(OWNER, REPO, SIGNER, "write", "write")
        .unwrap();
    clock_to(&w, "2026-10-15T10:00:00Z");
    pr.post_comment(
        SIGNER,
        "COLLABORATOR",
        gh["comments"][0]["body"].as_str().unwrap(),
    )
    .unwrap();
    clock_to(&w, "2026-10-16T12:00:00Z");
    let use_cmd = pr
        .post_comment(SIGNER, "COLLABORATOR", "/use 38614048439")
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!("<!-- sweepgate:reply comment={use_cmd} -->\n@{SIGNER} staging run {RUN}…\n")
    );
    clock_to(&w, "2026-10-16T13:00:00Z");
    Seed {
        w,
        pr,
        swept,
        head,
        signoff: gh["signoff"]["body"].as_str().unwrap().to_owned(),
    }
}

impl Seed {
    /// `user` posts `body` on the PR; the comment id and the next bot
    /// comment.
    pub(crate) async fn say(&mut self, user: &str, association: &str, body: &str) -> (u64, String) {
        let id = self.pr.post_comment(user, association, body).unwrap();
        self.w.deliver().await;
        (id, self.w.next_comment(self.pr.number))
    }

    /// The CODEOWNER signs off with `body`; the verdict.
    pub(crate) async fn sign(&mut self, body: &str) -> (u64, String) {
        self.say(SIGNER, "COLLABORATOR", body).await
    }
}

fn swept_key(gh: &Value) -> &str {
    gh["commits"][0]["sha"].as_str().unwrap()
}

/// The rows of a verdict comment: (check, outcome).
pub(crate) fn rows(body: &str) -> Vec<(u8, String)> {
    body.lines()
        .filter_map(|l| {
            let rest = l.split_once("Check ")?.1;
            let (n, rest) = rest.split_once(' ')?;
            let outcome = rest.split_once("): ")?.1.split(' ').next()?;
            Some((n.parse().ok()?, outcome.to_owned()))
        })
        .collect()
}

/// Replaces the sandbox's commit ids by names, so snapshots are stable.
pub(crate) fn named(body: &str, seed: &Seed) -> String {
    body.replace(&seed.head, "<HEAD>")
        .replace(&seed.swept, "<SWEPT>")
        .replace(&seed.head[..8], "<HEAD8>")
        .replace(&seed.swept[..8], "<SWEPT8>")
}

#[tokio::test]
async fn seed_002_sign_off_gets_the_18_row_pass_verdict() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (signed, verdict) = seed.sign(&signoff).await;
    assert!(
        verdict.starts_with(&format!(
            "<!-- codeowner-signoff-verify sha={} -->\n## ✅✅✅ **Verdict: PASS** ✅✅✅\n",
            seed.head
        )),
        "{verdict}"
    );
    let got = rows(&verdict);
    assert_eq!(got.len(), 18, "{verdict}");
    for (n, outcome) in &got {
        let want = if *n == 12 || *n == 17 { "N/A" } else { "PASS" };
        assert_eq!(outcome, want, "Check {n}:\n{verdict}");
    }
    assert!(verdict.contains(
        "P90 E2EL has 7/8 frontier points and P75 E2EL has 7/8 frontier points (≥5). TP4 C1 is dominated in both."
    ));
    assert!(verdict.contains(
        "✅ Check 4 (Reuse command): PASS — /use 38614048439 posted by nvpohanh (COLLABORATOR)."
    ));
    assert!(verdict.ends_with(&format!("Assessed commit: {}.", seed.head)));
    insta::assert_snapshot!("seed002_verdict", named(&verdict, &seed));

    // The required status on the assessed head, pointing at the verdict.
    let id = seed
        .w
        .sandbox
        .bot_comments(OWNER, REPO, pr)
        .into_iter()
        .find(|c| c.body == verdict)
        .map(|c| c.id)
        .unwrap();
    let statuses = seed.w.sandbox.statuses(OWNER, REPO, &seed.head);
    let st = statuses
        .iter()
        .find(|s| s.context == "codeowner-signoff-verify")
        .expect("status");
    assert_eq!(
        (st.state.as_str(), st.description.as_deref()),
        ("success", Some("CODEOWNER sign-off independently verified"))
    );
    assert!(
        st.target_url
            .as_deref()
            .is_some_and(|u| u.ends_with(&format!("/pull/{pr}#issuecomment-{id}"))),
        "{st:?}"
    );
    // Nothing on the swept commit: a verdict applies to the SHA it assessed.
    assert!(seed.w.sandbox.statuses(OWNER, REPO, &seed.swept).is_empty());
    let runs = seed.w.sandbox.check_runs(OWNER, REPO, &seed.head);
    let cr: Vec<_> = runs
        .iter()
        .filter(|r| r.name == "sweepgate / verdict")
        .collect();
    assert_eq!(cr.len(), 1);
    assert_eq!(cr[0].conclusion.as_deref(), Some("success"));

    // A redelivery of the same sign-off changes nothing: no second comment,
    // no second check run.
    seed.w
        .sandbox
        .edit_comment(signed, SIGNER, &format!("{}\n", seed.signoff))
        .unwrap();
    seed.w.deliver().await;
    let runs = seed.w.sandbox.check_runs(OWNER, REPO, &seed.head);
    assert_eq!(
        runs.iter()
            .filter(|r| r.name == "sweepgate / verdict")
            .count(),
        1
    );
    seed.w.finish(&[pr]).await;
}

#[tokio::test]
async fn a_non_owner_of_a_changed_path_fails_check_0() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let body = seed
        .signoff
        .replace("Signed: nvpohanh", "Signed: chunfangamd");
    seed.w
        .sandbox
        .set_permission(OWNER, REPO, "chunfangamd", "write", "write")
        .unwrap();
    let (_, verdict) = seed.say("chunfangamd", "COLLABORATOR", &body).await;
    assert!(verdict.contains("## ❌❌❌ **REJECTED** ❌❌❌\n@chunfangamd your sign-off was not verified: 1 blocking check — Check 0 (CODEOWNER) FAIL."), "{verdict}");
    assert!(verdict.contains("❌ Check 0 (CODEOWNER): FAIL — @chunfangamd is not an owner of inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/sglang/dsv41flash/gb300-fp4/agentic/agg-gb300-dspark.yaml (owners: @nvpohanh @weireweire)"), "{verdict}");
    let st = seed.w.sandbox.statuses(OWNER, REPO, &seed.head);
    assert_eq!(st[0].state, "failure");
    assert_eq!(
        st[0].description.as_deref(),
        Some("Sign-off verification rejected - see verdict comment")
    );
    let runs = seed.w.sandbox.check_runs(OWNER, REPO, &seed.head);
    let cr = runs
        .iter()
        .find(|r| r.name == "sweepgate / verdict")
        .unwrap();
    assert_eq!(cr.conclusion.as_deref(), Some("failure"));
    seed.w.finish(&[pr]).await;
}

#[tokio::test]
async fn a_stale_checklist_fails_check_5_naming_the_missing_items() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    // The sign-off of an older template: without the draft-precision item.
    let body: String = seed
        .signoff
        .lines()
        .filter(|l| !l.contains("every draft model and draft head is served as it ships"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (_, verdict) = seed.sign(&body).await;
    let line = verdict
        .lines()
        .find(|l| l.contains("Check 5 (Checklist template): "))
        .unwrap();
    assert!(
        line.starts_with("❌ Check 5 (Checklist template): FAIL — "),
        "{line}"
    );
    assert_eq!(
        line,
        "❌ Check 5 (Checklist template): FAIL — stale/incomplete template: missing 1 of 18 items: \"verified that every draft model and draft head…\" (Check 13) (see docs/PR_REVIEW_CHECKLIST.md)."
    );
    seed.w.finish(&[pr]).await;
}

#[tokio::test]
async fn a_review_on_a_moved_head_is_assessed_at_its_commit_and_superseded_later() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    // The review names the head it was written on; a push lands before
    // the job runs.
    seed.pr
        .submit_review(SIGNER, "COLLABORATOR", "APPROVE", &seed.signoff)
        .unwrap();
    let newer = seed
        .pr
        .push(
            &[Change::write("README.md", "# InferenceX\n\nmore\n")],
            "docs",
        )
        .unwrap();
    seed.w.deliver().await;
    let mut verdict = String::new();
    for _ in 0..3 {
        let c = seed.w.next_comment(pr);
        if c.starts_with("<!-- codeowner-signoff-verify") {
            verdict = c;
            break;
        }
    }
    assert!(
        verdict.starts_with(&format!(
            "<!-- codeowner-signoff-verify sha={} -->",
            seed.head
        )),
        "{verdict}"
    );
    assert!(verdict.contains(&format!(
        "The PR head moved to {newer} after the sign-off; this verdict assesses the signed commit, and a fresh sign-off is needed for the new commit."
    )));
    // The new head: the verdict is stale there (`docs/contracts.md` §3).
    let stale = format!(
        "sign-off covers {}, head is {}; sign again",
        &seed.head[..7],
        &newer[..7]
    );
    let st = seed.w.sandbox.statuses(OWNER, REPO, &newer);
    assert!(!st.is_empty());
    assert!(
        st.iter()
            .all(|s| s.state == "failure" && s.description.as_deref() == Some(stale.as_str())),
        "{st:?}"
    );

    // A fresh sign-off on the new head, a minute after the push: a new
    // verdict, the old one superseded.
    seed.w.sandbox.advance_clock(chrono::Duration::minutes(2));
    seed.pr
        .post_comment(SIGNER, "COLLABORATOR", &seed.signoff)
        .unwrap();
    seed.w.deliver().await;
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(seed.w.next_comment(pr));
    }
    assert!(
        seen.iter().any(|c| c.starts_with(&format!(
            "<!-- codeowner-signoff-verify sha={} superseded-by={newer} -->\n> Superseded: this verdict assessed {}; the PR head is now {newer}",
            seed.head, seed.head
        ))),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .any(|c| c.starts_with(&format!("<!-- codeowner-signoff-verify sha={newer} -->"))),
        "{seen:#?}"
    );
    seed.w.finish(&[pr]).await;
}

#[tokio::test]
async fn ack_check_turns_a_review_row_into_an_acknowledged_pass() {
    let patch = cookbook_without_dep2();
    let mut seed = seed002_with(&patch, None).await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(
        verdict.contains("1 blocking check — Check 3 (Upstream recipe) REVIEW."),
        "{verdict}"
    );

    // The PR author may not acknowledge; a maintainer may, with a reason.
    seed.w
        .sandbox
        .set_permission(OWNER, REPO, "lead", "maintain", "maintain")
        .unwrap();
    let pass_row = seed
        .pr
        .post_comment("lead", "MEMBER", "/ack-check 5 looks fine")
        .unwrap();
    seed.w.deliver().await;
    assert_eq!(
        seed.w.next_comment(pr),
        format!(
            "<!-- sweepgate:reply comment={pass_row} -->\n@lead Check 5 (Checklist template) is PASS in the verdict for {}; only a REVIEW row can be acknowledged, so nothing changed.\n",
            seed.head
        )
    );
    let ack = seed
        .pr
        .post_comment(
            "lead",
            "MEMBER",
            "/ack-check 3 DEP2 is in the cookbook's router section",
        )
        .unwrap();
    seed.w.deliver().await;
    let edited = seed.w.next_comment(pr);
    assert!(
        edited.starts_with(&format!(
            "<!-- codeowner-signoff-verify sha={} -->\n## ✅✅✅ **Verdict: PASS** ✅✅✅\n",
            seed.head
        )),
        "{edited}"
    );
    assert!(edited.contains("✅ Check 3 (Upstream recipe): PASS (acknowledged by @lead: DEP2 is in the cookbook's router section) — "), "{edited}");
    let reply = seed.w.next_comment(pr);
    assert!(reply.starts_with(&format!(
        "<!-- sweepgate:reply comment={ack} -->\n@lead acknowledged Check 3 (Upstream recipe) on {}: DEP2 is in the cookbook's router section. The verdict is now **PASS**: https://github.com/",
        seed.head
    )), "{reply}");
    let st = seed.w.sandbox.statuses(OWNER, REPO, &seed.head);
    assert_eq!(
        st.last().map(|s| s.state.as_str()),
        Some("success"),
        "{st:?}"
    );
    seed.w.finish(&[pr]).await;
}

#[tokio::test]
async fn verify_reruns_the_verifier_for_the_signer() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(verdict.contains("**Verdict: PASS**"));
    let (cmd, reply) = seed.sign("/verify").await;
    assert!(reply.starts_with(&format!(
        "<!-- sweepgate:reply comment={cmd} -->\n@{SIGNER} verified {} against the sign-off by @{SIGNER}: **PASS**. The verdict: https://github.com/",
        seed.head
    )), "{reply}");
    seed.w.finish(&[pr]).await;
}

/// A PASS applies only to the commit it assessed (issue 8, security): a
/// push after it gets no success status and no passing verdict check run
/// (only a new verdict on the new head, e.g. by `/verify`, can give one).
#[tokio::test]
async fn a_pass_does_not_carry_over_to_a_new_push() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(verdict.contains("**Verdict: PASS**"));
    let newer = seed
        .pr
        .push(
            &[Change::write("README.md", "# InferenceX\n\nmore\n")],
            "docs",
        )
        .unwrap();
    seed.w.deliver().await;
    seed.w.take_comments(pr);
    let s = &seed.w.sandbox;
    let success = |sha: &str| {
        s.statuses(OWNER, REPO, sha)
            .into_iter()
            .filter(|st| st.state == "success")
            .count()
    };
    assert_eq!(
        success(&seed.head),
        1,
        "the assessed commit keeps its status"
    );
    assert_eq!(success(&newer), 0, "{:?}", s.statuses(OWNER, REPO, &newer));
    let passing_runs = s
        .check_runs(OWNER, REPO, &newer)
        .into_iter()
        .filter(|r| r.name == "sweepgate / verdict" && r.conclusion.as_deref() == Some("success"))
        .count();
    assert_eq!(passing_runs, 0);
    seed.w.finish(&[pr]).await;
}

/// Seed 003: the changelog and the PR contradict the shipped config in
/// four parsed claims; the sandbox transcript gives Check 15 REVIEW listing
/// all four (the rest of the verdict is whatever the thin world gives).
#[tokio::test]
async fn seed_003_check_15_lists_the_four_contradicted_claims() {
    let dir = seed().with_file_name("seed003");
    let gh: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("github.json")).unwrap()).unwrap();
    let mut files: BTreeMap<String, Vec<u8>> =
        common::transcript::fixture_files().into_iter().collect();
    files.extend(tree(&dir.join("base")));
    files.insert(
        ".github/sweepgate.toml".into(),
        std::fs::read(dir.join("config.toml")).unwrap(),
    );
    let mut w = World::with_setup(
        common::TestDb::sqlite().await,
        Setup {
            files: Some(files.into_iter().collect()),
            clock_start: None,
            clock: Clock::Fixed(NaiveDate::from_ymd_opt(2026, 4, 20).unwrap()),
            public_url: None,
            ..Setup::default()
        },
    )
    .await;
    let changes: Vec<Change> = tree(&dir.join("head"))
        .into_iter()
        .map(|(p, b)| Change::write(p, b))
        .collect();
    let s = w.sandbox.clone();
    s.create_branch(OWNER, REPO, "dsv4-b200-mtp", "main")
        .unwrap();
    s.commit_as(OWNER, REPO, "dsv4-b200-mtp", &changes, "MTP", "cquil11")
        .unwrap();
    let pr = s
        .open_pr(
            PullRequestSpec::new(OWNER, REPO, "dsv4-b200-mtp", "cquil11")
                .title(gh["pr"]["title"].as_str().unwrap())
                .body(gh["pr"]["body"].as_str().unwrap()),
        )
        .unwrap();
    w.deliver().await;
    // The guide, the lint summary and the sweep gate (no label yet).
    let opening = w.take_comments(pr.number);
    assert_eq!(opening.len(), 3, "{opening:#?}");
    // The signer may sign (a maintainer: the core team's membership is not
    // readable here), a minute after the head was pushed.
    w.sandbox
        .set_permission(OWNER, REPO, "lead", "maintain", "maintain")
        .unwrap();
    w.sandbox.advance_clock(chrono::Duration::minutes(2));
    pr.post_comment(
        "lead",
        "MEMBER",
        "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n\n- [x] Verified the recipe\n\nSigned: lead\n",
    )
    .unwrap();
    w.deliver().await;
    let verdict = w.next_comment(pr.number);
    assert!(
        verdict.contains("## ❌❌❌ **REJECTED** ❌❌❌"),
        "{verdict}"
    );
    let expected = std::fs::read_to_string(dir.join("expected_check15.txt")).unwrap();
    let line = format!(
        "❌ Check 15 (PR description): REVIEW — {}",
        expected.trim_end()
    );
    assert!(
        verdict.lines().any(|l| l == line),
        "wanted {line}\nin\n{verdict}"
    );
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn the_dashboard_shows_the_verdict_its_rows_and_the_pareto_plot() {
    let gh = github_json();
    let mut seed = seed002_with(
        gh["upstream_prs"][0]["files"][0]["patch"].as_str().unwrap(),
        Some("https://sweepgate.example.com/"),
    )
    .await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    // The comment links the plot on the dashboard, signed for this
    // repository, PR and SHA (`docs/contracts.md` §4).
    let prefix = format!(
        "Pareto plot of the assessed curves: https://sweepgate.example.com/repos/{OWNER}/{REPO}/pulls/{pr}/pareto.svg?sha={}&sig=",
        seed.head
    );
    let line = verdict
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no signed plot link in\n{verdict}"));
    let sig = &line[prefix.len()..];
    assert_eq!(sig.len(), 64, "{line}");
    assert!(
        verdict.ends_with(&format!("{line}\n\nAssessed commit: {}.", seed.head)),
        "{verdict}"
    );
    // Followed from GitHub, the link works without a login ...
    let link = &line["Pareto plot of the assessed curves: https://sweepgate.example.com".len()..];
    let (status, svg) = seed.w.page_without_login(link).await;
    assert_eq!(status, 200, "{svg}");
    assert!(svg.starts_with("<svg"), "{svg}");
    // ... but only for what it was signed for; the rest needs a login.
    let other_pr = link.replace(&format!("/pulls/{pr}/"), &format!("/pulls/{}/", pr + 1));
    let other_sha = link.replace(&seed.head, &"0".repeat(40));
    for forged in [other_pr, other_sha] {
        let (status, body) = seed.w.page_without_login(&forged).await;
        assert_eq!(status, 403, "{forged}: {body}");
    }
    for private in [
        format!(
            "/repos/{OWNER}/{REPO}/pulls/{pr}/pareto.svg?sha={}",
            seed.head
        ),
        format!("/repos/{OWNER}/{REPO}/pulls/{pr}"),
        "/".to_string(),
        "/queue".to_string(),
    ] {
        let (status, _) = seed.w.page_without_login(&private).await;
        assert_eq!(status, 303, "{private} redirects to the login");
    }

    // The PR page: the verdict with its 18 rows and the inline plot.
    let (status, html) = seed
        .w
        .page(&format!("/repos/{OWNER}/{REPO}/pulls/{pr}"))
        .await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains(&format!(
        r#"<article class="verdict" data-sha="{}">"#,
        seed.head
    )));
    assert!(
        html.contains(r#"<span class="PASS">PASS</span> for @nvpohanh"#),
        "{html}"
    );
    for n in 0..18 {
        assert!(
            html.contains(&format!("<tr><td>{n}</td><td>")),
            "row {n}:\n{html}"
        );
    }
    assert!(html.contains(r#"class="pareto""#));
    assert!(html.contains(&format!("run {RUN} · {}", seed.head)));
    assert!(
        html.contains("/use 38614048439"),
        "the command is on the timeline"
    );

    // The plot itself: both percentiles of the curve, 7 of 8 points on each
    // frontier, the dominated point grey.
    let (status, svg) = seed
        .w
        .page(&format!(
            "/repos/{OWNER}/{REPO}/pulls/{pr}/pareto.svg?sha={}",
            seed.head
        ))
        .await;
    assert_eq!(status, 200);
    assert!(svg.starts_with("<svg"), "{svg}");
    assert_eq!(svg.matches(r#"<g class="series""#).count(), 2, "{svg}");
    assert_eq!(svg.matches(r#"class="point frontier""#).count(), 14);
    assert_eq!(svg.matches(r#"class="point dominated""#).count(), 2);
    assert!(svg.contains(r#"data-percentile="P90 E2EL""#));
    assert!(svg.contains(r#"data-percentile="P75 E2EL""#));
    assert!(
        svg.contains("TP4 C1: latency"),
        "the dominated point is labelled"
    );
    let (status, _) = seed
        .w
        .page(&format!(
            "/repos/{OWNER}/{REPO}/pulls/{pr}/pareto.svg?sha=0000"
        ))
        .await;
    assert_eq!(status, 404);

    // The overview lists the PR with its verdict.
    let (status, html) = seed.w.page("/").await;
    assert_eq!(status, 200);
    assert!(html.contains(&format!(
        r#"<a href="/repos/{OWNER}/{REPO}/pulls/{pr}">{OWNER}/{REPO}#{pr}</a></td><td class="PASS">PASS for @nvpohanh at {}"#,
        &seed.head[..12]
    )), "{html}");
    seed.w.finish(&[pr]).await;
}
