//! Whether a speculative-decoding benchmark script drives the chat template
//! (`docs/rules.md` §2 Check 9, §3 L25, §1.9): one detection that serves
//! the verdict's Check 9 and lint L25.

use super::facts::{ClientKind, ScriptFacts};

/// How a script's benchmark client reaches the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChatUse {
    /// Agentic replay (`build_replay_cmd`), or a client on
    /// `/v1/chat/completions` / `--endpoint-type chat`.
    ChatEndpoint,
    /// Every `run_benchmark_serving` passes `--use-chat-template` or `--dsv4`
    /// (`--dsv4` implies it, seed 001); the number of calls.
    ChatTemplate(usize),
    /// These `run_benchmark_serving` calls (lines) send raw prompts.
    RawCalls(Vec<usize>),
    /// An agentic script with no chat-endpoint client.
    RawAgentic,
    /// No benchmark client to inspect.
    NoClient,
}

/// The chat use of a script; `agentic` says whether it runs agentic replay.
pub(crate) fn chat_use(f: &ScriptFacts, text: &str, agentic: bool) -> ChatUse {
    let chat_endpoint = f
        .clients
        .iter()
        .any(|c| matches!(c.kind, ClientKind::BuildReplay | ClientKind::AgenticReplay))
        || text.lines().any(|l| {
            !l.trim_start().starts_with('#')
                && (l.contains("/v1/chat/completions") || l.contains("--endpoint-type chat"))
        });
    if agentic {
        return if chat_endpoint {
            ChatUse::ChatEndpoint
        } else {
            ChatUse::RawAgentic
        };
    }
    let calls: Vec<_> = f
        .clients
        .iter()
        .filter(|c| c.kind == ClientKind::BenchmarkServing)
        .collect();
    if calls.is_empty() {
        return if chat_endpoint {
            ChatUse::ChatEndpoint
        } else {
            ChatUse::NoClient
        };
    }
    let lines: Vec<&str> = text.lines().collect();
    let raw: Vec<usize> = calls
        .iter()
        .filter(|c| {
            !f.resolved_client_flags(c)
                .iter()
                .any(|rf| rf.flag.name == "--use-chat-template" || rf.flag.name == "--dsv4")
                && !substituted_chat_flag(&lines, c.line, c.end_line)
        })
        .map(|c| c.line)
        .collect();
    if raw.is_empty() {
        ChatUse::ChatTemplate(calls.len())
    } else {
        ChatUse::RawCalls(raw)
    }
}

/// A command substitution in the call that prints the flag, as the ATOM
/// MTP scripts write it: `$( [[ ${#SPEC_ARGS[@]} -gt 0 ]] && echo
/// "--use-chat-template" )` (`b6b5d78`, #1917,
/// `fixed_seq_len/minimaxm3_fp4_mi355x_atom_mtp.sh:78`): the speculative
/// runs pass it.
fn substituted_chat_flag(lines: &[&str], first: usize, last: usize) -> bool {
    let (a, b) = (first.saturating_sub(1), last.max(first).min(lines.len()));
    lines.get(a..b).unwrap_or_default().iter().any(|l| {
        let code = l.split(" #").next().unwrap_or(l);
        code.find("$(").is_some_and(|i| {
            let sub = &code[i..];
            sub.contains("echo") && (sub.contains("--use-chat-template") || sub.contains("--dsv4"))
        })
    })
}
