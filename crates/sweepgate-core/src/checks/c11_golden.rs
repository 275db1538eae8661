//! Check 11 — Golden AL (`docs/rules.md` §2 Check 11, §1.3–§1.4,
//! `docs/contracts.md` §6): an agentic speculative-decoding config runs
//! simulated acceptance whose AL is the committed golden value for its
//! model, draft method, thinking mode and draft length K. SGLang's K comes
//! from `--speculative-num-steps` or, for DSpark, from
//! `--speculative-dspark-block-size`; a runner-injected length is accepted
//! when the configured injector for the framework takes it from the golden
//! curve. Synthetic acceptance on a non-agentic config fails (rule c).
use super::snapshot::ChangedKey;
use super::{CheckResult, Evidence, Snapshot};
use crate::checks::lint::context::{parse_recipe_cached, parse_script_cached};
use crate::config::RepoConfig;
use crate::recipe::golden::served::{self, Judged, Served};
use crate::recipe::golden::{GoldenSet, ThinkingMode};

const N: u8 = 11;

/// What a key's launch serves: its scripts and recipes (head texts) and its
/// master-config settings, read the way lint L19 reads them
/// (`recipe::golden::served`).
pub(crate) fn served_of(s: &Snapshot, k: &ChangedKey) -> Served {
    let mut settings = Vec::new();
    for (p, t) in k.launch_texts(s) {
        if p.ends_with(".sh") {
            if let Ok(f) = parse_script_cached(p, t.as_bytes()) {
                settings.extend(served::script_settings(&f, t));
            }
        } else if (p.ends_with(".yaml") || p.ends_with(".yml"))
            && let Ok(r) = parse_recipe_cached(p, t.as_bytes())
        {
            settings.extend(served::recipe_settings(&r));
        }
    }
    let master = served::master_settings(&k.entry.file, &k.entry.settings());
    served::served(
        &settings,
        &master,
        k.entry.framework(),
        &s.settings.golden_injectors(),
    )
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
        let l = served_of(s, k);
        if let Some(e) = l.encodings.first()
            && !s.settings.synthetic_acceptance_allow.contains(&k.key)
        {
            return CheckResult::fail(
                N,
                format!(
                    "non-agentic {} uses synthetic acceptance ({}:{}).",
                    k.key, e.file, e.line
                ),
            )
            .subject(k.key.clone())
            .file(&e.file, e.line);
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
    let mut review: Option<CheckResult> = None;
    for k in agentic {
        let l = served_of(s, k);
        let Ok(mode) = l.thinking else {
            review.get_or_insert(CheckResult::review(
                N,
                format!(
                    "{} carries both thinking-on and thinking-off signals; a person must pick the golden row.",
                    k.key
                ),
            ));
            continue;
        };
        if k.files.is_empty() {
            review.get_or_insert(CheckResult::review(
                N,
                format!(
                    "no script or recipe of {} is in the assessed files, so its simulated acceptance cannot be read.",
                    k.key
                ),
            ));
            continue;
        }
        if l.encodings.is_empty() {
            if let Some((file, line)) = l.unreadable.first() {
                review.get_or_insert(
                    CheckResult::review(
                        N,
                        format!(
                            "{}: the speculative config at {file}:{line} is built at run time; a person must confirm it simulates the golden AL.",
                            k.key
                        ),
                    )
                    .file(file, *line),
                );
                continue;
            }
            return CheckResult::fail(
                N,
                format!(
                    "{} runs real (unsimulated) acceptance ({}).",
                    k.key,
                    k.files.join(", ")
                ),
            )
            .subject(k.key.clone())
            .file(&k.entry.file, k.entry.line);
        }
        let thinking_on = served::judge(&l, k.entry.prefix(), ThinkingMode::On, &set);
        for j in served::judge(&l, k.entry.prefix(), mode, &set) {
            let at = format!("{}:{}", j.file, j.line);
            // Thinking off with the thinking_on value pinned: which row the
            // benchmark should use is for a person (docs/rules.md Check 11).
            if mode == ThinkingMode::Off
                && matches!(j.judged, Judged::Mismatch { .. })
                && thinking_on.iter().any(|o| {
                    o.file == j.file && o.line == j.line && matches!(o.judged, Judged::Match { .. })
                })
            {
                review.get_or_insert(
                    CheckResult::review(
                        N,
                        format!(
                            "{} runs with thinking off but pins the thinking_on golden AL ({at}); a person must confirm which row applies.",
                            k.key
                        ),
                    )
                    .file(&j.file, j.line),
                );
                continue;
            }
            match j.judged {
                Judged::Mismatch {
                    k: kv,
                    written,
                    golden_al,
                    curve,
                    curve_file,
                    curve_line,
                    mode,
                } => {
                    return CheckResult::fail(
                        N,
                        format!(
                            "{} pins {written} but golden {curve} {mode} K={kv} is {golden_al:.2} ({}).",
                            k.key, j.file
                        ),
                    ).subject(k.key.clone())
                    .file(&j.file, j.line)
                    .with(Evidence::File {
                        path: curve_file,
                        line: curve_line,
                    });
                }
                Judged::Problem(p) => {
                    return CheckResult::fail(N, format!("{}: {p} ({}).", k.key, j.file))
                        .subject(k.key.clone())
                        .file(&j.file, j.line);
                }
                Judged::NoGolden(why) => {
                    if !states_source(&detail) {
                        return CheckResult::fail(
                            N,
                            format!(
                                "{}: {why}, and the sign-off does not state the AL source ({at}).",
                                k.key
                            ),
                        )
                        .subject(k.key.clone())
                        .file(&j.file, j.line);
                    }
                    review.get_or_insert(
                        CheckResult::review(
                            N,
                            format!(
                                "{}: {why}; the sign-off states the AL source, a person must confirm it.",
                                k.key
                            ),
                        )
                        .file(&j.file, j.line),
                    );
                }
                Judged::Unresolved(p) => {
                    review.get_or_insert(
                        CheckResult::review(
                            N,
                            format!("{}: {p} ({at}); the value is only known at run time, a person must confirm it is the golden AL.", k.key),
                        )
                        .file(&j.file, j.line),
                    );
                }
                Judged::NoK => {
                    review.get_or_insert(
                        CheckResult::review(
                            N,
                            format!("{}: the draft length K of the simulated AL at {at} cannot be read; a person must pick the golden cell.", k.key),
                        )
                        .file(&j.file, j.line),
                    );
                }
                Judged::Ambiguous(ks) => {
                    review.get_or_insert(
                        CheckResult::review(
                            N,
                            format!(
                                "{} sets several draft lengths ({}) that can apply to the AL at {at}; per-branch (K, AL) pairing needs a person.",
                                k.key,
                                ks.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                            ),
                        )
                        .file(&j.file, j.line),
                    );
                }
                Judged::Match { al, golden, .. } => {
                    ev.push(Evidence::File {
                        path: j.file.clone(),
                        line: j.line,
                    });
                    let line = format!("{} pins {al:.2} = {golden} ({})", k.key, j.file);
                    if !ok.contains(&line) {
                        ok.push(line);
                    }
                }
                Judged::FromGolden {
                    golden, framework, ..
                } => {
                    let script = s
                        .settings
                        .injectors
                        .iter()
                        .find(|i| i.framework == framework)
                        .map(|i| i.script.clone())
                        .unwrap_or_default();
                    let by = if script.is_empty() {
                        String::new()
                    } else {
                        format!(" by {script}")
                    };
                    ok.push(format!(
                        "{} gets {golden} injected{by} from the golden curve (SYNTHETIC_ACCEPTANCE=true, framework {framework})",
                        k.key
                    ));
                }
            }
        }
    }
    if let Some(r) = review {
        return r;
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
