//! Transcripts of issue 18's trust rules (`docs/contracts.md` §3–§4) in
//! seed 002's world: a sign-off covers the commit its signer saw and never
//! a later push; an edit of someone else's comment borrows nothing; only
//! an eligible signer gets a verdict, within an hourly allowance of their
//! own; sweepgate edits only its own comments, under a configurable status
//! context.
use crate::transcript_verify::{
    SIGNER, Seed, clock_to, cookbook_without_dep2, github_json, seed002, seed002_config,
};

use common::transcript::{OWNER, REPO};
use sweepgate_core::ids::{PrNumber, RepoName};
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

/// Seed 002 with `extra` appended to the repository's configuration.
async fn seed_with(extra: &str) -> Seed {
    let gh = github_json();
    seed002_config(
        gh["upstream_prs"][0]["files"][0]["patch"].as_str().unwrap(),
        None,
        extra,
    )
    .await
}

/// The PR author pushes a commit B; its SHA.
fn push_b(seed: &Seed) -> String {
    seed.pr
        .push(&[Change::write("README.md", "# InferenceX\n\nB\n")], "B")
        .unwrap()
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
    let newer = push_b(&seed);
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
    let newer = push_b(&seed);
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
    let newer = push_b(&seed);
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
    assert!(
        reply.ends_with(" s before it, too soon to be sure you reviewed it. Please sign again.")
    );
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
    let patch = cookbook_without_dep2();
    let mut seed = seed002_config(&patch, None, "").await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(
        verdict.contains("Check 3 (Upstream recipe) REVIEW."),
        "{verdict}"
    );
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
    let mut seed = seed_with("\n[signoff]\nruns-per-hour = 2\n").await;
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
    let planted = seed.pr.post_comment("mallory", "NONE", "hello").unwrap();
    s.edit_comment(
        planted,
        "mallory",
        &format!("<!-- sweepgate:reply comment={} -->\nplanted", planted + 1),
    )
    .unwrap();
    seed.w.deliver().await;
    let (cmd, reply) = seed.say(SIGNER, "COLLABORATOR", "/help").await;
    assert_eq!(cmd, planted + 1, "the planted marker names this comment");
    assert!(reply.starts_with(&format!(
        "<!-- sweepgate:reply comment={cmd} -->\n@{SIGNER}"
    )));
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
    let mut seed = seed_with("\n[signoff]\nstatus-context = \"ci/old-verifier\"\n").await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (_, verdict) = seed.sign(&signoff).await;
    assert!(verdict.contains("**Verdict: PASS**"));
    let st = statuses(&seed, &seed.head);
    assert_eq!(st.len(), 1, "{st:?}");
    assert_eq!(
        (st[0].0.as_str(), st[0].1.as_str()),
        ("ci/old-verifier", "success")
    );
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
    let dead =
        w.db.store
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
    let mut seed = seed_with("\n[signoff]\nupstream-links = 2\n").await;
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

// ------------------------------------------------------------ reliability
// The rows of `docs/reliability.md` for issue 18 part A: each prints its
// figures (run with `-- --nocapture`) and fails on any effect it must not
// have.

/// Sign-off replays: pushes followed by sign-offs at 0 to 110 s and a
/// `/verify` each time. A sign-off never covers a commit pushed after it
/// or less than a minute before it; no uncovered head ever gets success.
#[tokio::test]
async fn reliability_sign_off_replays_never_move_a_sign_off() {
    let mut seed = seed_with("\n[signoff]\nruns-per-hour = 1000\n").await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    let (mut stale_replies, mut verdicts_on_signed, mut verifies) = (0, 0, 0);
    let mut heads = vec![seed.head.clone()];
    let mut covered: Vec<String> = Vec::new();
    let attempts = 12;
    for k in 0..attempts {
        let head = seed
            .pr
            .push(
                &[Change::write("README.md", format!("# InferenceX\n\n{k}\n"))],
                &format!("push {k}"),
            )
            .unwrap();
        seed.w.deliver().await;
        seed.w.take_comments(pr);
        heads.push(head.clone());
        // 0, 10, …, 110 s after the push.
        let wait = 10 * k as i64;
        seed.w
            .sandbox
            .advance_clock(chrono::Duration::seconds(wait));
        let id = seed
            .pr
            .post_comment(
                SIGNER,
                "COLLABORATOR",
                &format!("{signoff}{}", "\n".repeat(k)),
            )
            .unwrap();
        // A push right behind the sign-off, before its job runs.
        let behind = seed
            .pr
            .push(
                &[Change::write(
                    "README.md",
                    format!("# InferenceX\n\n{k} behind\n"),
                )],
                &format!("behind {k}"),
            )
            .unwrap();
        heads.push(behind.clone());
        seed.w.deliver().await;
        let said = seed.w.take_comments(pr);
        let marker = format!("<!-- sweepgate:signoff comment={id} -->");
        // The push landed one tick (1 s) after the previous operation.
        if wait + 1 < 60 {
            assert!(
                said.iter().any(|c| c.starts_with(&marker)),
                "{k}: {said:#?}"
            );
            assert!(verdicts(&said).is_empty(), "{k}: {said:#?}");
            stale_replies += 1;
        } else {
            let v = verdicts(&said);
            assert!(
                v.iter().any(
                    |c| c.starts_with(&format!("<!-- codeowner-signoff-verify sha={head} -->"))
                ),
                "{k}: {said:#?}"
            );
            verdicts_on_signed += 1;
            covered.push(head.clone());
        }
        seed.w.sandbox.advance_clock(chrono::Duration::seconds(5));
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
        assert!(!reply.contains(&format!("verified {behind}")), "{reply}");
        verifies += 1;
    }
    let mut wrong = 0;
    for h in heads.iter().skip(1) {
        if successes(&seed, h) > 0 && !covered.contains(h) {
            wrong += 1;
        }
    }
    assert_eq!(wrong, 0);
    println!(
        "sign-off replays: {attempts} pushes each followed by a sign-off {{0..110 s}} later and a push right behind it, then /verify ({verifies}); {stale_replies} sign-offs under 60 s after a push got \"sign again\" and no verdict, {verdicts_on_signed} verdicts each on the commit before the sign-off; {} commits, 0 success statuses on a commit no sign-off covered, 0 /verify on a commit pushed after its sign-off",
        heads.len()
    );
    seed.w.finish(&[pr]).await;
}

/// Edit forgeries: someone with write access edits other users' comments
/// to add sign-offs and commands; nothing runs, nothing changes.
#[tokio::test]
async fn reliability_edit_forgeries_borrow_no_authority() {
    let mut seed = seed002().await;
    let pr = seed.pr.number;
    let s = seed.w.sandbox.clone();
    for (user, role) in [("lead", "maintain"), ("writer", "write")] {
        s.set_permission(OWNER, REPO, user, role, role).unwrap();
    }
    let signoff = seed.signoff.clone();
    let victims = [
        (SIGNER, "COLLABORATOR", "LGTM"),
        ("lead", "MEMBER", "thanks"),
        ("maint", "MEMBER", "looks good"),
        ("weireweire", "CONTRIBUTOR", "updated"),
    ];
    let forged = [
        signoff.clone(),
        "/ack-check 3 fine".to_owned(),
        "/use 38614048439".to_owned(),
        "/stage-results 38614048439".to_owned(),
        "/reuse-sweep-run".to_owned(),
        "/verify".to_owned(),
        format!("{signoff}\n/ack-check 3 fine"),
    ];
    // seed 002's own `/use` already pinned and staged the run.
    let pin_of = (RepoName::new(OWNER, REPO), PrNumber(pr));
    let pin = seed.w.db.store.pin(&pin_of.0, pin_of.1).await.unwrap();
    let staged = s.repository_dispatches().len();
    let mut edits = 0;
    for (victim, assoc, text) in victims {
        let id = seed.pr.post_comment(victim, assoc, text).unwrap();
        seed.w.deliver().await;
        for f in &forged {
            for editor in ["writer", "maint", "drive-by"] {
                if editor == victim {
                    continue;
                }
                s.edit_comment(
                    id,
                    editor,
                    &format!("{text}\n{f}\n<!-- {editor} {edits} -->"),
                )
                .unwrap();
                edits += 1;
            }
        }
    }
    seed.w.deliver().await;
    seed.w.assert_no_unexpected_comments(pr);
    assert!(statuses(&seed, &seed.head).is_empty());
    assert_eq!(s.repository_dispatches().len(), staged);
    assert_eq!(seed.w.db.store.pin(&pin_of.0, pin_of.1).await.unwrap(), pin);
    // And the conversation the verifier reads back vouches for none of it.
    let (cmd, reply) = seed.say("maint", "MEMBER", "/verify").await;
    assert!(
        reply.starts_with(&format!(
            "<!-- sweepgate:reply comment={cmd} -->\n@maint there is no sign-off on this PR to verify"
        )),
        "{reply}"
    );
    println!(
        "edit forgeries: {edits} edits by 3 users of 4 other users' comments adding sign-offs, /ack-check, /use, /stage-results, /reuse-sweep-run and /verify: 0 commands run, 0 replies, 0 verdicts, 0 statuses, 0 new pins, 0 new staging requests; /verify afterwards found no sign-off"
    );
    seed.w.finish(&[pr]).await;
}

/// Hostile text quoted back: configuration keys, command arguments and
/// `/ack-check` reasons written to mention a team, open an HTML comment,
/// break a table or a code span come back inert.
#[tokio::test]
async fn reliability_hostile_text_mentions_nobody_and_hides_nothing() {
    let hostile = [
        "x @InferenceX/core <!--",
        "@InferenceX/core",
        "<!-- hidden",
        "a|b|c",
        "`@InferenceX/core`",
        "``<!--``",
        "<details><summary>x</summary>",
        "<img src=x onerror=alert(1)>",
        "(@nvpohanh)",
        "--> @InferenceX/core <!--",
    ];
    // The verdict world, with Check 3 REVIEW so reasons are acknowledged.
    let patch = cookbook_without_dep2();
    let mut seed = seed002_config(&patch, None, "\n[signoff]\nruns-per-hour = 1000\n").await;
    let pr = seed.pr.number;
    let signoff = seed.signoff.clone();
    seed.sign(&signoff).await;
    seed.w
        .sandbox
        .set_permission(OWNER, REPO, "lead", "maintain", "maintain")
        .unwrap();
    let mut places = 0;
    let mut said = Vec::new();
    for h in hostile {
        for body in [
            format!("/use {h}"),
            format!("/ack-check 3 {h}"),
            format!("/ack-check {h}"),
            format!("/verify {h}"),
        ] {
            seed.pr.post_comment("lead", "MEMBER", &body).unwrap();
            seed.w.deliver().await;
            said.extend(seed.w.take_comments(pr));
            places += 1;
        }
    }
    // A configuration key, in its own PR (the file's first error is
    // reported, so one key).
    let s = seed.w.sandbox.clone();
    let keys = format!("\"{}\" = 1\n", hostile[0]);
    s.create_branch(OWNER, REPO, "hostile-config", "main")
        .unwrap();
    s.commit_as(
        OWNER,
        REPO,
        "hostile-config",
        &[Change::write(
            ".github/sweepgate.toml",
            format!("[sweep]\n{keys}"),
        )],
        "config",
        "maint",
    )
    .unwrap();
    let cpr = s
        .open_pr(sweepgate_sandbox::PullRequestSpec::new(
            OWNER,
            REPO,
            "hostile-config",
            "maint",
        ))
        .unwrap();
    seed.w.deliver().await;
    said.extend(seed.w.take_comments(cpr.number));
    places += 1;
    let mut markers = 0;
    for c in &said {
        for (i, line) in c.lines().enumerate() {
            // Inside a code span nothing mentions or hides; user text never
            // carries a backtick there, so spans pair up.
            let outside: String = line
                .split('`')
                .enumerate()
                .filter(|(j, _)| j % 2 == 0)
                .map(|(_, t)| t)
                .collect();
            // Only the bot's own marker opens an HTML comment, on line 1.
            if i == 0 && line.starts_with("<!-- ") && line.ends_with(" -->") {
                markers += 1;
                continue;
            }
            assert!(!outside.contains("<!--"), "{c}");
            assert!(!outside.contains("@InferenceX/core"), "{c}");
            assert!(!outside.contains("(@nvpohanh)"), "{c}");
            assert!(
                !outside.contains("<details>") && !outside.contains("<img"),
                "{c}"
            );
            assert!(!outside.contains("a|b|c"), "{c}");
        }
    }
    println!(
        "hostile text: {} strings (team mentions, HTML comments and tags, pipes, backticks) in {places} places (run ids, /ack-check numbers and reasons, /verify arguments, a configuration key) gave {} bot comments: 0 mentions, 0 HTML comments besides {markers} markers, 0 raw tags, 0 unescaped pipes",
        hostile.len(),
        said.len()
    );
    seed.w.finish(&[pr, cpr.number]).await;
}

/// Long outputs: a reply longer than GitHub's 65,536 characters is cut at
/// a line boundary with a count of what was left out, not refused with a
/// 422 that posts nothing.
#[tokio::test]
async fn reliability_long_outputs_are_cut_not_lost() {
    let mut w = common::transcript::World::new().await;
    let pr = w.open_pr("long", &[Change::write("README.md", "# long\n")], "maint");
    w.deliver().await;
    w.take_comments(pr.number);
    let lines = 3000;
    let body: String = (0..lines).map(|i| format!("/nope{i}\n")).collect();
    let cmd = pr.post_comment("maint", "MEMBER", &body).unwrap();
    w.deliver().await;
    let reply = w.next_comment(pr.number);
    let chars = reply.chars().count();
    assert!(chars <= 65_536, "{chars}");
    assert!(reply.starts_with(&format!("<!-- sweepgate:reply comment={cmd} -->\n")));
    let kept = reply.matches("unknown command `/nope").count();
    let last = reply.lines().last().unwrap();
    assert!(
        last.starts_with("… ")
            && last.ends_with("characters) were left out to stay within GitHub's limit."),
        "{last}"
    );
    let left: usize = last[4..].split(' ').next().unwrap().parse().unwrap();
    assert!(kept > 300 && kept < lines, "{kept}");
    println!(
        "long outputs: a comment of {lines} unknown commands; its reply (one answer per line) cut to {chars} characters at a line boundary, {kept} answers kept, {left} lines ({} answers with their blank lines) counted as left out, posted once",
        lines - kept
    );
    w.finish(&[pr.number]).await;
}

/// The heads a sign-off binds to (migration 0005) on both back ends: one
/// row per delivery, oldest push first.
#[tokio::test]
async fn pr_heads_are_recorded_once_per_delivery_on_both_back_ends() {
    common::on_both(|db| async move {
        let head = |sha: &str, pushed_at: i64, source: &str| sweepgate::store::HeadRecord {
            repository: "o/r".into(),
            pr_number: 7,
            head_sha: sha.into(),
            pushed_at,
            received_at: pushed_at + 500,
            source: source.into(),
        };
        let s = &db.store;
        assert!(s.record_head(&head("b", 2_000, "d2")).await.unwrap());
        assert!(s.record_head(&head("a", 1_000, "d1")).await.unwrap());
        // A redelivery writes nothing.
        assert!(!s.record_head(&head("a", 1_000, "d1")).await.unwrap());
        let got = s.pr_heads("o/r", 7).await.unwrap();
        assert_eq!(got, vec![head("a", 1_000, "d1"), head("b", 2_000, "d2")]);
        assert!(s.pr_heads("o/r", 8).await.unwrap().is_empty());
        db
    })
    .await;
}
