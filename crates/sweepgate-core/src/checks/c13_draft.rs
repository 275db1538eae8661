//! Check 13 — Draft precision (`docs/rules.md` §2 Check 13): the draft
//! model or head of a speculative-decoding config is served at its shipped
//! precision. A knob that re-quantizes the draft fails, naming file and
//! line; kernel selectors (`--speculative-moe-runner-backend`, …) are fine;
//! a draft loaded from a separate path is REVIEW (its shipped precision
//! needs a person).
use super::snapshot::ChangedKey;
use super::{CheckResult, Snapshot, setting_values, strip_shell_comments};
use crate::checks::lint::context::{parse_recipe_cached, parse_script_cached};
use crate::config::RepoConfig;
use crate::recipe::golden::served;

const N: u8 = 13;

/// Draft-precision overrides of a launch text (the detection lint L24 uses).
fn overrides_of(p: &str, t: &str) -> Vec<served::DraftOverride> {
    let settings = if p.ends_with(".sh") {
        parse_script_cached(p, t.as_bytes())
            .map(|f| served::script_settings(&f, t))
            .unwrap_or_default()
    } else {
        parse_recipe_cached(p, t.as_bytes())
            .map(|r| served::recipe_settings_all_roles(&r))
            .unwrap_or_default()
    };
    served::draft_overrides(&settings)
}

/// An override found: file, line, knob.
type Found = (String, usize, String);

/// The first draft-precision override of a key's launch that the PR
/// introduces, over the key's scripts, recipes (every role) and
/// master-config settings; else the first one the base already had.
/// A file the PR does not change keeps its overrides; a changed one keeps
/// as many of each knob as its base version (a renamed file's previous
/// path: `15b9a8d`, #2477, renames a recipe that set the NEXTN knob on
/// main already) had, as lint L24's fingerprints match them.
fn override_in(
    s: &Snapshot,
    k: &ChangedKey,
    base_entry: Option<&crate::checks::snapshot::MasterEntry>,
) -> (Option<Found>, Option<Found>) {
    let mut new = None;
    let mut old = None;
    let mut judge = |head: Vec<served::DraftOverride>, base: Vec<served::DraftOverride>| {
        let mut left: Vec<String> = base.into_iter().map(|o| o.knob).collect();
        for o in head {
            let slot = if let Some(i) = left.iter().position(|b| *b == o.knob) {
                left.swap_remove(i);
                &mut old
            } else {
                &mut new
            };
            if slot.is_none() {
                *slot = Some((o.file, o.line, o.knob));
            }
        }
    };
    for (p, t) in k.launch_texts(s) {
        let head = overrides_of(p, t);
        let changed = s.files.iter().find(|f| f.path == p);
        let base = match changed {
            None => head.clone(),
            Some(f) => s
                .base_files
                .get(p)
                .or_else(|| f.previous_path.as_ref().and_then(|q| s.base_files.get(q)))
                .map(|b| overrides_of(p, b))
                .unwrap_or_default(),
        };
        judge(head, base);
    }
    let head =
        served::draft_overrides(&served::master_settings(&k.entry.file, &k.entry.settings()));
    let base = base_entry.map_or_else(Vec::new, |b| {
        served::draft_overrides(&served::master_settings(&b.file, &b.settings()))
    });
    judge(head, base);
    (new, old)
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let keys: Vec<&ChangedKey> = facts.changed.iter().filter(|k| k.uses_spec(s)).collect();
    if keys.is_empty() {
        return CheckResult::na(N, "no speculative-decoding changes.");
    }
    let mut separate: Vec<String> = Vec::new();
    let mut kept: Vec<String> = Vec::new();
    for k in &keys {
        let (new, old) = override_in(s, k, facts.masters_base.get(&k.key));
        if let Some((path, line, knob)) = new {
            return CheckResult::fail(
                N,
                format!("{path}:{line} overrides draft precision ({knob})."),
            )
            .subject(knob.clone())
            .file(&path, line);
        }
        if let Some((path, line, knob)) = old {
            kept.push(format!("{path}:{line} ({knob}, already on the base)"));
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
    if !kept.is_empty() {
        return CheckResult::pass(
            N,
            format!(
                "no draft-precision override introduced in {}; pre-existing: {}.",
                names.join(", "),
                kept.join("; ")
            ),
        );
    }
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
        s.files = vec![
            ChangedFile {
                path: "configs/nvidia-master.yaml".into(),
                status: "added".into(),
                ..Default::default()
            },
            ChangedFile {
                path: "benchmarks/multi_node/srt-slurm-recipes/sglang/q/agentic/r.yaml".into(),
                status: "added".into(),
                ..Default::default()
            },
        ];
        s
    }

    #[test]
    fn an_override_the_base_had_is_not_the_prs() {
        let recipe = "decode_environment:\n  SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'\nsglang_config:\n  speculative-algorithm: EAGLE\n";
        let mut s = snap(recipe);
        // Renamed from a recipe that set the knob on the base (`15b9a8d`).
        s.files[1].status = "renamed".into();
        s.files[1].previous_path =
            Some("benchmarks/multi_node/srt-slurm-recipes/sglang/q/agentic/old.yaml".into());
        s.base_files.insert(
            "benchmarks/multi_node/srt-slurm-recipes/sglang/q/agentic/old.yaml".into(),
            format!("# older\n{recipe}"),
        );
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert!(r.reason.contains("already on the base"), "{}", r.reason);
        // Without the base's copy it is the PR's own.
        s.base_files.clear();
        assert_eq!(check(&s, &RepoConfig::default()).outcome, Outcome::Fail);
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
