//! Check 9 — Chat template (`docs/rules.md` §2 Check 9, §1.9): a
//! speculative-decoding benchmark must drive the chat template, so its AL
//! distribution matches real traffic. Fixed-length scripts pass
//! `--use-chat-template` (or `--dsv4`) to every `run_benchmark_serving`;
//! agentic replay targets `/v1/chat/completions` by construction; srt-slurm
//! recipes say so with `benchmark.use_chat_template` or a benchmark type
//! that replays on the chat endpoint (settings).
use super::snapshot::has_spec_marker;
use super::snapshot::{ChangeKind, ChangedKey};
use super::{CheckResult, Snapshot, strip_shell_comments};
use crate::checks::lint::context::parse_script_cached;
use crate::config::RepoConfig;
use crate::recipe::script::{ChatUse, chat_use};
use crate::recipe::yaml;

const N: u8 = 9;

enum Verdict {
    Ok(String),
    Fail(String, String, usize),
    Review(String),
}

/// The detection lint L25 uses (`recipe::script::chat_use`).
fn script(key: &ChangedKey, path: &str, text: &str) -> Verdict {
    let agentic = path.contains("/agentic/") || key.entry.has_agentic() && !key.entry.has_fixed();
    // The key's other arm (`spec-decoding: none`) runs a script without
    // speculative decoding: nothing to judge there (lint L25 skips it too).
    let named_mtp = path.trim_end_matches(".sh").ends_with("_mtp");
    if !named_mtp && !has_spec_marker(&strip_shell_comments(text)) {
        return Verdict::Ok(format!("{path} runs no speculative decoding"));
    }
    let Ok(f) = parse_script_cached(path, text.as_bytes()) else {
        return Verdict::Review(format!("{path} cannot be read as a shell script"));
    };
    match chat_use(&f, text, agentic) {
        ChatUse::ChatEndpoint => Verdict::Ok(format!("{path} replays on the chat endpoint")),
        ChatUse::ChatTemplate(_) => Verdict::Ok(format!("{path} passes --use-chat-template")),
        ChatUse::RawAgentic => Verdict::Fail(
            format!(
                "{} drives raw completions: {path} has no chat-endpoint client (build_replay_cmd).",
                key.key
            ),
            path.to_owned(),
            0,
        ),
        ChatUse::RawCalls(lines) => {
            let line = lines.first().copied().unwrap_or(0);
            Verdict::Fail(
                format!(
                    "{} drives raw completions: {path}:{line} lacks --use-chat-template.",
                    key.key
                ),
                path.to_owned(),
                line,
            )
        }
        ChatUse::NoClient => Verdict::Review(format!(
            "{path} has no run_benchmark_serving call to inspect"
        )),
    }
}

fn recipe(s: &Snapshot, key: &ChangedKey, path: &str, text: &str) -> Verdict {
    let Ok(root) = yaml::parse_plain(path, text.as_bytes()) else {
        return Verdict::Review(format!("{path} cannot be parsed"));
    };
    let bench = root.get("benchmark");
    let ty = bench
        .and_then(|b| b.get("type"))
        .and_then(|t| t.as_str())
        .unwrap_or("");
    match bench
        .and_then(|b| b.get("use_chat_template"))
        .and_then(|v| v.as_bool())
    {
        Some(true) => return Verdict::Ok(format!("{path} sets benchmark.use_chat_template: true")),
        Some(false) => {
            let line = bench
                .and_then(|b| b.get("use_chat_template"))
                .map_or(0, |n| n.line());
            return Verdict::Fail(
                format!(
                    "{} drives raw completions: {path}:{line} sets use_chat_template: false.",
                    key.key
                ),
                path.to_owned(),
                line,
            );
        }
        None => {}
    }
    if s.settings
        .chat_endpoint_benchmark_types
        .iter()
        .any(|t| t == ty)
    {
        return Verdict::Ok(format!("{path} runs {ty} replay on the chat endpoint"));
    }
    if ty == "sa-bench" {
        return match s.settings.sa_bench_chat_template_default {
            Some(true) => Verdict::Ok(format!(
                "{path} relies on the sa-bench chat-template default"
            )),
            Some(false) => Verdict::Fail(
                format!(
                    "{} drives raw completions: {path} (sa-bench without use_chat_template).",
                    key.key
                ),
                path.to_owned(),
                0,
            ),
            None => Verdict::Review(format!(
                "{path} (sa-bench) does not set benchmark.use_chat_template and the srt-slurm default is unknown"
            )),
        };
    }
    Verdict::Review(format!(
        "{path} has benchmark type `{ty}` with no chat-template setting"
    ))
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let keys: Vec<_> = facts.changed.iter().filter(|k| k.uses_spec(s)).collect();
    if keys.is_empty() {
        return CheckResult::na(N, "no speculative-decoding changes.");
    }
    let mut ok: Vec<String> = Vec::new();
    let mut review: Vec<String> = Vec::new();
    for k in keys {
        let texts = k.launch_texts(s);
        if texts.is_empty() {
            if k.entry.has_agentic() && !k.entry.has_fixed() {
                ok.push(format!(
                    "{} is agentic replay, which uses the chat endpoint",
                    k.key
                ));
            } else {
                review.push(format!(
                    "no benchmark script or recipe of {} was found",
                    k.key
                ));
            }
            continue;
        }
        for (path, text) in texts {
            let v = if path.ends_with(".yaml") || path.ends_with(".yml") {
                recipe(s, k, path, text)
            } else {
                script(k, path, text)
            };
            match v {
                Verdict::Ok(m) => ok.push(m),
                Verdict::Review(m) => review.push(m),
                // A PR is judged on what it changes: a raw-completions
                // script it neither touches nor newly runs (a key it adds)
                // was there before (`247177b`, #1201, changes
                // `qwen3.5-fp8-mi355x-atom-mtp` but not its script); lint
                // L25 is silent there too.
                Verdict::Fail(_, p, _)
                    if k.kind != ChangeKind::Added && !s.files.iter().any(|f| f.path == p) =>
                {
                    ok.push(format!("{p} is unchanged by this PR"));
                }
                Verdict::Fail(m, p, l) => {
                    return CheckResult::fail(N, m).subject(p.clone()).file(&p, l);
                }
            }
        }
    }
    if !review.is_empty() {
        return CheckResult::review(
            N,
            format!(
                "{}; a person must confirm the chat template.",
                review.join("; ")
            ),
        );
    }
    CheckResult::pass(
        N,
        format!(
            "spec-decode benchmarks use chat templates: {}.",
            ok.join("; ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::ChangedFile;

    const MASTER: &str = "m-fp8-b200-sglang:\n  image: lmsysorg/sglang:v1\n  model-prefix: m\n  precision: fp8\n  framework: sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4], spec-decoding: mtp }\n";

    fn snap(script: &str) -> Snapshot {
        let mut s = Snapshot::default();
        s.head_files
            .insert("configs/nvidia-master.yaml".into(), MASTER.into());
        s.head_files.insert(
            "benchmarks/single_node/fixed_seq_len/m_fp8_b200_mtp.sh".into(),
            script.into(),
        );
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s
    }

    #[test]
    fn chat_template_flag_passes_and_missing_fails() {
        let r = check(
            &snap("run_benchmark_serving \\\n  --model x \\\n  --use-chat-template\n"),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        let r = check(
            &snap("x=1\nrun_benchmark_serving \\\n  --model x\n"),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "m-fp8-b200-sglang drives raw completions: benchmarks/single_node/fixed_seq_len/m_fp8_b200_mtp.sh:2 lacks --use-chat-template."
        );
    }

    /// The flag held in an array, as lint L25 reads it (one detection):
    /// the row and the lint agree.
    #[test]
    fn chat_template_flag_through_an_array_passes() {
        let r = check(
            &snap(
                "BENCH_ARGS=(--use-chat-template)\nrun_benchmark_serving \\\n  --model x \\\n  \"${BENCH_ARGS[@]}\"\n",
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
    }

    /// History `cb589c0` (#2470): `minimaxm3-fp4-b300-vllm` declares a
    /// `spec-decoding` other than `mtp`, so it runs the plain script
    /// (`fixed_seq_len/minimaxm3_fp4_b300.sh:81`), which has no speculative
    /// decoding and needs no chat template (lint L25 agrees).
    #[test]
    fn a_script_without_speculative_decoding_is_not_judged() {
        let mut s = snap("");
        s.head_files.clear();
        s.head_files.insert(
            "configs/nvidia-master.yaml".into(),
            MASTER.replace("spec-decoding: mtp", "spec-decoding: draft_model"),
        );
        s.head_files.insert(
            "benchmarks/single_node/fixed_seq_len/m_fp8_b200.sh".into(),
            "x=1\nrun_benchmark_serving --model x\n".into(),
        );
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert!(
            r.reason.contains("runs no speculative decoding"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn no_spec_is_na() {
        let mut s = snap("run_benchmark_serving --model x\n");
        let m = MASTER.replace(", spec-decoding: mtp", "");
        s.head_files.insert("configs/nvidia-master.yaml".into(), m);
        assert_eq!(
            check(&s, &RepoConfig::default()).outcome,
            Outcome::NotApplicable
        );
    }
}
