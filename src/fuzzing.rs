//! The body of the `webhook` fuzz target (`fuzz/fuzz_targets/webhook.rs`)
//! and the table of every target; the parser targets' bodies are
//! `sweepgate_core::fuzzing`. Compiled only with the `fuzzing` feature, for
//! the fuzz package and the corpus replay test.
use crate::events::{self, Disposition, PayloadError};
use sweepgate_core::fuzzing::{self as core, Body, assert_line};

/// Every target, by the name of its directory under `fuzz/corpus/`.
pub const TARGETS: &[(&str, Body)] = &[
    ("webhook", webhook),
    ("commands", core::commands),
    ("signoff", core::signoff),
    ("recipe_yaml", core::recipe_yaml),
    ("recipe_text", core::recipe_text),
    ("codeowners", core::codeowners),
    ("script", core::script),
];

/// Event names the first byte of a `webhook` input selects from (modulo the
/// length): every kind `events::parse` reads, and one it does not.
pub(crate) const WEBHOOK_EVENTS: &[&str] = &[
    "pull_request",
    "issue_comment",
    "pull_request_review",
    "pull_request_review_comment",
    "check_run",
    "workflow_run",
    "workflow_job",
    "repository_dispatch",
    "push",
    "installation",
    "installation_repositories",
    "ping",
    "star",
];

/// `events::parse` under the event name the first byte selects. A JSON
/// error names a line of the body; a known event always yields its typed
/// event, whose pull request is the envelope's.
pub(crate) fn webhook(data: &[u8]) {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let event = WEBHOOK_EVENTS[usize::from(sel) % WEBHOOK_EVENTS.len()];
    match events::parse(event, body) {
        Ok((envelope, ev)) => {
            let known = event != "star";
            assert_eq!(ev.is_some(), known, "{event}");
            if let Some(ev) = &ev {
                assert_eq!(ev.pr_number(), envelope.pr_number);
                let _ = ev.head_sha();
            }
            if let Disposition::Handle { kind } =
                events::disposition(event, envelope.action.as_deref())
            {
                assert!(kind.starts_with(event), "{kind}");
            }
            let _ = envelope.serial_key();
        }
        Err(PayloadError::Json { line, .. }) => assert_line("JSON error", line, body),
        Err(PayloadError::NotAnObject { .. } | PayloadError::Shape { .. }) => {}
    }
}
