//! Shadow mode (`docs/shadow.md`): the same script played in live mode and
//! in shadow mode. Shadow's intended writes, as stored, are live's actual
//! writes as the sandbox GitHub recorded them (method, path and body, with
//! the ids each run handed out mapped in order of appearance), and shadow
//! sends nothing but GETs with the bot's credentials (minting an
//! installation token is not a write to the repository). The PR's
//! dashboard page shows each intended write as "would post".
use crate::common;
use crate::transcript_lint::{PATH, script};

use common::transcript::{OWNER, REPO, World, github_for};
use serde_json::Value;
use std::sync::Arc;
use sweepgate::handlers::{Services, event_router};
use sweepgate::store::SqliteSync;
use sweepgate::store::shadow::ShadowLog;
use sweepgate_sandbox::{Change, RecordedRequest};

/// What one play of the script made GitHub hand out: the PR, its heads
/// and the ids of the comments people posted.
struct Played {
    pr: u64,
    heads: Vec<String>,
    comments: Vec<u64>,
}

/// The script: a PR whose recipe the lint flags (the guide, a lint summary
/// comment, check runs), a `/help` (a reply), and a fixing push (the
/// summary edited in place, a new check run).
async fn play(w: &mut World) -> Played {
    let pr = w.open_pr(
        "shadowed",
        &[Change::write(PATH, script("--isl \"$ISL\" --osl \"$OSL\""))],
        "vendor-dev",
    );
    w.deliver().await;
    let first = pr.head_sha().unwrap();
    let help = pr
        .post_comment("vendor-dev", "CONTRIBUTOR", "/help")
        .unwrap();
    w.deliver().await;
    let fixed = script("--input-len \"$ISL\" --output-len \"$OSL\"");
    pr.push(&[Change::write(PATH, fixed)], "the fix").unwrap();
    w.deliver().await;
    Played {
        pr: pr.number,
        heads: vec![first, pr.head_sha().unwrap()],
        comments: vec![help],
    }
}

/// A write as compared: method, path and body, ids renamed in order.
type Write = (String, String, Value);

/// Renames what differs between two plays of the same script: the ids
/// GitHub (or shadow mode) handed out, in order of appearance, and the
/// commit SHAs (the sandbox's commits carry its clock's times).
fn normalize(writes: Vec<Write>, created: &[u64], played: &Played) -> Vec<Write> {
    let mut names: Vec<(String, String)> = Vec::new();
    for (i, id) in created.iter().enumerate() {
        names.push((id.to_string(), format!("<ID{}>", i + 1)));
    }
    for (i, id) in played.comments.iter().enumerate() {
        names.push((id.to_string(), format!("<COMMENT{}>", i + 1)));
    }
    for (i, sha) in played.heads.iter().enumerate() {
        names.push((sha.clone(), format!("<HEAD{}>", i + 1)));
        names.push((sha[..7].to_owned(), format!("<HEAD{}_7>", i + 1)));
    }
    let names: Vec<(regex::Regex, String)> = names
        .into_iter()
        .map(|(from, to)| {
            let whole = regex::Regex::new(&format!(r"\b{}\b", regex::escape(&from))).unwrap();
            (whole, to)
        })
        .collect();
    let rename = |s: &str| {
        let mut out = s.to_owned();
        for (whole, to) in &names {
            out = whole.replace_all(&out, to.as_str()).into_owned();
        }
        out
    };
    writes
        .into_iter()
        .map(|(m, p, b)| {
            let body: Value = serde_json::from_str(&rename(&b.to_string())).unwrap();
            (m, rename(&p), body)
        })
        .collect()
}

/// The bot's writes the sandbox recorded (every non-GET with its
/// credentials, but minting an installation token).
fn bot_writes(requests: &[RecordedRequest]) -> Vec<&RecordedRequest> {
    requests
        .iter()
        .filter(|r| r.method != "GET" && r.auth != "none")
        .filter(|r| !r.path.ends_with("/access_tokens"))
        .collect()
}

#[tokio::test]
async fn shadow_intends_exactly_what_live_writes_and_writes_nothing() {
    // Live.
    let mut live = World::new().await;
    let live_played = play(&mut live).await;
    let live_pr = live_played.pr;
    let requests = live.sandbox.requests();
    let live_writes: Vec<Write> = bot_writes(&requests)
        .into_iter()
        .map(|r| {
            (
                r.method.clone(),
                r.path.clone(),
                r.body.clone().unwrap_or(Value::Null),
            )
        })
        .collect();
    // The ids live GitHub handed out: the comments and check runs created.
    let live_ids: Vec<u64> = bot_writes(&requests)
        .into_iter()
        .filter(|r| {
            r.method == "POST" && (r.path.ends_with("/comments") || r.path.ends_with("/check-runs"))
        })
        .filter_map(|r| r.response.as_ref()?.get("id")?.as_u64())
        .collect();
    assert!(
        live_writes.len() >= 6,
        "the script should write a fair amount: {live_writes:#?}"
    );
    let kinds: Vec<&str> = live_writes.iter().map(|(m, _, _)| m.as_str()).collect();
    assert!(kinds.contains(&"PATCH"), "an edit in place: {kinds:?}");

    // Shadow: the same script, the client writing to the log.
    let mut shadow = World::new().await;
    let log = ShadowLog::open(&shadow.db.url, SqliteSync::Normal)
        .await
        .unwrap();
    shadow.events = event_router(Services::new(
        github_for(&shadow.sandbox).with_sink(Arc::new(log.clone())),
    ));
    shadow.dashboard = sweepgate::dashboard::router(
        sweepgate::dashboard::DashState::new(
            shadow.db.store.clone(),
            Some(sweepgate::config::server::Secret::new(
                common::transcript::ADMIN_TOKEN,
            )),
            None,
            Arc::new(tokio::sync::Notify::new()),
        )
        .with_shadow(Some(log.clone())),
    );
    let shadow_played = play(&mut shadow).await;
    let shadow_pr = shadow_played.pr;
    assert_eq!(shadow_pr, live_pr);
    let sent = bot_writes(&shadow.sandbox.requests())
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect::<Vec<_>>();
    assert_eq!(sent, Vec::<String>::new(), "shadow mode wrote to GitHub");
    assert!(
        shadow
            .sandbox
            .bot_comments(OWNER, REPO, shadow_pr)
            .is_empty(),
        "no comment on GitHub"
    );
    let intended = log.list(&format!("{OWNER}/{REPO}"), None).await.unwrap();
    let shadow_writes: Vec<Write> = intended
        .iter()
        .map(|w| {
            (
                w.write.method.clone(),
                w.write.path.clone(),
                serde_json::from_str(&w.write.body).unwrap(),
            )
        })
        .collect();
    let shadow_ids: Vec<u64> = intended.iter().filter_map(|w| w.created_id()).collect();
    assert_eq!(
        normalize(shadow_writes, &shadow_ids, &shadow_played),
        normalize(live_writes, &live_ids, &live_played)
    );

    // The PR's page shows them, in full.
    let (status, html) = shadow
        .page(&format!("/repos/{OWNER}/{REPO}/pulls/{shadow_pr}"))
        .await;
    assert_eq!(status, 200);
    // Every intended write, the check runs and statuses of its commits too.
    assert_eq!(
        html.matches("would post: ").count(),
        intended.len(),
        "{html}"
    );
    assert!(html.contains("would post: comment-edit"), "{html}");
    assert!(html.contains("would post: check-run"), "{html}");
    assert!(html.contains("&#60;!-- recipe-reminder --&#62;"), "{html}");
    // Live's comments were compared above, as writes.
    let _ = live.take_comments(live_pr);
    live.finish(&[live_pr]).await;
    shadow.finish(&[shadow_pr]).await;
}

#[tokio::test]
async fn switching_to_live_needs_no_migration_and_backfills_nothing() {
    // A shadow run leaves its writes in the same database; a live server
    // on it starts without a migration and sends nothing for them.
    let mut w = World::new().await;
    let log = ShadowLog::open(&w.db.url, SqliteSync::Normal)
        .await
        .unwrap();
    w.events = event_router(Services::new(
        github_for(&w.sandbox).with_sink(Arc::new(log.clone())),
    ));
    let pr = play(&mut w).await.pr;
    assert!(!log.all(100).await.unwrap().is_empty());
    let store = sweepgate::store::open(&w.db.url, SqliteSync::Normal)
        .await
        .unwrap();
    assert!(store.ready().await.unwrap(), "every migration is applied");
    w.sandbox.clear_requests();
    w.events = event_router(Services::new(github_for(&w.sandbox)));
    w.deliver().await;
    assert!(bot_writes(&w.sandbox.requests()).is_empty(), "a backfill");
    // Only what happens from now on is acted on, live.
    let p = w.sandbox.pr(OWNER, REPO, pr);
    p.post_comment("vendor-dev", "CONTRIBUTOR", "/help")
        .unwrap();
    w.deliver().await;
    let comments = w.take_comments(pr);
    assert_eq!(comments.len(), 1, "{comments:#?}");
    assert!(comments[0].contains("/help"), "{}", comments[0]);
    w.finish(&[pr]).await;
}

#[test]
fn the_committed_shadow_manifest_is_the_rendered_one_and_read_only() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/github-app-manifest-shadow.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let rendered = sweepgate::deploy::shadow_app_manifest("https://sweepgate.example.com");
    assert_eq!(file, rendered);
    let perms = rendered["default_permissions"].as_object().unwrap();
    assert!(perms.values().all(|v| v == "read"), "{perms:?}");
    // The same events as the live App: shadow sees every delivery.
    assert_eq!(
        rendered["default_events"],
        sweepgate::deploy::app_manifest("https://sweepgate.example.com")["default_events"]
    );
}

#[tokio::test]
async fn a_repository_configured_for_shadow_mode_gets_no_writes_from_a_live_server() {
    // A live server (its client has no sink) that keeps a shadow log for
    // repositories that ask for it in `.github/sweepgate.toml`.
    let mut w = World::new().await;
    let log = ShadowLog::open(&w.db.url, SqliteSync::Normal)
        .await
        .unwrap();
    w.events =
        event_router(Services::new(github_for(&w.sandbox)).with_shadow_log(Arc::new(log.clone())));
    w.sandbox
        .commit(
            OWNER,
            REPO,
            "main",
            &[Change::write(
                ".github/sweepgate.toml",
                "mode = \"shadow\"\n",
            )],
            "try sweepgate in shadow mode",
        )
        .unwrap();
    w.deliver().await;
    w.sandbox.clear_requests();
    let played = play(&mut w).await;
    let sent = bot_writes(&w.sandbox.requests())
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect::<Vec<_>>();
    assert_eq!(
        sent,
        Vec::<String>::new(),
        "a live server wrote to a shadowed repository"
    );
    let intended = log.list(&format!("{OWNER}/{REPO}"), None).await.unwrap();
    let kinds: Vec<&str> = intended.iter().map(|w| w.write.kind.as_str()).collect();
    // The guide, the lint summary and its edit, the /help reply, check runs.
    for kind in ["comment", "comment-edit", "check-run"] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    assert!(
        intended
            .iter()
            .any(|w| w.write.body.contains("recipe-reminder")),
        "the guide is intended"
    );
    w.finish(&[played.pr]).await;
}
