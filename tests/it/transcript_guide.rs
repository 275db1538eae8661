//! Transcripts of the contribution guide and the commands, against the
//! sandbox GitHub through the real router and handlers. Every bot comment
//! is snapshot-tested, and `finish` fails on any comment not consumed.
use crate::common;

use common::transcript::{OWNER, REPO, World};
use sweepgate_sandbox::Change;

fn master_change() -> Vec<Change> {
    let path = common::data_dir().join("inferencex/configs/nvidia-master.yaml");
    let mut text = std::fs::read_to_string(path).unwrap();
    text.push_str("\n# tuned\n");
    vec![Change::write("configs/nvidia-master.yaml", text)]
}

#[tokio::test]
async fn a_pr_touching_a_master_config_gets_the_guide_once() {
    let mut w = World::new().await;
    let pr = w.open_pr("tune", &master_change(), "vendor-dev");
    w.deliver().await;
    insta::assert_snapshot!("guide", w.next_comment(pr.number));
    // The recipe lint has its say on every push of a recipe PR.
    assert!(
        w.next_comment(pr.number)
            .contains("No recipe lint findings")
    );
    // Reopening does not post a second guide.
    pr.close("vendor-dev").unwrap();
    pr.reopen("vendor-dev").unwrap();
    w.deliver().await;
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn a_pr_touching_only_docs_gets_no_guide() {
    let mut w = World::new().await;
    let pr = w.open_pr(
        "docs",
        &[Change::write("docs/notes.md", "notes\n")],
        "vendor-dev",
    );
    w.deliver().await;
    assert!(pr.bot_comments().is_empty());
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn the_old_bots_marker_on_page_two_means_no_second_guide() {
    let mut w = World::new().await;
    let pr = w.open_pr("tune", &master_change(), "vendor-dev");
    // The opened delivery is lost; the conversation grows past one page.
    w.sandbox.take_deliveries();
    for i in 0..105 {
        pr.post_comment("reviewer", "MEMBER", &format!("comment {i}"))
            .unwrap();
    }
    pr.post_comment(
        "github-actions[bot]",
        "NONE",
        "<!-- recipe-reminder -->\nThanks for the contribution! (old bot)",
    )
    .unwrap();
    w.sandbox.take_deliveries();
    w.sandbox.clear_requests();
    pr.close("vendor-dev").unwrap();
    pr.reopen("vendor-dev").unwrap();
    w.deliver().await;
    let pages: Vec<_> = w
        .sandbox
        .requests_matching(
            "GET",
            &format!("/repos/{OWNER}/{REPO}/issues/{}/comments", pr.number),
        )
        .into_iter()
        .filter_map(|r| r.query)
        .collect();
    assert!(
        pages.iter().any(|q| q.contains("page=2")),
        "second page never read: {pages:?}"
    );
    assert!(
        !pr.bot_comments()
            .iter()
            .any(|c| c.body.contains("<!-- recipe-reminder -->")),
        "a second guide was posted"
    );
    assert!(
        w.next_comment(pr.number)
            .contains("No recipe lint findings")
    );
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn help_lists_the_commands() {
    let mut w = World::new().await;
    let pr = w.open_pr(
        "docs",
        &[Change::write("docs/notes.md", "x\n")],
        "vendor-dev",
    );
    w.deliver().await;
    pr.post_comment("vendor-dev", "CONTRIBUTOR", "Thanks!\n/help")
        .unwrap();
    w.deliver().await;
    insta::assert_snapshot!("help", w.next_comment(pr.number));
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn commands_in_code_blocks_quotes_and_html_comments_are_ignored() {
    let mut w = World::new().await;
    let pr = w.open_pr(
        "docs",
        &[Change::write("docs/notes.md", "x\n")],
        "vendor-dev",
    );
    w.deliver().await;
    for body in [
        "```\n/help\n```",
        "> /help",
        "Run `/help` to see",
        "<!--\n/help\n-->",
        "    /help",
        "\u{200b}/help",
    ] {
        pr.post_comment("vendor-dev", "CONTRIBUTOR", body).unwrap();
    }
    w.deliver().await;
    assert!(pr.bot_comments().is_empty(), "{:#?}", pr.bot_comments());
    w.finish(&[pr.number]).await;
}

#[tokio::test]
async fn an_edited_comment_runs_only_its_new_commands() {
    let mut w = World::new().await;
    let pr = w.open_pr(
        "docs",
        &[Change::write("docs/notes.md", "x\n")],
        "vendor-dev",
    );
    w.deliver().await;
    let id = pr
        .post_comment("maint", "MEMBER", "/stage-results 12")
        .unwrap();
    w.sandbox
        .set_permission(OWNER, REPO, "maint", "write", "maintain")
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!(
            "<!-- sweepgate:reply comment={id} -->\n@maint run 12 cannot be used: no such workflow run in this repository.\n"
        )
    );
    // A typo fix elsewhere runs nothing.
    w.sandbox
        .edit_comment(id, "maint", "/stage-results 12\nthanks")
        .unwrap();
    w.deliver().await;
    w.assert_no_unexpected_comments(pr.number);
    // A newly added line runs, and only it is answered (the reply is edited).
    w.sandbox
        .edit_comment(id, "maint", "/stage-results 12\nthanks\n/use abc")
        .unwrap();
    w.deliver().await;
    assert_eq!(
        w.next_comment(pr.number),
        format!(
            "<!-- sweepgate:reply comment={id} -->\n@maint line 3: `/use`: the run id must be digits (the number in `.../actions/runs/<run_id>`), got `abc`: `/use <run_id>`\n"
        )
    );
    assert_eq!(pr.bot_comments().len(), 1, "one reply per comment");
    w.finish(&[pr.number]).await;
}

/// One row per line of the permission table (`docs/contracts.md` §3), through
/// the collaborator permission API, never the payload alone.
#[tokio::test]
async fn the_permission_table_is_checked_through_the_api() {
    let mut w = World::new().await;
    let pr = w.open_pr(
        "docs",
        &[Change::write("docs/notes.md", "x\n")],
        "vendor-dev",
    );
    w.deliver().await;
    let s = &w.sandbox;
    s.set_permission(OWNER, REPO, "collab", "write", "write")
        .unwrap();
    s.set_permission(OWNER, REPO, "claims", "read", "read")
        .unwrap();
    s.set_permission(OWNER, REPO, "writer", "write", "write")
        .unwrap();
    s.set_permission(OWNER, REPO, "maint", "write", "maintain")
        .unwrap();
    s.set_permission(OWNER, REPO, "vendor-dev", "admin", "admin")
        .unwrap();
    let rows: [(&str, &str, &str, &str); 9] = [
        // (user, association in the payload, command, expected answer after "@user ")
        (
            "collab",
            "COLLABORATOR",
            "/use 38614048439",
            "run 38614048439 cannot be used: no such workflow run in this repository.",
        ),
        (
            "writer",
            "CONTRIBUTOR",
            "/use 38614048439",
            "line 1: `/use` may be used only by repository owners, members and collaborators with the write, maintain or admin role; you are not an owner, member or collaborator of the repository.",
        ),
        // The payload claims MEMBER; the API says read.
        (
            "claims",
            "MEMBER",
            "/reuse-sweep-run",
            "line 1: `/reuse-sweep-run` may be used only by repository owners, members and collaborators with the write, maintain or admin role; your repository role is read.",
        ),
        (
            "writer",
            "CONTRIBUTOR",
            "/stage-results",
            "no run of this PR can be used. Pin one with `/use <run_id>`.",
        ),
        (
            "claims",
            "OWNER",
            "/stage-results",
            "line 1: `/stage-results` may be used only by users with the write, maintain or admin role; your repository role is read.",
        ),
        (
            "writer",
            "NONE",
            "/verify",
            "there is no sign-off on this PR to verify: a CODEOWNER signs off by posting the checklist that begins \"As a PR reviewer and CODEOWNER, I have reviewed this and have\".",
        ),
        (
            "claims",
            "MEMBER",
            "/verify",
            "line 1: `/verify` may be used only by users with the write role or above, or the author of the latest sign-off; your repository role is read, and you did not write the latest sign-off.",
        ),
        (
            "maint",
            "MEMBER",
            "/ack-check 3 upstream page checked by hand",
            "there is no verdict on this PR yet, so there is no REVIEW row to acknowledge; nothing changed.",
        ),
        (
            "vendor-dev",
            "OWNER",
            "/ack-check 3 mine",
            "line 1: `/ack-check` may be used only by users with the maintain or admin role other than the PR author; you are the author of this PR.",
        ),
    ];
    for (user, assoc, cmd, expected) in rows {
        let id = pr.post_comment(user, assoc, cmd).unwrap();
        w.deliver().await;
        let body = w.next_comment(pr.number);
        let want = format!("<!-- sweepgate:reply comment={id} -->\n@{user} {expected}");
        assert!(
            body.starts_with(&want),
            "{user} {cmd}:\n{body}\nwanted:\n{want}"
        );
    }
    // `/help`: anyone, with no API call needed.
    w.sandbox.clear_requests();
    pr.post_comment("stranger", "NONE", "/help").unwrap();
    w.deliver().await;
    assert!(
        w.next_comment(pr.number)
            .contains("@stranger sweepgate reads these commands")
    );
    assert!(
        w.sandbox
            .requests_matching("GET", &format!("/repos/{OWNER}/{REPO}/collaborators"))
            .is_empty()
    );
    w.finish(&[pr.number]).await;
}
