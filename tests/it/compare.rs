//! sweepgate's verdict beside the old verifier's (`docs/shadow.md`): seed
//! 002's old-bot verdict, posted by `github-actions[bot]` with its marker,
//! read back row by row and shown beside sweepgate's verdict of the same
//! commit — on the PR page, on `/compare` (which claims no agreement rate
//! from one PR) and by `sweepgate verify --pr … --compare` with a
//! read-only token.
use crate::common;
use crate::transcript_verify::seed002;

use common::transcript::{OWNER, REPO};
use sweepgate_core::legacy;

/// The old bot's verdict in seed 002 (its `[github-actions]` comment, as
/// the transcript renders it: lines 245–285), with the marker its comment
/// carries naming `sha`.
fn seed_002_old_verdict(sha: &str) -> String {
    let seed =
        std::fs::read_to_string(common::data_dir().join("seeds/002_a06ac514f4a3d3bf.txt")).unwrap();
    let start = seed.find("[github-actions]\n").unwrap() + "[github-actions]\n".len();
    let text = &seed[start..];
    let end = text.find("Assessed commit:").unwrap();
    let end = end + text[end..].find('\n').unwrap_or(text.len() - end);
    format!(
        "<!-- codeowner-signoff-verify sha={sha} -->\n{}",
        text[..end].trim()
    )
}

#[test]
fn seed_002s_old_verdict_reads_back_as_18_rows() {
    let body = seed_002_old_verdict("86ace5cf836ad92bf302c3d39d3ff48b2f98af2c");
    let v = legacy::parse(&body).unwrap();
    assert_eq!(v.verdict, "PASS");
    assert_eq!(
        v.assessed_commit.as_deref(),
        Some("86ace5cf836ad92bf302c3d39d3ff48b2f98af2c")
    );
    let rows: Vec<(u8, &str)> = v
        .rows
        .iter()
        .map(|r| (r.number, r.outcome.as_str()))
        .collect();
    let want: Vec<(u8, &str)> = (0..18)
        .map(|n| (n, if n == 12 || n == 17 { "N/A" } else { "PASS" }))
        .collect();
    assert_eq!(rows, want);
    assert_eq!(v.rows[3].name, "Upstream recipe");
    assert!(
        v.rows[4]
            .reason
            .starts_with("/use 38614048439 posted by nvpohanh")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_old_verdict_is_shown_beside_sweepgates_for_the_same_commit() {
    let mut seed = seed002().await;
    let signoff = seed.signoff.clone();
    let (_, ours) = seed.sign(&signoff).await;
    assert!(ours.contains("**Verdict: PASS**"), "{ours}");
    // The old verifier answers the same sign-off on the same head.
    let old = seed_002_old_verdict(&seed.head);
    seed.pr
        .post_comment("github-actions[bot]", "NONE", &old)
        .unwrap();
    seed.w.deliver().await;

    let n = seed.pr.number;
    let (status, html) = seed
        .w
        .page(&format!("/repos/{OWNER}/{REPO}/pulls/{n}"))
        .await;
    assert_eq!(status, 200);
    assert!(
        html.contains(
            "Beside the old verifier: <span class=\"PASS\">PASS</span> for the same commit"
        ),
        "{html}"
    );
    assert_eq!(html.matches("<tr class=\"same\">").count(), 18, "{html}");
    assert!(!html.contains("<tr class=\"different\">"));
    assert!(html.contains("<td>3</td><td>Upstream recipe</td><td>same</td><td><span class=\"PASS\">PASS</span></td><td><span class=\"PASS\">PASS</span></td>"));

    // One PR compared: counts, and no rate.
    let (status, page) = seed.w.page("/compare").await;
    assert_eq!(status, 200);
    assert!(
        page.contains("Pull requests where both verifiers judged the same commit: <b>1</b>. Too few for an agreement rate"),
        "{page}"
    );
    assert!(page.contains("<tr><td>14</td><td>Pareto coverage</td><td>1</td><td class=\"pass\">1</td><td class=\"fail\">0</td><td></td></tr>"), "{page}");
    assert!(!page.contains(" %</td>"), "a rate from one PR: {page}");

    // The local trial: a read-only token, no webhook, no server.
    let dir = tempfile::tempdir().unwrap();
    let token = seed.w.sandbox.user_token("a-reader");
    let args = [
        "verify".to_owned(),
        "--repo".into(),
        format!("{OWNER}/{REPO}"),
        "--pr".into(),
        n.to_string(),
        "--compare".into(),
        "--today".into(),
        "2026-10-16".into(),
        "--github-token".into(),
        token,
        "--github-api-url".into(),
        seed.w.sandbox.base_url(),
        "--database-url".into(),
        format!("sqlite:{}", dir.path().join("local.db").display()),
    ];
    let before = seed.w.sandbox.requests().len();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(&args)
        .env("SWEEPGATE_LOG", "error")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with(&format!(
            "{OWNER}/{REPO}#{n}: sweepgate PASS at {}; old verifier PASS at {}",
            seed.head, seed.head
        )),
        "{text}"
    );
    assert!(
        text.contains("    3  Upstream recipe              PASS       PASS         same\n"),
        "{text}"
    );
    assert!(
        text.ends_with("same outcome: 18, different: 0, in one verdict only: 0\n"),
        "{text}"
    );
    // It only read.
    let writes: Vec<String> = seed.w.sandbox.requests()[before..]
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(writes, Vec::<String>::new());
    seed.w.finish(&[n]).await;
}
