//! The verifier rows of `docs/contracts.md` §7: seed 002 (the 18-row PASS
//! verdict, snapshot-tested as the whole comment) and seed 003 (Check 15
//! REVIEW listing the four contradicted claims). Each scenario's world
//! (paths, team, checklist, model) is written into its own fixture files,
//! citing the seed lines.
use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use sweepgate::snapshot::{self, GithubFacts, Trees};
use sweepgate::verdict;
use sweepgate_core::checks::snapshot::Snapshot;
use sweepgate_core::checks::{Outcome, VerifierSettings, c15_description};
use sweepgate_core::config::RepoConfig;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/verify")
        .join(name)
}

fn read_tree(root: &Path) -> BTreeMap<String, String> {
    common::read_tree(root)
        .into_iter()
        .map(|(p, b)| (p, String::from_utf8(b).unwrap()))
        .collect()
}

fn load(name: &str, today: &str) -> (Snapshot, RepoConfig) {
    let dir = fixture(name);
    let cfg = RepoConfig::from_toml(
        "config.toml",
        &std::fs::read(dir.join("config.toml")).unwrap(),
    )
    .unwrap();
    let settings = match std::fs::read_to_string(dir.join("verifier.toml")) {
        Ok(t) => VerifierSettings::from_toml("verifier.toml", &t).unwrap(),
        Err(_) => VerifierSettings::default(),
    };
    let facts: GithubFacts =
        serde_json::from_str(&std::fs::read_to_string(dir.join("github.json")).unwrap()).unwrap();
    let artifacts = dir
        .join("artifacts")
        .is_dir()
        .then(|| snapshot::read_artifacts(&dir.join("artifacts")).unwrap());
    let head = read_tree(&dir.join("head"));
    let trees = Trees {
        policy: read_tree(&dir.join("policy")),
        base: read_tree(&dir.join("base")),
        head: head.clone(),
        files: None,
        base_sha: String::new(),
        head_sha: String::new(),
    };
    let today = NaiveDate::parse_from_str(today, "%Y-%m-%d").unwrap();
    let mut s = snapshot::snapshot_from_trees(trees, facts, artifacts, settings, today);
    // Seed 002 line 218: the master config at the measured commit equals the head's.
    let masters: BTreeMap<String, String> = head
        .into_iter()
        .filter(|(p, _)| cfg.paths.master_configs.contains(p))
        .collect();
    s.run_files = Some(masters);
    (s, cfg)
}

fn expect_text(name: &str, actual: &str) {
    let path = fixture(name);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        actual,
        expected,
        "rendered text differs from {}",
        path.display()
    );
}

#[test]
fn seed_002_is_the_18_row_pass_verdict() {
    // Seed 002 lines 245-285: the clock at the review date 2026-10-16.
    let (s, cfg) = load("seed002", "2026-10-16");
    let v = verdict::verify(&s, &cfg);
    for r in &v.rows {
        let want = if r.number == 12 || r.number == 17 {
            Outcome::NotApplicable
        } else {
            Outcome::Pass
        };
        assert_eq!(
            r.outcome, want,
            "Check {} ({}): {}",
            r.number, r.name, r.reason
        );
    }
    assert!(v.passed());
    assert_eq!(v.rows.len(), 18);
    let c14 = &v.rows[14].reason;
    assert!(
        c14.contains("P90 E2EL has 7/8 frontier points and P75 E2EL has 7/8 frontier points"),
        "{c14}"
    );
    assert!(c14.contains("TP4 C1 is dominated in both"), "{c14}");
    assert_eq!(
        v.rows[4].reason,
        "/use 38614048439 posted by nvpohanh (COLLABORATOR)."
    );
    assert_eq!(
        v.rows[5].reason,
        "all 18 current-template items are present and checked."
    );
    assert_eq!(
        v.rows[7].reason,
        "dsv41flash agentic coding is active in MODELS.md as of 2026-10-16."
    );
    assert_eq!(
        v.rows[12].reason,
        "the new changelog entry does not set append-only: true."
    );
    let body = verdict::render_comment(&v);
    assert!(body.starts_with("<!-- codeowner-signoff-verify sha=86ace5cf836ad92bf302c3d39d3ff48b2f98af2c -->\n## ✅✅✅ **Verdict: PASS** ✅✅✅\n"));
    assert!(body.ends_with("Assessed commit: 86ace5cf836ad92bf302c3d39d3ff48b2f98af2c."));
    expect_text("seed002/expected_comment.md", &body);
    let st = verdict::status(
        &v,
        Some("https://github.com/SemiAnalysisAI/InferenceX/pull/4033#issuecomment-4"),
    );
    assert_eq!(
        (st.context.as_str(), st.state.as_str()),
        ("codeowner-signoff-verify", "success")
    );
    assert_eq!(st.description, "CODEOWNER sign-off independently verified");
    assert!(verdict::check_run(&v).annotations.is_empty());
}

#[test]
fn seed_002_on_the_wrong_day_or_by_a_stranger_is_rejected() {
    // A model retired the day before the review fails Check 7.
    let (mut s, cfg) = load("seed002", "2026-10-16");
    let models = s.policy.get_mut("MODELS.md").unwrap();
    *models = models.replace(
        "| Agentic coding (SGLang DSpark arms per SKU) |",
        "| None (retired 2026-10-15) |",
    );
    let v = verdict::verify(&s, &cfg);
    assert_eq!(v.rows[7].outcome, Outcome::Fail, "{}", v.rows[7].reason);
    assert!(!v.passed());
    let body = verdict::render_comment(&v);
    assert!(body.contains("## ❌❌❌ **REJECTED** ❌❌❌\n@nvpohanh your sign-off was not verified: 1 blocking check — Check 7 (Deprecated models) FAIL.\n\n**Blocking checks**\n\n❌ Check 7 (Deprecated models): FAIL — dsv41flash model is deprecated since 2026-10-15"), "{body}");
    assert_eq!(verdict::status(&v, None).state, "failure");
    let ann = verdict::check_run(&v).annotations;
    assert_eq!(ann.len(), 1);
    assert_eq!(
        (ann[0].path.as_str(), ann[0].annotation_level.as_str()),
        ("MODELS.md", "failure")
    );

    // An AMD owner signing the NVIDIA master config fails Check 0.
    let (mut s, cfg) = load("seed002", "2026-10-16");
    if let Some(so) = s.signoff.as_mut() {
        so.author = "chunfangamd".into();
    }
    let v = verdict::verify(&s, &cfg);
    assert_eq!(v.rows[0].outcome, Outcome::Fail);
    assert_eq!(
        v.rows[0].reason,
        "@chunfangamd is not an owner of inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/sglang/dsv41flash/gb300-fp4/agentic/agg-gb300-dspark.yaml (owners: @nvpohanh @weireweire) (1 more specifically-owned paths not owned)."
    );
}

#[test]
fn seed_002_review_row_acknowledged() {
    // Remove the upstream PR's DEP2 line: data-parallel and DP attention
    // become absent upstream, so Check 3 is REVIEW; an ack turns it into PASS.
    let (mut s, cfg) = load("seed002", "2026-10-16");
    if let Some(prs) = s.upstream_prs.as_mut()
        && let Some(p) = prs[0].files[0].patch.as_mut()
    {
        *p = p
            .lines()
            .filter(|l| !l.contains("const dep2"))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let v = verdict::verify(&s, &cfg);
    assert_eq!(v.rows[3].outcome, Outcome::Review, "{}", v.rows[3].reason);
    assert!(
        v.rows[3].reason.contains("--data-parallel-size"),
        "{}",
        v.rows[3].reason
    );
    s.acks.push(sweepgate_core::checks::snapshot::AckRecord {
        check: 3,
        user: "lead".into(),
        reason: "DEP2 is in the cookbook's router section".into(),
        url: "https://github.com/SemiAnalysisAI/InferenceX/pull/4033#issuecomment-9".into(),
        created_at: "2026-10-16T14:00:00Z".into(),
    });
    let v = verdict::verify(&s, &cfg);
    assert!(v.passed());
    let line = verdict::row_line(&v.rows[3]);
    assert!(
        line.starts_with("✅ Check 3 (Upstream recipe): PASS (acknowledged by @lead: DEP2 is in the cookbook's router section) — "),
        "{line}"
    );
}

#[test]
fn seed_003_check_15_lists_the_four_contradicted_claims() {
    let (s, cfg) = load("seed003", "2026-04-20");
    let r = c15_description::check(&s, &cfg);
    assert_eq!(r.outcome, Outcome::Review, "{}", r.reason);
    expect_text("seed003/expected_check15.txt", &r.reason);
    for claim in [
        "\"EP8\"",
        "\"dp-attention\"",
        "\"speculative decoding disabled\"",
        "\"prefix caching disabled\"",
    ] {
        assert!(r.reason.contains(claim), "{claim} missing: {}", r.reason);
    }
    assert!(
        r.reason.starts_with("4 contradicted claims: "),
        "{}",
        r.reason
    );
}
