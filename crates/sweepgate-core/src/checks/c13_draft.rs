//! Check 13 — Draft precision (`docs/rules.md` §2 Check 13): the draft
//! model or head of a speculative-decoding config is served at its shipped
//! precision. A knob that re-quantizes the draft fails, naming file and
//! line; kernel selectors (`--speculative-moe-runner-backend`, …) are fine;
//! a draft loaded from a separate path is REVIEW (its shipped precision
//! needs a person).
use super::snapshot::ChangedKey;
use super::{CheckResult, Snapshot, setting_values, strip_shell_comments};
use crate::config::RepoConfig;
use crate::recipe::golden::served;
use crate::recipe::script::parse_script;
use crate::recipe::srt::parse_recipe;

const N: u8 = 13;

/// The first draft-precision override of a key's launch: the detection
/// lint L24 uses, over the key's scripts, recipes (every role) and
/// master-config settings.
fn override_in(s: &Snapshot, k: &ChangedKey) -> Option<(String, usize, String)> {
    let mut settings = Vec::new();
    for (p, t) in k.launch_texts(s) {
        if p.ends_with(".sh") {
            if let Ok(f) = parse_script(p, t.as_bytes()) {
                settings.extend(served::script_settings(&f, t));
            }
        } else if let Ok(r) = parse_recipe(p, t.as_bytes()) {
            settings.extend(served::recipe_settings_all_roles(&r));
        }
    }
    settings.extend(served::master_settings(&k.entry.file, &k.entry.settings()));
    served::draft_overrides(&settings)
        .into_iter()
        .next()
        .map(|o| (o.file, o.line, o.knob))
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let keys: Vec<&ChangedKey> = facts.changed.iter().filter(|k| k.uses_spec(s)).collect();
    if keys.is_empty() {
        return CheckResult::na(N, "no speculative-decoding changes.");
    }
    let mut separate: Vec<String> = Vec::new();
    for k in &keys {
        if let Some((path, line, knob)) = override_in(s, k) {
            return CheckResult::fail(
                N,
                format!("{path}:{line} overrides draft precision ({knob})."),
            )
            .subject(knob.clone())
            .file(&path, line);
        }
        for (p, t) in k.launch_texts(s) {
            if let Some((v, _)) =
                setting_values(&strip_shell_comments(t), "speculative-draft-model-path")
                    .into_iter()
                    .next()
                && !v.starts_with('$')
                && v != k.entry.model()
            {
                separate.push(format!("{} loads draft {v} ({p})", k.key));
            }
        }
    }
    if !separate.is_empty() {
        return CheckResult::review(
            N,
            format!(
                "{}; a person must confirm it is served at its shipped precision.",
                separate.join("; ")
            ),
        );
    }
    let names: Vec<String> = keys.iter().map(|k| k.key.clone()).collect();
    CheckResult::pass(
        N,
        format!(
            "draft heads served at shipped precision: no draft quantization or NEXTN override in {}.",
            names.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::ChangedFile;

    fn snap(recipe: &str) -> Snapshot {
        let mut s = Snapshot::default();
        s.head_files.insert(
            "configs/nvidia-master.yaml".into(),
            "q-fp4-gb300-dynamo-sglang-mtp:\n  image: lmsysorg/sglang:v1\n  model: org/Q\n  model-prefix: q\n  precision: fp4\n  framework: dynamo-sglang\n  runner: gb300\n  multinode: true\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - { conc-list: [4], spec-decoding: mtp, additional-settings: [\"CONFIG_FILE=recipes/sglang/q/agentic/r.yaml\"] }\n".into(),
        );
        s.head_files.insert(
            "benchmarks/multi_node/srt-slurm-recipes/sglang/q/agentic/r.yaml".into(),
            recipe.into(),
        );
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s
    }

    #[test]
    fn nextn_env_fails_with_line() {
        let r = check(
            &snap(
                "decode_environment:\n  SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'\nsglang_config:\n  speculative-algorithm: EAGLE\n",
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "benchmarks/multi_node/srt-slurm-recipes/sglang/q/agentic/r.yaml:2 overrides draft precision (SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1)."
        );
    }

    #[test]
    fn kernel_selector_passes() {
        let r = check(
            &snap(
                "sglang_config:\n  speculative-algorithm: EAGLE\n  speculative-moe-runner-backend: flashinfer\n",
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
    }
}
