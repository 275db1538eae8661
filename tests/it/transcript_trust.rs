//! Transcripts of issue 18's trust rules (`docs/contracts.md` §3–§4) in
//! seed 002's world: a sign-off covers the commit its signer saw and never
//! a later push; an edit of someone else's comment borrows nothing; only
//! an eligible signer gets a verdict, within an hourly allowance of their
//! own; sweepgate edits only its own comments, under a configurable status
//! context.
use crate::transcript_verify::{SIGNER, Seed, clock_to, github_json, seed002, seed002_config};

use common::transcript::{OWNER, REPO};
use sweepgate_sandbox::Change;

use crate::common;

const CONTEXT: &str = "codeowner-signoff-verify";

fn statuses(seed: &Seed, sha: &str) -> Vec<(String, String, Option<String>)> {
    seed.w
        .sandbox
        .statuses(OWNER, REPO, sha)
        .into_iter()
        .map(|s| (s.context, s.state, s.description))
        .collect()
}

fn successes(seed: &Seed, sha: &str) -> usize {
    statuses(seed, sha)
        .iter()
        .filter(|(_, state, _)| state == "success")
        .count()
}

fn stale(covered: &str, head: &str) -> String {
    format!(
        "sign-off covers {}, head is {}; sign again",
        &covered[..7],
        &head[..7]
    )
}

fn verdicts(comments: &[String]) -> Vec<&String> {
    comments
        .iter()
        .filter(|c| c.starts_with("<!-- codeowner-signoff-verify"))
        .collect()
}

/// Item 1: a sign-off on A, a push of B, then `/verify`: the verdict is
/// about A, B gets a failing "stale" status, never success.
#[tokio::test]
async fn verify_after_a_push_re_assesses_the_signed_commit_not_the_new_head() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(verdict.contains("**Verdict: PASS**"), "{verdict}");
    clock_to(&seed.w, "2026-10-16T13:05:00Z");
    let newer = seed
        .pr
        .push(&[Change::write("README.md", "# InferenceX\n\nB\n")], "B")
        .unwrap();
    seed.w.deliver().await;
    seed.w.take_comments(pr);
    // The push makes the verdict stale on the new head.
    assert_eq!(
        statuses(&seed, &newer),
        vec![(
            CONTEXT.to_owned(),
            "failure".to_owned(),
            Some(stale(&seed.head, &newer))
        )]
    );

    clock_to(&seed.w, "2026-10-16T13:10:00Z");
    let cmd = seed
        .pr
        .post_comment(SIGNER, "COLLABORATOR", "/verify")
        .unwrap();
    seed.w.deliver().await;
    let said = seed.w.take_comments(pr);
    let reply = said
        .iter()
        .find(|c| c.starts_with(&format!("<!-- sweepgate:reply comment={cmd} -->")))
        .unwrap_or_else(|| panic!("{said:#?}"));
    assert!(
        reply.contains(&format!(
            "@{SIGNER} verified {} against the sign-off by @{SIGNER}: **PASS**",
            seed.head
        )),
        "{reply}"
    );
    // The verdict (edited) names the moved head and asks for a new sign-off.
    let v = verdicts(&said);
    assert_eq!(v.len(), 1, "{said:#?}");
    assert!(v[0].starts_with(&format!(
        "<!-- codeowner-signoff-verify sha={} -->",
        seed.head
    )));
    assert!(v[0].contains(&format!(
        "The PR head moved to {newer} after the sign-off; this verdict assesses the signed commit, and a fresh sign-off is needed for the new commit."
    )));
    assert_eq!(successes(&seed, &newer), 0, "{:?}", statuses(&seed, &newer));
    assert!(successes(&seed, &seed.head) >= 1);
    seed.w.finish(&[pr]).await;
}

/// Item 1: a comment covers the last head recorded before it, even when
/// a push lands before its job runs.
#[tokio::test]
async fn a_comment_covers_the_head_before_it_not_a_push_that_lands_before_its_job() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    seed.pr
        .post_comment(SIGNER, "COLLABORATOR", &seed.signoff)
        .unwrap();
    let newer = seed
        .pr
        .push(&[Change::write("README.md", "# InferenceX\n\nB\n")], "B")
        .unwrap();
    seed.w.deliver().await;
    let said = seed.w.take_comments(pr);
    let v = verdicts(&said);
    assert_eq!(v.len(), 1, "{said:#?}");
    assert!(
        v[0].starts_with(&format!(
            "<!-- codeowner-signoff-verify sha={} -->\n## ✅✅✅ **Verdict: PASS**",
            seed.head
        )),
        "{}",
        v[0]
    );
    assert_eq!(successes(&seed, &newer), 0);
    assert!(
        statuses(&seed, &newer)
            .iter()
            .any(|(_, st, d)| st == "failure" && d.as_deref() == Some(&stale(&seed.head, &newer))),
        "{:?}",
        statuses(&seed, &newer)
    );
    seed.w.finish(&[pr]).await;
}

/// Item 1: a push less than 60 s before a sign-off makes it stale: no
/// verdict, a reply asking to sign again; a minute later it counts.
#[tokio::test]
async fn a_sign_off_right_after_a_push_is_stale_and_asks_to_sign_again() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let newer = seed
        .pr
        .push(&[Change::write("README.md", "# InferenceX\n\nB\n")], "B")
        .unwrap();
    seed.w.deliver().await;
    seed.w.take_comments(pr);
    let signoff = seed.signoff.clone();
    let (id, reply) = seed.sign(&signoff).await;
    let reply = reply.replace(&newer, "<B>");
    assert!(
        reply.starts_with(&format!(
            "<!-- sweepgate:signoff comment={id} -->\n@{SIGNER} this sign-off was not verified: <B> was pushed "
        )),
        "{reply}"
    );
    assert!(reply.ends_with(" s before it, too soon to be sure you reviewed it. Please sign again."));
    assert!(statuses(&seed, &newer).is_empty());
    seed.w.sandbox.advance_clock(chrono::Duration::minutes(2));
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(
        verdict.starts_with(&format!("<!-- codeowner-signoff-verify sha={newer} -->")),
        "{verdict}"
    );
    seed.w.finish(&[pr]).await;
}

/// Item 2: someone with write access turns the signer's "LGTM" into the
/// checklist: nothing runs, and `/verify` finds no sign-off.
#[tokio::test]
async fn an_edit_by_someone_else_is_no_sign_off() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let lgtm = seed
        .pr
        .post_comment(SIGNER, "COLLABORATOR", "LGTM, will sign later")
        .unwrap();
    seed.w.deliver().await;
    seed.w
        .sandbox
        .edit_comment(lgtm, "maint", &seed.signoff)
        .unwrap();
    seed.w.deliver().await;
    seed.w.assert_no_unexpected_comments(pr);
    assert!(statuses(&seed, &seed.head).is_empty());
    let (cmd, reply) = seed.say("maint", "MEMBER", "/verify").await;
    assert_eq!(
        reply,
        format!(
            "<!-- sweepgate:reply comment={cmd} -->\n@maint there is no sign-off on this PR to verify: a CODEOWNER signs off by posting the checklist that begins \"As a PR reviewer and CODEOWNER, I have reviewed this and have\".\n"
        )
    );
    // The signer's own edit counts.
    seed.w
        .sandbox
        .edit_comment(lgtm, SIGNER, &format!("{}\n", seed.signoff))
        .unwrap();
    seed.w.deliver().await;
    let verdict = seed.w.next_comment(pr);
    assert!(verdict.contains("**Verdict: PASS**"), "{verdict}");
    seed.w.finish(&[pr]).await;
}

/// Item 2: an `/ack-check` someone else adds to a maintainer's comment
/// runs nothing and acknowledges nothing.
#[tokio::test]
async fn an_ack_added_to_a_maintainers_comment_by_someone_else_counts_for_nothing() {
    // The cookbook without its DEP2 line: Check 3 is REVIEW.
    let patch: String = github_json()["upstream_prs"][0]["files"][0]["patch"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| !l.contains("const dep2"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut seed = seed002_config(&patch, None, "").await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(verdict.contains("Check 3 (Upstream recipe) REVIEW."), "{verdict}");
    let s = seed.w.sandbox.clone();
    s.set_permission(OWNER, REPO, "lead", "maintain", "maintain")
        .unwrap();
    s.set_permission(OWNER, REPO, "writer", "write", "write")
        .unwrap();
    let thanks = seed.pr.post_comment("lead", "MEMBER", "thanks").unwrap();
    seed.w.deliver().await;
    s.edit_comment(thanks, "writer", "thanks\n/ack-check 3 looks fine")
        .unwrap();
    seed.w.deliver().await;
    seed.w.assert_no_unexpected_comments(pr);
    let cmd = seed
        .pr
        .post_comment(SIGNER, "COLLABORATOR", "/verify")
        .unwrap();
    seed.w.deliver().await;
    let said = seed.w.take_comments(pr);
    let reply = said
        .iter()
        .find(|c| c.starts_with(&format!("<!-- sweepgate:reply comment={cmd} -->")))
        .unwrap_or_else(|| panic!("{said:#?}"));
    assert!(reply.contains("**REJECTED**"), "{reply}");
    assert!(verdicts(&said).is_empty(), "the verdict did not change");
    seed.w.finish(&[pr]).await;
}

/// Item 4: a checklist from someone who may not sign gets one short reply
/// per user and PR, and no verdict or status.
#[tokio::test]
async fn a_checklist_from_someone_who_may_not_sign_gets_one_short_reply() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let body = seed.signoff.replace("Signed: nvpohanh", "Signed: drive-by");
    let (_, reply) = seed.say("drive-by", "NONE", &body).await;
    insta::assert_snapshot!("not_a_signer", reply);
    assert!(statuses(&seed, &seed.head).is_empty());
    seed.pr
        .post_comment("drive-by", "NONE", &format!("{body}\nagain"))
        .unwrap();
    seed.w.deliver().await;
    seed.w.assert_no_unexpected_comments(pr);
    assert!(statuses(&seed, &seed.head).is_empty());
    seed.w.finish(&[pr]).await;
}

/// Item 4: verifier runs are counted per actor: the signer's allowance
/// runs out for the signer, not for a maintainer's `/verify`.
#[tokio::test]
async fn verifier_runs_are_capped_per_actor() {
    let gh = github_json();
    let mut seed = seed002_config(
        gh["upstream_prs"][0]["files"][0]["patch"].as_str().unwrap(),
        None,
        "\n[signoff]\nruns-per-hour = 2\n",
    )
    .await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    // A stranger's checklists run nothing and count against nobody.
    let theirs = signoff.replace("Signed: nvpohanh", "Signed: drive-by");
    for i in 0..3 {
        seed.pr
            .post_comment("drive-by", "NONE", &format!("{theirs}{}", "\n".repeat(i)))
            .unwrap();
    }
    seed.w.deliver().await;
    let refused = seed.w.take_comments(pr);
    assert_eq!(refused.len(), 1, "one reply per user and PR: {refused:#?}");
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(verdict.contains("**Verdict: PASS**"));
    seed.pr
        .post_comment(SIGNER, "COLLABORATOR", &format!("{signoff}\n"))
        .unwrap();
    seed.w.deliver().await;
    let (id, capped) = seed.sign(&format!("{signoff}\n\n")).await;
    assert_eq!(
        capped,
        format!(
            "<!-- sweepgate:signoff comment={id} -->\n@{SIGNER} this sign-off was not verified: you have caused 2 verifier runs on this PR in the past hour, the most allowed. Please try again later."
        )
    );
    // A maintainer's own allowance is untouched.
    let (cmd, reply) = seed.say("maint", "MEMBER", "/verify").await;
    assert!(
        reply.starts_with(&format!(
            "<!-- sweepgate:reply comment={cmd} -->\n@maint verified {} against the sign-off by @{SIGNER}: **PASS**",
            seed.head
        )),
        "{reply}"
    );
    seed.w.finish(&[pr]).await;
}

/// Item 5: a marker in someone else's comment (another App's included)
/// is never edited; sweepgate replies in its own comment.
#[tokio::test]
async fn sweepgate_edits_only_its_own_comments() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let s = seed.w.sandbox.clone();
    // Another App posts an old verdict marker; a user plants the marker of
    // the reply to the next comment.
    let other = seed
        .pr
        .post_comment(
            "other-app[bot]",
            "NONE",
            "<!-- codeowner-signoff-verify sha=0123456789abcdef -->\nnot ours",
        )
        .unwrap();
    let planted = seed
        .pr
        .post_comment("mallory", "NONE", "hello")
        .unwrap();
    s.edit_comment(
        planted,
        "mallory",
        &format!("<!-- sweepgate:reply comment={} -->\nplanted", planted + 1),
    )
    .unwrap();
    seed.w.deliver().await;
    let (cmd, reply) = seed.say(SIGNER, "COLLABORATOR", "/help").await;
    assert_eq!(cmd, planted + 1, "the planted marker names this comment");
    assert!(reply.starts_with(&format!("<!-- sweepgate:reply comment={cmd} -->\n@{SIGNER}")));
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(verdict.contains("**Verdict: PASS**"));
    let body = |id: u64| {
        s.comments(OWNER, REPO, pr)
            .into_iter()
            .find(|c| c.id == id)
            .map(|c| c.body)
            .unwrap()
    };
    assert_eq!(
        body(other),
        "<!-- codeowner-signoff-verify sha=0123456789abcdef -->\nnot ours"
    );
    assert_eq!(
        body(planted),
        format!("<!-- sweepgate:reply comment={} -->\nplanted", planted + 1)
    );
    seed.w.finish(&[pr]).await;
}

/// Item 5: the status context is configurable, so sweepgate can take over
/// the replaced verifier's required status.
#[tokio::test]
async fn the_status_context_is_configurable() {
    let gh = github_json();
    let mut seed = seed002_config(
        gh["upstream_prs"][0]["files"][0]["patch"].as_str().unwrap(),
        None,
        "\n[signoff]\nstatus-context = \"ci/old-verifier\"\n",
    )
    .await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(verdict.contains("**Verdict: PASS**"));
    let st = statuses(&seed, &seed.head);
    assert_eq!(st.len(), 1, "{st:?}");
    assert_eq!((st[0].0.as_str(), st[0].1.as_str()), ("ci/old-verifier", "success"));
    seed.w.finish(&[pr]).await;
}

/// Item 15: the `null`s real GitHub sends are accepted at intake and
/// handled; before, each was a 400 and a lost delivery.
#[tokio::test]
async fn deliveries_with_githubs_nulls_are_handled() {
    let mut w = common::transcript::World::new().await;
    let s = w.sandbox.clone();
    s.send_event(
        OWNER,
        REPO,
        "workflow_run",
        "github-actions[bot]",
        serde_json::json!({ "action": "completed", "workflow_run": {
            "id": 991, "name": "Other", "head_sha": "0000000000000000000000000000000000000001",
            "status": "completed", "conclusion": "success", "event": "push",
            "path": ".github/workflows/other.yml@main", "pull_requests": null } }),
    )
    .unwrap();
    s.send_event(
        OWNER,
        REPO,
        "repository_dispatch",
        "sweepgate[bot]",
        serde_json::json!({ "action": "something-else", "branch": "main", "client_payload": null }),
    )
    .unwrap();
    s.send_event(
        OWNER,
        REPO,
        "workflow_job",
        "github-actions[bot]",
        serde_json::json!({ "action": "queued", "workflow_job": {
            "id": 5, "run_id": 991, "name": "x", "head_sha": "0000000000000000000000000000000000000001",
            "status": "queued", "labels": [null, "gpu"] } }),
    )
    .unwrap();
    assert_eq!(w.post_pending().await, 3);
    w.drain().await;
    let rows = w.db.store.recent_deliveries(10).await.unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|d| d.outcome == "queued"), "{rows:?}");
    let dead = w
        .db
        .store
        .jobs(Some(sweepgate::store::JobState::Dead), 10)
        .await
        .unwrap();
    assert!(dead.is_empty(), "{dead:?}");
    w.finish(&[]).await;
}

/// Item 4: one sign-off makes sweepgate read at most `upstream-links`
/// upstream pull requests; the verdict says the rest were not read.
#[tokio::test]
async fn upstream_link_lookups_are_capped_per_sign_off() {
    let gh = github_json();
    let mut seed = seed002_config(
        gh["upstream_prs"][0]["files"][0]["patch"].as_str().unwrap(),
        None,
        "\n[signoff]\nupstream-links = 2\n",
    )
    .await;
    let pr = seed.pr.number;
    let links: String = (50_000..50_040)
        .map(|n| format!("- https://github.com/sgl-project/sglang/pull/{n}\n"))
        .collect();
    let signoff = seed
        .signoff
        .replace("Signed: nvpohanh", &format!("{links}\nSigned: nvpohanh"));
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(
        verdict.contains(
            "The sign-off links 42 upstream pull requests; sweepgate reads at most 2 per sign-off (`signoff.upstream-links`), so the rest were not read."
        ),
        "{verdict}"
    );
    let read: Vec<String> = seed
        .w
        .sandbox
        .requests_matching("GET", "/repos/sgl-project/sglang/pulls/5")
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert!(read.is_empty(), "{read:?}");
    seed.w.finish(&[pr]).await;
}
