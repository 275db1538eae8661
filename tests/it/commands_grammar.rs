//! The comment grammar and the permission table (`docs/contracts.md` §3), in the
//! style of triagebot's parser tests: many small bodies, each with the exact
//! commands it must (or must not) yield.
use proptest::prelude::*;
use std::path::PathBuf;
use sweepgate_core::commands::{
    Actor, AuthorAssociation, CheckNumber, Command, CommandError, CommandName, Facts, FixedRoles,
    PermissionSource, RepoRole, authorize, authorize_with, help_entries, new_in_edit,
    parse_comment,
};
use sweepgate_core::ids::RunId;

/// `(line, normalized text)` of every command line.
fn found(body: &str) -> Vec<(usize, String)> {
    parse_comment(body)
        .into_iter()
        .map(|p| (p.line, p.normalized))
        .collect()
}

fn texts(body: &str) -> Vec<String> {
    found(body).into_iter().map(|(_, t)| t).collect()
}

fn none(body: &str) {
    assert!(
        parse_comment(body).is_empty(),
        "expected no command in {body:?}, got {:?}",
        found(body)
    );
}

fn use_(n: u64) -> Command {
    Command::Use { run: RunId(n) }
}

// ---------------------------------------------------------------- seeds

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

#[test]
fn seed_transcripts_yield_only_the_real_use_command() {
    let dir = data().join("seeds");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let body = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let got = parse_comment(&body);
        if name.starts_with("002_") {
            // Seed 002 line 100: `/use 38614048439` by nvpohanh. The prose
            // "no authorized /use <run_id> comment yet" is mid-sentence.
            assert_eq!(got.len(), 1, "{got:?}");
            assert_eq!(got[0].line, 100);
            assert_eq!(got[0].result, Ok(use_(38614048439)));
        } else {
            // e.g. seed 000: "Is ur /loop wack?" is not a command.
            assert!(got.is_empty(), "{name}: {got:?}");
        }
        seen += 1;
    }
    assert_eq!(seen, 5);
}

// ---------------------------------------------------------------- position

#[test]
fn commands_at_line_start_only() {
    assert_eq!(texts("/use 1"), vec!["/use 1"]);
    assert_eq!(texts("  /use 1"), vec!["/use 1"]);
    assert_eq!(texts("Please pin it.\n/use 1"), vec!["/use 1"]);
    none("please /use 1");
    none("**/use 1**");
    none("\\/use 1");
    none("- /use 1");
    none("1. /use 1");
    none("# /use 1");
    none("| /use 1 |");
    none("&#47;use 1");
}

#[test]
fn indented_code_blocks() {
    none("    /use 1");
    none("\t/verify");
    none("text\n\n    /use 1");
    // Indented code has no lazy continuation: the next line is a paragraph
    // (CommonMark 0.31.2 §4.4, example 114).
    assert_eq!(texts("    cargo test\n/verify"), vec!["/verify"]);
    assert_eq!(texts("    cargo test\n\n/verify"), vec!["/verify"]);
}

#[test]
fn fenced_code_blocks() {
    none("```\n/use 1\n```");
    none("```text\n/use 1\n```");
    none("~~~\n/use 1\n~~~");
    none("````\n```\n/use 1\n````");
    none("~~~\n```\n/use 1\n~~~");
    none("  ```\n/use 1\n  ```");
    // Unclosed: the fence runs to the end of the comment.
    none("```\n/use 1\n\n/verify");
    assert_eq!(
        found("```\n/use 1\n```\n/use 2\n~~~\n/use 3\n~~~\n/verify"),
        vec![(4, "/use 2".to_string()), (8, "/verify".to_string())]
    );
    // A closing fence with a zero-width character does not close it.
    none("```\n/use 1\n\u{200B}```\n/use 2\n```");
    // Fences inside list items.
    none("- item\n  ```\n  /use 1\n  ```");
    none("- ```\n  /use 1\n  ```");
    none("1. a\n\n    ```\n   /use 1\n    ```");
    // `2.` continues a paragraph at top level but starts an item in a list.
    none("1. a\n2. ~~~\n   /use 1\n   ~~~");
    none("`\n2. ~~~<!--x\n\\\n/verify\n-->");
    // `2.` after an open item is the list's next item, not a paragraph
    // interruption (§5.3, example 283), so its fence closes at `   ~~~`.
    assert_eq!(
        texts("1. a\n2. ~~~\n   x\n   ~~~\n\n/verify"),
        vec!["/verify"]
    );
    // With a blank line before the item, the list reading is certain.
    assert_eq!(
        texts("1. a\n\n2. ~~~\n   x\n   ~~~\n\n/verify"),
        vec!["/verify"]
    );
}

#[test]
fn fenced_block_ends_with_its_list_item() {
    // The item's fence closes when the item ends, so this line is visible.
    assert_eq!(texts("- ```\n  code\n/verify"), vec!["/verify"]);
}

#[test]
fn inline_code() {
    none("`/use 1`");
    none("Run `\n/use 1` to pin.");
    none("``a ` b\n/use 1``");
    assert_eq!(texts("Use `code` here\n/use 1"), vec!["/use 1"]);
    // An unmatched backtick earlier in the paragraph might pair later: refused.
    none("It's a ` tick\n/use 1 `");
    assert_eq!(texts("It's a ` tick\n\n/use 1"), vec!["/use 1"]);
    // The whole argument text keeps inline code.
    assert_eq!(
        parse_comment("/ack-check 9 uses `--chat-template` as upstream")[0].result,
        Ok(Command::AckCheck {
            check: CheckNumber::new(9).unwrap(),
            reason: "uses `--chat-template` as upstream".into()
        })
    );
}

#[test]
fn block_quotes() {
    none("> /use 1");
    none(">/use 1");
    none("   > /use 1");
    none("> > /use 1");
    none("> > > nested\n> /use 1");
    none("> quoted text\n/use 1");
    none("> quoted text\nmore lazy text\n/use 1");
    // A lazy line of only a zero-width character is not blank.
    none("> quoted\n\u{200B}\n/use 1");
    assert_eq!(texts("> @bot /use 1 please\n\n/use 2"), vec!["/use 2"]);
    // Quotes inside (nested) list items, also deeper than 3 spaces.
    none("1. 2. > (\n  /verify");
    none("- \n\t>x\n/use 1");
    // Raw HTML left open inside a quote stays open after it.
    none("> <!-- start\n\n/use 1");
    none(">\t<!-- a\nb\nc -->\n> \n/verify");
    none("> <!--\n> a\nb -->\n\n/use 1");
    none("> <pre>x</pre>\n> a\n\"\n/verify");
    none("- a\n    <!-- x\n>\n/use 1");
    assert_eq!(texts("/use 1\n*\nx\n  ```\n/verify"), vec!["/use 1"]);
    assert_eq!(texts("> <!-- note -->\n\n/use 1"), vec!["/use 1"]);
    // A quoted fence does not continue past the quote.
    assert_eq!(texts("> ```\n/use 1"), vec!["/use 1"]);
    // Interrupting blocks end the lazy continuation.
    assert_eq!(texts("> a\n# Heading\n/use 1"), vec!["/use 1"]);
    assert_eq!(texts("> a\n---\n/use 1"), vec!["/use 1"]);
}

#[test]
fn html_comments() {
    none("<!-- /use 1 -->");
    none("<!--\n/use 1\n-->");
    none("<!--\n\n/use 1\n\n-->");
    none("<!-- a\n/use 1\n   still hidden -->");
    none("text <!-- hidden\n/use 1 -->");
    // An HTML block started after a quote hides across the blank line.
    none("> a\n<!--\n\n/use 1\n-->");
    // Unclosed at block level: hides the rest.
    none("<!--\n/use 1");
    assert_eq!(texts("<!-- note -->\n/use 1"), vec!["/use 1"]);
    assert_eq!(texts("<!--\nold: /use 1\n-->\n/verify"), vec!["/verify"]);
    // A same-line comment is not part of the arguments.
    assert_eq!(texts("/use 1 <!-- pinned by bot -->"), vec!["/use 1"]);
    // A comment closed on a later line still hides the rest of this line.
    assert_eq!(texts("/verify <!--\n/use 1\n-->"), vec!["/verify"]);
    // HTML comment then a fence: the fence wins in the paragraph reading.
    none("x <!--\n```\n-->\n/use 1\n```");
    none("<!--\n```\n-->\ntext\n```\n/use 1\n```");
}

#[test]
fn other_html() {
    none("<img alt=\"\n/use 1\n\">");
    none("<pre>\n/use 1\n</pre>");
    none("<code>\n/use 1\n</code>");
    none("a <code>\n/use 1</code>");
    none("<script>\n/use 1\n</script>\n\n/verify");
    none("<![CDATA[\n/use 1\n]]>");
    none("<?x\n/use 1\n?>");
    none("<div>\n<!--\n/use 1\n-->\n</div>");
    // A construct left open at the end of an HTML block hides the rest.
    none("<div title=\"\n\n/use 1");
    // Visible inside a details block.
    assert_eq!(
        texts("<details><summary>logs</summary>\n/use 1\n</details>"),
        vec!["/use 1"]
    );
    assert_eq!(texts("<code>x</code>\n\n/use 1"), vec!["/use 1"]);
    assert_eq!(texts("a <b>bold</b>\n/use 1"), vec!["/use 1"]);
    // Inside an HTML block, an element open at the line start hides it.
    none("<details>\n<code>\n/use 1</code>");
    // An indented `>` continuing a paragraph is text: the code span holds it.
    none("a ```\n\t>\n/use 1\nb ```");
    assert_eq!(
        texts("see <https://example.com/a`b>\n/use 1"),
        vec!["/use 1"]
    );
}

#[test]
fn links_and_images() {
    none("[a](\n/use)");
    none("[a](x \"\n/use 1\")");
    none("![\n/use 1](x.png)");
    none("[ref]:\n/verify");
    none("[ref]: https://x\n  \"\n/verify\n\"");
    assert_eq!(texts("[a](https://x)\n/use 1"), vec!["/use 1"]);
    assert_eq!(texts("text\n[a]:\n/use 1"), vec!["/use 1"]);
}

#[test]
fn pairing_that_differs_from_a_naive_reading() {
    // cmark pairs backticks left to right; a list item may or may not end the
    // paragraph; a tag that is not valid raw HTML leaves its backtick free.
    none("`a\n- b`\n/use `x`");
    none("<a /x `>\n/use 1`");
    none("a](x \"`\")\n/use 1`");
    // Block structure first: `===` makes `a `b` a heading, so the backtick
    // cannot pair across it (§4.3, example 91).
    assert_eq!(texts("a `b\n===\n/use 1`"), vec!["/use 1`"]);
    none("x\n2. `a\n/use 1`");
    assert_eq!(texts("a `b` c\n===\n/use 1"), vec!["/use 1"]);
}

#[test]
fn zero_width_characters() {
    // Hidden: the line does not start with `/`.
    none("\u{200B}/use 1");
    none("\u{200C}/use 1");
    none("\u{200D}/use 1");
    none("\u{2060}/use 1");
    none("x\n\u{FEFF}/use 1");
    // A zero-width character before a fence: not a fence (as on GitHub), and
    // backticks no string closes are literal (§6.1, example 347).
    assert_eq!(texts("\u{200B}```\n/use 1"), vec!["/use 1"]);
    // Visible commands are not broken by zero-width characters after the `/`.
    assert_eq!(parse_comment("/us\u{200B}e 1")[0].result, Ok(use_(1)));
    assert_eq!(
        parse_comment("/use \u{2060}1\u{200D}")[0].result,
        Ok(use_(1))
    );
    assert_eq!(
        parse_comment("/verify\u{200B}")[0].result,
        Ok(Command::Verify)
    );
    // A byte-order mark at the very start is dropped (cmark does the same).
    assert_eq!(parse_comment("\u{FEFF}/help")[0].result, Ok(Command::Help));
}

#[test]
fn line_endings() {
    let body = "Ready.\r\n/use 1\r\n\r\n```\r\n/use 2\r\n```\r\n/verify\r\n";
    assert_eq!(
        found(body),
        vec![(2, "/use 1".to_string()), (7, "/verify".to_string())]
    );
    let p = parse_comment(body);
    assert_eq!(&body[p[0].offset..p[0].offset + 6], "/use 1");
    assert_eq!(texts("a\r/use 1\r/help"), vec!["/use 1", "/help"]);
}

#[test]
fn offsets_point_at_the_slash() {
    let body = "hi\n\n   /stage-results 5\n";
    let p = parse_comment(body);
    assert_eq!(p[0].line, 3);
    assert_eq!(&body[p[0].offset..], "/stage-results 5\n");
}

#[test]
fn several_commands_in_one_comment() {
    let body = "/use 38614048439\n/stage-results\n\nthen\n/verify\n/help";
    let cmds: Vec<Command> = parse_comment(body)
        .into_iter()
        .map(|p| p.result.unwrap())
        .collect();
    assert_eq!(
        cmds,
        vec![
            use_(38614048439),
            Command::StageResults { run: None },
            Command::Verify,
            Command::Help
        ]
    );
}

// ---------------------------------------------------------------- words

#[test]
fn what_counts_as_a_command_word() {
    none("/usr/bin/env python3");
    none("/home/user/run.sh is broken");
    none("/use: 1");
    none("/use, 1");
    none("/ use 1");
    none("/42");
    none("/_x");
    let p = parse_comment("/deploy now");
    assert_eq!(
        p[0].result,
        Err(CommandError::Unknown {
            word: "deploy".into()
        })
    );
    assert!(p[0].result.as_ref().unwrap_err().is_unknown());
    let e = parse_comment("/reuse-sweep-runs")[0]
        .result
        .clone()
        .unwrap_err();
    assert!(e.is_unknown());
}

#[test]
fn commands_are_lowercase() {
    for body in ["/USE 1", "/Use 1", "/Verify", "/HELP"] {
        let e = parse_comment(body)[0].result.clone().unwrap_err();
        assert!(matches!(e, CommandError::WrongCase { .. }), "{body}: {e:?}");
    }
    assert_eq!(
        parse_comment("/Ack-Check 3 x")[0]
            .result
            .clone()
            .unwrap_err()
            .to_string(),
        "unknown command `/Ack-Check`; commands are lowercase: did you mean `/ack-check`?"
    );
}

#[test]
fn trailing_text_is_an_error_not_ignored() {
    let e = parse_comment("/use 38614048439 thanks!")[0]
        .result
        .clone()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "`/use` takes one run id; unexpected `thanks!`: `/use <run_id>`"
    );
    assert!(
        parse_comment("/verify please")
            .iter()
            .all(|p| p.result.is_err())
    );
    assert_eq!(
        parse_comment("/use 38614048439.")[0].result,
        Err(CommandError::BadRunId {
            command: CommandName::Use,
            got: "38614048439.".into()
        })
    );
    assert_eq!(
        parse_comment("/reuse-sweep-run #12")[0]
            .result
            .clone()
            .unwrap_err()
            .to_string(),
        "`/reuse-sweep-run`: the run id must be digits (the number in `.../actions/runs/<run_id>`), got `#12`: `/reuse-sweep-run [<run_id>]`"
    );
}

#[test]
fn ack_check_arguments() {
    let ok = |b: &str| parse_comment(b)[0].result.clone();
    assert!(ok("/ack-check 0 fine").is_ok());
    assert!(ok("/ack-check 17 fine").is_ok());
    assert_eq!(
        ok("/ack-check 18 fine"),
        Err(CommandError::BadCheck { got: "18".into() })
    );
    assert_eq!(
        ok("/ack-check x fine"),
        Err(CommandError::BadCheck { got: "x".into() })
    );
    assert_eq!(
        ok("/ack-check 256 fine"),
        Err(CommandError::BadCheck { got: "256".into() })
    );
    assert!(matches!(
        ok("/ack-check 4"),
        Err(CommandError::MissingReason { .. })
    ));
    assert_eq!(ok("/ack-check"), Err(CommandError::MissingCheck));
}

// ---------------------------------------------------------------- edits

#[test]
fn edited_comments_run_only_new_commands() {
    let new = |a: &str, b: &str| -> Vec<String> {
        new_in_edit(a, b)
            .into_iter()
            .map(|p| p.normalized)
            .collect()
    };
    assert!(new("/use 1", "/use 1").is_empty());
    assert!(new("/use 1", "/use 1\n\nEdit: typo fixed above").is_empty());
    assert_eq!(new("/use 1", "/use 2"), vec!["/use 2"]);
    assert_eq!(new("/verify", "/verify\n/verify"), vec!["/verify"]);
    assert_eq!(new("```\n/verify\n```", "/verify"), vec!["/verify"]);
    assert_eq!(
        new("/ack-check 3 a", "/ack-check 3 b"),
        vec!["/ack-check 3 b"]
    );
    assert!(new("/use 1\r\n", "/use  1\n").is_empty());
    // Removing a command runs nothing.
    assert!(new("/use 1\n/verify", "/verify").is_empty());
}

// ---------------------------------------------------------------- permissions

fn actor(login: &'static str, assoc: &str) -> Actor<'static> {
    Actor {
        login,
        association: AuthorAssociation::parse(Some(assoc)),
    }
}

fn facts(role: RepoRole) -> Facts<'static> {
    Facts {
        role,
        pr_author: Some("pr-author"),
        latest_signoff_author: Some("signer"),
    }
}

const ALL_ROLES: [RepoRole; 6] = [
    RepoRole::None,
    RepoRole::Read,
    RepoRole::Triage,
    RepoRole::Write,
    RepoRole::Maintain,
    RepoRole::Admin,
];

const ALL_ASSOC: [&str; 8] = [
    "OWNER",
    "MEMBER",
    "COLLABORATOR",
    "CONTRIBUTOR",
    "FIRST_TIME_CONTRIBUTOR",
    "FIRST_TIMER",
    "MANNEQUIN",
    "NONE",
];

#[test]
fn table_row_use_and_reuse() {
    for cmd in [use_(1), Command::ReuseSweepRun { run: None }] {
        for assoc in ALL_ASSOC {
            for role in ALL_ROLES {
                let allowed =
                    matches!(assoc, "OWNER" | "MEMBER" | "COLLABORATOR") && role >= RepoRole::Write;
                assert_eq!(
                    authorize(&cmd, actor("u", assoc), facts(role)).is_ok(),
                    allowed,
                    "{cmd} {assoc} {role}"
                );
            }
        }
    }
}

#[test]
fn payload_association_claiming_more_than_the_api_grants() {
    // The payload says OWNER, the API says the user only has triage.
    let r = authorize(&use_(1), actor("mallory", "OWNER"), facts(RepoRole::Triage)).unwrap_err();
    assert_eq!(r.command, CommandName::Use);
    assert_eq!(
        r.to_string(),
        "@mallory `/use` may be used only by repository owners, members and collaborators with the write, maintain or admin role; your repository role is triage."
    );
    // A MEMBER of the org with no role on this repository.
    assert!(authorize(&use_(1), actor("m", "MEMBER"), facts(RepoRole::None)).is_err());
    assert!(
        authorize(
            &Command::StageResults { run: None },
            actor("m", "OWNER"),
            facts(RepoRole::Read)
        )
        .is_err()
    );
}

#[test]
fn table_row_stage_results() {
    let cmd = Command::StageResults {
        run: Some(RunId(3)),
    };
    for assoc in ALL_ASSOC {
        for role in ALL_ROLES {
            assert_eq!(
                authorize(&cmd, actor("u", assoc), facts(role)).is_ok(),
                role >= RepoRole::Write,
                "{assoc} {role}"
            );
        }
    }
}

#[test]
fn table_row_verify() {
    for role in ALL_ROLES {
        assert_eq!(
            authorize(&Command::Verify, actor("u", "NONE"), facts(role)).is_ok(),
            role >= RepoRole::Write
        );
        // The latest sign-off author may always re-verify (case-insensitive).
        assert!(authorize(&Command::Verify, actor("Signer", "NONE"), facts(role)).is_ok());
    }
    let no_signoff = Facts {
        latest_signoff_author: None,
        ..facts(RepoRole::Read)
    };
    let r = authorize(&Command::Verify, actor("signer", "CONTRIBUTOR"), no_signoff).unwrap_err();
    assert!(
        r.to_string()
            .ends_with("you did not write the latest sign-off.")
    );
}

#[test]
fn table_row_ack_check() {
    let cmd = Command::AckCheck {
        check: CheckNumber::new(15).unwrap(),
        reason: "claims checked by hand".into(),
    };
    for role in ALL_ROLES {
        assert_eq!(
            authorize(&cmd, actor("maint", "MEMBER"), facts(role)).is_ok(),
            role >= RepoRole::Maintain,
            "{role}"
        );
    }
    let r = authorize(&cmd, actor("PR-Author", "OWNER"), facts(RepoRole::Admin)).unwrap_err();
    assert_eq!(
        r.to_string(),
        "@PR-Author `/ack-check` may be used only by users with the maintain or admin role other than the PR author; you are the author of this PR."
    );
}

#[test]
fn table_row_help() {
    for assoc in ALL_ASSOC {
        assert!(
            authorize(
                &Command::Help,
                actor("anyone", assoc),
                facts(RepoRole::None)
            )
            .is_ok()
        );
    }
}

#[test]
fn collaborator_permission_api_mapping() {
    // role_name wins; custom roles fall back to their legacy base permission.
    assert_eq!(
        RepoRole::from_api("write", Some("maintain")),
        RepoRole::Maintain
    );
    assert_eq!(RepoRole::from_api("admin", Some("admin")), RepoRole::Admin);
    assert_eq!(RepoRole::from_api("read", Some("triage")), RepoRole::Triage);
    assert_eq!(
        RepoRole::from_api("write", Some("benchmark-runner")),
        RepoRole::Write
    );
    assert_eq!(RepoRole::from_api("read", Some("auditor")), RepoRole::Read);
    assert_eq!(RepoRole::from_api("none", None), RepoRole::None);
    assert_eq!(RepoRole::from_api("", Some("")), RepoRole::None);
    // The REST example of the GitHub fixtures.
    let text = std::fs::read_to_string(data().join("github/rest/examples.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ex = &v["GET /repos/{owner}/{repo}/collaborators/{username}/permission"];
    let ex = ex
        .pointer("/responses/200/examples/response-if-user-has-admin-permissions")
        .or_else(|| find_key(ex, "response-if-user-has-admin-permissions"))
        .unwrap();
    let role = RepoRole::from_api(ex["permission"].as_str().unwrap(), ex["role_name"].as_str());
    assert_eq!(role, RepoRole::Admin);
}

fn find_key<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a serde_json::Value> {
    match v {
        serde_json::Value::Object(m) => m
            .get(key)
            .or_else(|| m.values().find_map(|x| find_key(x, key))),
        serde_json::Value::Array(a) => a.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

/// A source whose API call fails: the caller gets the error, not a decision.
struct Down;

#[derive(Debug, thiserror::Error)]
#[error("GitHub is down")]
struct DownError;

impl PermissionSource for Down {
    type Error = DownError;
    fn role_of<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a str,
    ) -> sweepgate_core::commands::RoleFuture<'a, DownError> {
        Box::pin(async { Err(DownError) })
    }
}

#[tokio::test]
async fn permission_source_is_consulted_and_errors_fail_closed() {
    let roles = FixedRoles::new([("nvpohanh", RepoRole::Write), ("reader", RepoRole::Read)]);
    let a = actor("nvpohanh", "COLLABORATOR");
    let r = authorize_with(&roles, "o", "r", &use_(38614048439), a, Some("x"), None).await;
    assert_eq!(r, Ok(Ok(())));
    let r = authorize_with(
        &roles,
        "o",
        "r",
        &use_(1),
        actor("reader", "COLLABORATOR"),
        None,
        None,
    )
    .await
    .unwrap();
    assert!(r.is_err());
    let src: &dyn PermissionSource<Error = DownError> = &Down;
    assert!(
        authorize_with(src, "o", "r", &use_(1), a, None, None)
            .await
            .is_err()
    );
    // `/help` needs no API call, so it works while GitHub is down.
    assert!(matches!(
        authorize_with(src, "o", "r", &Command::Help, a, None, None).await,
        Ok(Ok(()))
    ));
}

// ---------------------------------------------------------------- help

#[test]
fn help_lists_every_command_with_who_may_use_it() {
    let h = help_entries();
    let names: Vec<&str> = h.iter().map(|e| e.name).collect();
    assert_eq!(
        names,
        [
            "use",
            "reuse-sweep-run",
            "stage-results",
            "verify",
            "ack-check",
            "help"
        ]
    );
    for e in &h {
        assert!(e.syntax.starts_with(&format!("/{}", e.name)));
        assert!(!e.description.is_empty() && !e.who.is_empty());
    }
    assert_eq!(h[5].who, "anyone");
    // Refusals and help say the same thing about who may use a command.
    let r = authorize(
        &Command::StageResults { run: None },
        actor("x", "NONE"),
        facts(RepoRole::Read),
    )
    .unwrap_err();
    assert!(r.to_string().contains(h[2].who));
}

// ---------------------------------------------------------------- properties

#[derive(Debug, Clone)]
enum Block {
    Fence {
        ch: char,
        len: usize,
        info: String,
        lines: Vec<String>,
    },
    Para(Vec<String>),
    Quote(Vec<String>),
    Command,
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("/use 1".to_string()),
        Just("/verify".to_string()),
        Just("  /stage-results 9".to_string()),
        Just("/USE 2".to_string()),
        Just("/ack-check 3 ok".to_string()),
        Just("text with `code`".to_string()),
        Just("a lone ` tick".to_string()),
        Just("``".to_string()),
        Just("> quoted /use 1".to_string()),
        Just("- item".to_string()),
        Just("2. item".to_string()),
        Just("    indented".to_string()),
        Just("<!-- note -->".to_string()),
        Just("[link](https://x)".to_string()),
        Just("===".to_string()),
        Just("\u{200B}/use 3".to_string()),
        Just("/usr/bin/env".to_string()),
        "[a-z /`*_\\-\\[\\]()!#>]{0,12}",
    ]
}

/// Lines that can never close a fence of `ch` (no line starts with it).
fn fence_content(ch: char) -> impl Strategy<Value = String> {
    piece().prop_map(move |s| {
        if s.trim_start().starts_with(ch) || s.trim_start().starts_with('\u{200B}') {
            format!("x{s}")
        } else {
            s
        }
    })
}

fn block() -> impl Strategy<Value = Block> {
    let fence = (prop_oneof![Just('`'), Just('~')], 3usize..6, "[a-z]{0,4}").prop_flat_map(
        |(ch, len, info)| {
            prop::collection::vec(fence_content(ch), 0..5).prop_map(move |lines| Block::Fence {
                ch,
                len,
                info: info.clone(),
                lines,
            })
        },
    );
    prop_oneof![
        fence,
        prop::collection::vec(piece(), 1..4).prop_map(Block::Para),
        prop::collection::vec(piece(), 1..3).prop_map(Block::Quote),
        Just(Block::Command),
    ]
}

/// Builds the body; returns it, the byte ranges of fenced blocks and the
/// offsets of the standalone `/verify` commands.
fn render(blocks: &[Block], eol: &str) -> (String, Vec<(usize, usize)>, Vec<usize>) {
    let mut s = String::new();
    let mut fences = Vec::new();
    let mut cmds = Vec::new();
    for b in blocks {
        match b {
            Block::Fence {
                ch,
                len,
                info,
                lines,
            } => {
                let start = s.len();
                let marks: String = std::iter::repeat_n(*ch, *len).collect();
                s.push_str(&format!("{marks}{info}{eol}"));
                for l in lines {
                    s.push_str(l);
                    s.push_str(eol);
                }
                s.push_str(&marks);
                fences.push((start, s.len()));
                s.push_str(eol);
            }
            Block::Para(lines) => {
                for l in lines {
                    s.push_str(l);
                    s.push_str(eol);
                }
            }
            Block::Quote(lines) => {
                for l in lines {
                    s.push_str("> ");
                    s.push_str(l);
                    s.push_str(eol);
                }
            }
            Block::Command => {
                cmds.push(s.len());
                s.push_str("/verify");
                s.push_str(eol);
            }
        }
        s.push_str(eol);
    }
    (s, fences, cmds)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_text(body in "(?s).{0,300}") {
        let _ = parse_comment(&body);
        let _ = new_in_edit(&body, &format!("{body}\n/verify"));
    }

    #[test]
    fn never_panics_on_markdown_soup(
        parts in prop::collection::vec(
            prop_oneof![
                piece(),
                Just("```".to_string()), Just("~~~".to_string()), Just("<!--".to_string()),
                Just("-->".to_string()), Just("<div".to_string()), Just("\"".to_string()),
                Just("<code>".to_string()), Just("](".to_string()), Just("\r".to_string()),
                Just("\t".to_string()), Just("\u{FEFF}".to_string()), Just("é".to_string()),
            ],
            0..30,
        ),
        seps in prop::collection::vec(prop_oneof![Just(""), Just(" "), Just("\n"), Just("\r\n")], 30),
    ) {
        let mut body = String::new();
        for (p, s) in parts.iter().zip(seps.iter()) {
            body.push_str(p);
            body.push_str(s);
        }
        for p in parse_comment(&body) {
            // Every reported offset is a `/` at which the line starts visibly.
            prop_assert_eq!(body.as_bytes()[p.offset], b'/');
        }
    }

    #[test]
    fn nothing_inside_a_fence_and_standalone_commands_found(
        blocks in prop::collection::vec(block(), 0..8),
        crlf in any::<bool>(),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let (body, fences, cmds) = render(&blocks, eol);
        let parsed = parse_comment(&body);
        for p in &parsed {
            for &(a, b) in &fences {
                prop_assert!(!(a..b).contains(&p.offset), "command at {} inside fence {a}..{b}: {body:?}", p.offset);
            }
        }
        // A command alone in its paragraph is always found.
        for c in cmds {
            let hit = parsed.iter().find(|p| p.offset == c);
            prop_assert!(hit.is_some(), "missed /verify at {c}: {body:?}");
            prop_assert_eq!(hit.and_then(|p| p.command()), Some(&Command::Verify));
        }
    }
}
