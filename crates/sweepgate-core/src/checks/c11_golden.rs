//! Check 11 — Golden AL (`docs/rules.md` §2 Check 11, §1.3–§1.4,
//! `docs/contracts.md` §6): an agentic speculative-decoding config runs
//! simulated acceptance whose AL is the committed golden value for its
//! model, draft method, thinking mode and draft length K. SGLang's K comes
//! from `--speculative-num-steps` or, for DSpark, from
//! `--speculative-dspark-block-size`; a runner-injected length is accepted
//! when the configured injector for the framework takes it from the golden
//! curve. Synthetic acceptance on a non-agentic config fails (rule c).
use super::snapshot::ChangedKey;
use super::{CheckResult, Evidence, Snapshot, setting_values, strip_shell_comments};
use crate::config::RepoConfig;
use crate::recipe::golden::{
    self, Decoded, DraftMethod, DraftSampling, GoldenSet, Lookup, Query, ThinkingMode,
};

const N: u8 = 11;

/// What one key's launch says.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub method: DraftMethod,
    pub ks: Vec<u32>,
    pub sampling: Option<DraftSampling>,
    pub draft_model: Option<String>,
    pub thinking: Result<ThinkingMode, golden::ThinkingConflict>,
    /// The decoded encodings, with where they were found.
    pub encodings: Vec<(Decoded, String)>,
}

fn first(text: &str, names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| setting_values(text, n).into_iter().next().map(|v| v.0))
}

/// Reads a key's launch: its scripts and recipes (comments stripped) and
/// master-config settings.
pub(crate) fn launch(s: &Snapshot, k: &ChangedKey) -> Launch {
    let mut text = String::new();
    let mut where_: Vec<String> = Vec::new();
    for (p, t) in k.launch_texts(s) {
        text.push_str(&strip_shell_comments(t));
        text.push('\n');
        where_.push(p.to_owned());
    }
    let settings: Vec<String> = k.entry.settings().into_iter().map(|x| x.0).collect();
    for st in &settings {
        text.push_str(st);
        text.push('\n');
    }
    let spec_json: Option<golden::VllmSpecConfig> = setting_values(&text, "speculative-config")
        .into_iter()
        .chain(setting_values(&text, "speculative_config"))
        .find_map(|(v, _)| golden::VllmSpecConfig::parse(&v).ok());
    let method = first(
        &text,
        &["speculative-algorithm", "speculative-algo", "method"],
    )
    .map(|m| DraftMethod::parse(&m))
    .or_else(|| {
        spec_json
            .as_ref()
            .and_then(|j| j.method.as_deref())
            .map(DraftMethod::parse)
    })
    .unwrap_or(DraftMethod::Mtp);
    let mut ks: Vec<u32> = Vec::new();
    let mut push_k = |v: &str| {
        if let Ok(k) = v.trim().parse::<u32>()
            && !ks.contains(&k)
        {
            ks.push(k);
        }
    };
    let block = setting_values(&text, "speculative-dspark-block-size");
    if method == DraftMethod::DSpark && !block.is_empty() {
        for (v, _) in &block {
            push_k(v);
        }
    } else {
        for n in [
            "speculative-num-steps",
            "num-speculative-tokens",
            "max_draft_len",
            "NUM_SPEC_TOKENS",
        ] {
            for (v, _) in setting_values(&text, n) {
                push_k(&v);
            }
        }
        for (v, _) in &block {
            push_k(v);
        }
        if let Some(k) = spec_json.as_ref().and_then(|j| j.k) {
            push_k(&k.to_string());
        }
    }
    let draft_path = first(&text, &["speculative-draft-model-path"]);
    // SGLang runs a checkpoint's native MTP head as EAGLE (or NEXTN)
    // without a separate draft model.
    let method = match method {
        DraftMethod::Eagle if draft_path.is_none() && spec_json.is_none() => DraftMethod::Mtp,
        m => m,
    };
    let sampling = first(&text, &["draft_sample_method", "draft-sample-method"])
        .and_then(|v| DraftSampling::parse(&v))
        .or_else(|| {
            spec_json
                .as_ref()
                .and_then(golden::VllmSpecConfig::sampling)
        });
    let draft_model = draft_path.or_else(|| spec_json.as_ref().and_then(|j| j.model.clone()));
    let mut signals = Vec::new();
    for key in [
        "default-chat-template-kwargs",
        "DYN_DEFAULT_THINKING_MODE",
        "dyn-default-thinking-mode",
        "THINKING_MODE",
        "SGLANG_ENABLE_THINKING",
        "AIPERF_EXTRA_INPUTS",
    ] {
        for (v, _) in setting_values(&text, key) {
            if let Some(m) = golden::thinking_signal(key, &v) {
                signals.push(m);
            }
        }
    }
    let thinking = golden::resolve_thinking(signals);
    let mut encodings = Vec::new();
    let injectors = s.settings.golden_injectors();
    let injected = golden::runner_injected(
        k.entry.framework(),
        settings.iter().map(String::as_str),
        &injectors,
    );
    if injected != Decoded::NotSimulated {
        encodings.push((injected, format!("{} additional-settings", k.entry.file)));
    }
    let envs: Vec<(String, String)> = [
        "SGLANG_SIMULATE_ACC_LEN",
        "SGLANG_SIMULATE_ACC_METHOD",
        "SGLANG_SIMULATE_ACC_TOKEN_MODE",
    ]
    .iter()
    .flat_map(|n| {
        setting_values(&text, n)
            .into_iter()
            .map(move |(v, _)| ((*n).to_owned(), v))
    })
    .collect();
    let sg = golden::sglang_env(envs.iter().map(|(a, b)| (a.as_str(), b.as_str())));
    if sg != Decoded::NotSimulated {
        encodings.push((sg, where_.join(", ")));
    }
    if let Some(j) = &spec_json {
        let d = j.decoded();
        if d != Decoded::NotSimulated {
            encodings.push((d, where_.join(", ")));
        }
    }
    if let Some(v) = first(&text, &["TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"]) {
        encodings.push((golden::trtllm_env(&v), where_.join(", ")));
    }
    let len = first(&text, &["spec-decode-acceptance-length"]);
    let rate = first(&text, &["spec-decode-acceptance-rate"]);
    let atom = golden::atom_args(len.as_deref(), rate.as_deref(), ks.first().copied());
    if atom != Decoded::NotSimulated {
        encodings.push((atom, where_.join(", ")));
    }
    Launch {
        method,
        ks,
        sampling,
        draft_model,
        thinking,
        encodings,
    }
}

fn is_agentic(k: &ChangedKey) -> bool {
    k.entry.has_agentic()
        || k.files
            .iter()
            .any(|f| f.contains("/agentic/") || f.contains("/agentx"))
}

fn states_source(detail: &str) -> bool {
    let d = detail.to_ascii_lowercase();
    d.contains("golden") || d.contains("collection run") || d.contains("/actions/runs/")
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let spec: Vec<&ChangedKey> = facts.changed.iter().filter(|k| k.uses_spec(s)).collect();
    // (c) synthetic acceptance on a non-agentic config.
    for k in spec.iter().filter(|k| !is_agentic(k)) {
        let l = launch(s, k);
        if !l.encodings.is_empty() && !s.settings.synthetic_acceptance_allow.contains(&k.key) {
            return CheckResult::fail(
                N,
                format!(
                    "non-agentic {} uses synthetic acceptance ({}).",
                    k.key, l.encodings[0].1
                ),
            )
            .file(&k.entry.file, k.entry.line);
        }
    }
    let agentic: Vec<&ChangedKey> = spec.into_iter().filter(|k| is_agentic(k)).collect();
    if agentic.is_empty() {
        return CheckResult::na(N, "no agentic speculative-decoding changes.");
    }
    let dir = &cfg.paths.golden_al_dir;
    let files: Vec<(&str, &[u8])> = s
        .policy
        .iter()
        .filter(|(p, _)| p.starts_with(dir.as_str()))
        .map(|(p, t)| (p.as_str(), t.as_bytes()))
        .collect();
    let set = match GoldenSet::parse_files(files) {
        Ok(g) => g,
        Err(e) => return CheckResult::review(N, format!("a golden curve cannot be read: {e}.")),
    };
    let detail = s.detail_section();
    let mut ok: Vec<String> = Vec::new();
    let mut ev: Vec<Evidence> = Vec::new();
    for k in agentic {
        let l = launch(s, k);
        let mode = match l.thinking {
            Ok(m) => m,
            Err(_) => {
                return CheckResult::review(
                    N,
                    format!(
                        "{} carries both thinking-on and thinking-off signals; a person must pick the golden row.",
                        k.key
                    ),
                );
            }
        };
        let k_val = match l.ks.as_slice() {
            [one] => *one,
            [] => {
                return CheckResult::fail(
                    N,
                    format!(
                        "{} sets no draft length K; the golden AL cannot be chosen.",
                        k.key
                    ),
                )
                .file(&k.entry.file, k.entry.line);
            }
            many => {
                return CheckResult::review(
                    N,
                    format!(
                        "{} sets several draft lengths ({}); per-branch (K, AL) pairing needs a person.",
                        k.key,
                        many.iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        };
        if l.encodings.is_empty() {
            return CheckResult::fail(
                N,
                format!(
                    "{} runs real (unsimulated) acceptance ({}).",
                    k.key,
                    k.files.join(", ")
                ),
            )
            .file(&k.entry.file, k.entry.line);
        }
        let q = Query {
            prefix: k.entry.prefix(),
            method: l.method.clone(),
            sampling: l.sampling,
            draft_model: l.draft_model.as_deref(),
            mode,
            k: k_val,
        };
        let (curve, cell) = match set.lookup(&q) {
            Lookup::Found { curve, cell } => (curve, cell),
            miss => {
                let why = match miss {
                    Lookup::NoCurve(n) => format!("no golden curve ({n:?})"),
                    Lookup::NoCell { curve, missing } => {
                        format!("{} has no cell ({missing:?})", curve.name())
                    }
                    Lookup::Found { .. } => String::new(),
                };
                if states_source(&detail) {
                    return CheckResult::review(
                        N,
                        format!(
                            "{}: {why}; the sign-off states the AL source, a person must confirm it.",
                            k.key
                        ),
                    );
                }
                return CheckResult::fail(
                    N,
                    format!(
                        "{}: {why}, and the sign-off does not state the AL source.",
                        k.key
                    ),
                );
            }
        };
        let golden_txt = format!("{}@{mode}/K={k_val}={:.2}", curve.name(), cell.al);
        ev.push(Evidence::File {
            path: curve.file.clone(),
            line: cell.line,
        });
        for (d, src) in &l.encodings {
            match d {
                Decoded::Invalid(p) => {
                    return CheckResult::fail(N, format!("{}: {p} ({src}).", k.key))
                        .file(&k.entry.file, k.entry.line);
                }
                Decoded::Simulated(sim) => {
                    if let Some(p) = sim.problems.first() {
                        return CheckResult::fail(N, format!("{}: {p} ({src}).", k.key))
                            .file(&k.entry.file, k.entry.line);
                    }
                    if !sim.matches(cell.al) {
                        return CheckResult::fail(
                            N,
                            format!(
                                "{} pins {} but golden {} {mode} K={k_val} is {:.2} ({src}).",
                                k.key,
                                sim.written,
                                curve.name(),
                                cell.al
                            ),
                        )
                        .with_all(ev);
                    }
                    ok.push(format!(
                        "{} pins {:.2} = {golden_txt} ({src})",
                        k.key, sim.al
                    ));
                }
                Decoded::FromGolden { framework, .. } => {
                    let script = s
                        .settings
                        .injectors
                        .iter()
                        .find(|i| i.framework == *framework)
                        .map(|i| i.script.clone())
                        .unwrap_or_default();
                    let by = if script.is_empty() {
                        String::new()
                    } else {
                        format!(" by {script}")
                    };
                    ok.push(format!(
                        "{} gets {golden_txt} injected{by} from the golden curve (SYNTHETIC_ACCEPTANCE=true, framework {framework})",
                        k.key
                    ));
                }
                Decoded::NotSimulated => {}
            }
        }
    }
    CheckResult::pass(N, format!("{}.", ok.join("; "))).with_all(ev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::snapshot::ChangedFile;
    use crate::checks::{InjectorLength, InjectorSetting, Outcome};

    const GOLDEN: &str = "# Source GitHub Actions run: https://x/actions/runs/1\nm:\n  thinking_on:\n    2: 2.27\n    3: 2.49\n";

    fn snap(settings: &str, script: &str) -> Snapshot {
        let mut s = Snapshot::default();
        s.head_files.insert(
            "configs/nvidia-master.yaml".into(),
            format!("m-fp4-b200-sglang-agentic-mtp:\n  image: lmsysorg/sglang:v1\n  model-prefix: m\n  precision: fp4\n  framework: sglang\n  runner: b200\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - {{ tp: 8, conc-list: [4], spec-decoding: mtp{settings} }}\n"),
        );
        s.head_files.insert(
            "benchmarks/single_node/agentic/m_fp4_b200_mtp.sh".into(),
            script.into(),
        );
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s.policy
            .insert("golden_al_distribution/m_mtp.yaml".into(), GOLDEN.into());
        s
    }

    const ENV: &str = "export SGLANG_SIMULATE_ACC_METHOD=match-expected\nexport SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\n";

    #[test]
    fn golden_value_passes_and_wrong_value_fails() {
        let script = format!(
            "{ENV}export SGLANG_SIMULATE_ACC_LEN=2.49\npython3 -m sglang.launch_server --speculative-algorithm EAGLE --speculative-num-steps 3\n"
        );
        let r = check(&snap("", &script), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "m-fp4-b200-sglang-agentic-mtp pins 2.49 = m_mtp.yaml@thinking_on/K=3=2.49 (benchmarks/single_node/agentic/m_fp4_b200_mtp.sh)."
        );
        let script = script.replace("--speculative-num-steps 3", "--speculative-num-steps 2");
        let r = check(&snap("", &script), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "m-fp4-b200-sglang-agentic-mtp pins 2.49 but golden m_mtp.yaml thinking_on K=2 is 2.27 (benchmarks/single_node/agentic/m_fp4_b200_mtp.sh)."
        );
    }

    #[test]
    fn real_acceptance_and_incomplete_triple_fail() {
        let r = check(
            &snap(
                "",
                "python3 -m sglang.launch_server --speculative-num-steps 3\n",
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert!(
            r.reason.contains("runs real (unsimulated) acceptance"),
            "{}",
            r.reason
        );
        let r = check(
            &snap(
                "",
                "export SGLANG_SIMULATE_ACC_LEN=2.49\npython3 -m x --speculative-num-steps 3\n",
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert!(
            r.reason.contains("SGLANG_SIMULATE_ACC_METHOD is missing"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn injector_from_golden_curve_is_accepted_only_when_configured() {
        let settings = ", additional-settings: [\"SYNTHETIC_ACCEPTANCE=true\"]";
        let script = "python3 -m sglang.launch_server --speculative-num-steps 3\n";
        let r = check(&snap(settings, script), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail, "{}", r.reason);
        let mut s = snap(settings, script);
        s.settings.injectors = vec![InjectorSetting {
            framework: "sglang".into(),
            length: InjectorLength::GoldenCurve,
            script: "infx/srt_slurm/synthetic_acceptance.py".into(),
        }];
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert!(
            r.reason
                .contains("injected by infx/srt_slurm/synthetic_acceptance.py")
        );
    }

    #[test]
    fn non_spec_is_na() {
        let mut s = snap("", "python3 -m sglang.launch_server\n");
        let m = s.head_files["configs/nvidia-master.yaml"].replace(", spec-decoding: mtp", "");
        s.head_files.insert("configs/nvidia-master.yaml".into(), m);
        assert_eq!(
            check(&s, &RepoConfig::default()).outcome,
            Outcome::NotApplicable
        );
    }
}
