//! One failing and one passing fixture per lint rule. Each case is the
//! shared `world/` plus fixture files from `tests/fixtures/lint/rules/`
//! (each citing the seed or catalogue line it models).

use crate::lint_support as support;

use sweepgate_core::checks::lint::Severity::{self, Error, Info, Warning};
use sweepgate_core::checks::lint::{Finding, lint};

const MASTER: &str = "configs/nvidia-master.yaml.append";
const FIXED: &str = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh";
const FIXED_MTP: &str = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_mtp.sh";
const AGENTIC_MTP: &str = "benchmarks/single_node/agentic/dsv4_fp8_h200_mtp.sh";
const RECIPES: &str = "benchmarks/multi_node/srt-slurm-recipes/";

/// World + overlays `(repository path, fixture file or inline text)`.
fn case_with(
    overlays: &[(&str, &str)],
    base_extra: &[(&str, &str)],
    pr: Option<u64>,
) -> Vec<Finding> {
    let (mut base, _, _) = support::trees("world-only");
    for (dest, src) in base_extra {
        base.insert(dest.to_string(), content(src));
    }
    let mut head = base.clone();
    for (dest, src) in overlays {
        let bytes = content(src);
        if let Some(t) = dest.strip_suffix(".append") {
            head.entry(t.to_string())
                .or_default()
                .extend_from_slice(&bytes);
        } else {
            head.insert(dest.to_string(), bytes);
        }
    }
    lint(&support::input_from(base, head, pr))
}

fn content(src: &str) -> Vec<u8> {
    if src.contains('\n') {
        src.as_bytes().to_vec()
    } else {
        std::fs::read(support::root().join("rules").join(src))
            .unwrap_or_else(|e| panic!("{src}: {e}"))
    }
}

fn case(overlays: &[(&str, &str)]) -> Vec<Finding> {
    case_with(overlays, &[], Some(1000))
}

fn has(f: &[Finding], rule: &str, sev: Severity) -> bool {
    f.iter().any(|x| x.rule == rule && x.severity == sev)
}

fn none(f: &[Finding], rule: &str) -> bool {
    !f.iter().any(|x| x.rule == rule)
}

const ENTRY: &str = "\n- config-keys:\n    - dsv4-*\n  description:\n    - \"Add the config\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1000\n";

#[test]
fn world_alone_is_clean() {
    let f = case(&[]);
    assert!(f.is_empty(), "{}", support::dump(&f));
}

#[test]
fn l01_l02_resolution() {
    // L02 (catalogue hypothetical): both names exist, the launchers disagree.
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
        (
            "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_sglang.sh",
            "l07_pass.sh",
        ),
    ]);
    assert!(has(&f, "L02", Error), "{}", support::dump(&f));
    assert!(none(&f, "L01"));
    // Pass: only the legacy name exists; every launcher runs it.
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(none(&f, "L02") && none(&f, "L01"), "{}", support::dump(&f));
    // L01: the script the key needs is deleted.
    let (base, mut head, _) = support::trees("world-only");
    head.remove(FIXED);
    let f = lint(&support::input_from(base, head, Some(1000)));
    assert_eq!(
        f.iter().filter(|x| x.rule == "L01").count(),
        3,
        "{}",
        support::dump(&f)
    );
}

#[test]
fn l03_labels_and_launchers() {
    let f = case(&[
        (MASTER, "l03_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(has(&f, "L03", Warning), "{}", support::dump(&f));
    let runners = "labels:\n  h200:\n    - h200-cw_00\n    - h200-nb_0\n    - h200-dgxc-slurm_0\n  b300:\n    - b300-nv_01\n    - b300-cw_0\n";
    let f = case(&[("configs/runners.yaml", runners)]);
    let l03: Vec<_> = f.iter().filter(|x| x.rule == "L03").collect();
    assert_eq!(l03.len(), 1, "{}", support::dump(&f));
    assert!(l03[0].message.contains("runners/launch_b300-cw.sh"));
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(none(&f, "L03"));
}

#[test]
fn l04_recipe_exists() {
    let overlay = (
        format!("{RECIPES}vllm/deepseek-v4/agentic/agg-gb200-tp8-mtp-agentic.yaml"),
        "recipe_k2.yaml",
    );
    let f = case(&[
        (MASTER, "l04_missing.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
        (&overlay.0, overlay.1),
    ]);
    assert!(has(&f, "L04", Error), "{}", support::dump(&f));
    let f = case(&[
        (MASTER, "l04_upstream.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(
        has(&f, "L04", Warning) && !has(&f, "L04", Error),
        "{}",
        support::dump(&f)
    );
    let f = case(&[
        (MASTER, "l28_pass.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
        (&overlay.0, overlay.1),
    ]);
    assert!(none(&f, "L04"), "{}", support::dump(&f));
}

#[test]
fn l05_l19_l28_multinode() {
    let path = format!("{RECIPES}vllm/deepseek-v4/agentic/agg-gb200-tp8-mtp-agentic.yaml");
    let pass = case(&[
        (MASTER, "l28_pass.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
        (&path, "recipe_k2.yaml"),
    ]);
    for r in ["L05", "L19", "L28", "L20", "L27"] {
        assert!(none(&pass, r), "{r}: {}", support::dump(&pass));
    }
    let f = case(&[
        (MASTER, "l28_pass.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
        (&path, "recipe_l05_fail.yaml"),
    ]);
    assert!(has(&f, "L05", Error), "{}", support::dump(&f));
    let f = case(&[
        (MASTER, "l19_mn_fail.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
        (&path, "recipe_k2.yaml"),
    ]);
    let l19: Vec<_> = f.iter().filter(|x| x.rule == "L19").collect();
    assert_eq!(l19.len(), 1, "{}", support::dump(&f));
    assert!(l19[0].message.contains("2.27") && l19[0].severity == Error);
    let f = case(&[
        (MASTER, "l28_fail.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
        (&path, "recipe_k2.yaml"),
    ]);
    assert!(has(&f, "L28", Error), "{}", support::dump(&f));
    let wrong_fw = std::fs::read_to_string(support::root().join("rules/l28_pass.yaml"))
        .unwrap()
        .replace("dynamo-vllm", "vllm-disagg");
    let f = case(&[
        (MASTER, &wrong_fw),
        ("perf-changelog.yaml.append", ENTRY),
        (&path, "recipe_k2.yaml"),
    ]);
    assert!(
        f.iter()
            .any(|x| x.rule == "L28" && x.message.contains("no synthetic-acceptance injector")),
        "{}",
        support::dump(&f)
    );
}

#[test]
fn l06_l07_variables_and_eval_context() {
    let f = case(&[(FIXED, "l06_fail.sh")]);
    assert!(has(&f, "L06", Warning), "{}", support::dump(&f));
    let f = case(&[(FIXED, "l07_pass.sh")]);
    assert!(none(&f, "L06") && none(&f, "L07"), "{}", support::dump(&f));
    let no_server_arg = std::fs::read_to_string(support::root().join("rules/l07_pass.sh"))
        .unwrap()
        .replace("  $EVAL_CONTEXT_ARGS \\\n", "");
    let f = case(&[(FIXED, &no_server_arg)]);
    assert!(
        has(&f, "L07", Warning) && none(&f, "L06"),
        "{}",
        support::dump(&f)
    );
}

#[test]
fn l08_spec_and_name() {
    let f = case(&[(FIXED, "l25_fail.sh")]);
    assert!(has(&f, "L08", Error), "{}", support::dump(&f));
    let f = case(&[(FIXED_MTP, "l07_pass.sh")]);
    assert!(
        f.iter()
            .any(|x| x.rule == "L08" && x.message.contains("named `_mtp`")),
        "{}",
        support::dump(&f)
    );
    let f = case(&[(FIXED_MTP, "l24_pass.sh")]);
    assert!(none(&f, "L08"), "{}", support::dump(&f));
}

#[test]
fn l09_l10_l11_flags() {
    let f = case(&[(FIXED, "l09_warn.sh")]);
    assert!(
        has(&f, "L09", Warning) && !has(&f, "L09", Error),
        "{}",
        support::dump(&f)
    );
    let f = case(&[(FIXED, "l11_fail.sh")]);
    assert!(has(&f, "L11", Error), "{}", support::dump(&f));
    let f = case(&[(FIXED, "l11_pass.sh")]);
    assert!(
        none(&f, "L11") && none(&f, "L09") && none(&f, "L10"),
        "{}",
        support::dump(&f)
    );
    // L10 in a recipe (29 recipe files spell speculative-algo).
    let f = case(&[(
        &format!("{RECIPES}sglang/deepseek-v4/8k1k/disagg-b200-1p1d-mtp.yaml"),
        "recipe_l10_fail.yaml",
    )]);
    assert!(
        f.iter()
            .any(|x| x.rule == "L10" && x.fix.as_deref() == Some("speculative-algorithm")),
        "{}",
        support::dump(&f)
    );
    let f = case(&[(
        &format!("{RECIPES}vllm/deepseek-v4/agentic/agg-gb200-tp8-mtp-agentic.yaml"),
        "recipe_k2.yaml",
    )]);
    assert!(none(&f, "L10"), "{}", support::dump(&f));
}

#[test]
fn l12_installs() {
    let f = case(&[(
        "benchmarks/single_node/agentic/apply_patches.sh",
        "l12_helper.sh",
    )]);
    assert!(
        has(&f, "L12", Warning) && !has(&f, "L12", Error),
        "{}",
        support::dump(&f)
    );
    let f = case(&[(FIXED, "l12_pinned.sh")]);
    assert!(none(&f, "L12"), "{}", support::dump(&f));
}

#[test]
fn l13_l14_l15_images() {
    let f = case(&[
        (MASTER, "l13_moving.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(has(&f, "L13", Warning), "{}", support::dump(&f));
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(
        has(&f, "L13", Info) && none(&f, "L14") && none(&f, "L15"),
        "{}",
        support::dump(&f)
    );
    let f = case(&[
        (MASTER, "l14_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(has(&f, "L14", Error), "{}", support::dump(&f));
    let f = case(&[
        (MASTER, "l15_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(has(&f, "L15", Error), "{}", support::dump(&f));
    let f = case(&[
        (MASTER, "l15_pass.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(none(&f, "L15"), "{}", support::dump(&f));
}

#[test]
fn l16_changelog() {
    let f = case(&[(MASTER, "l02_key.yaml")]);
    assert!(
        f.iter()
            .any(|x| x.rule == "L16" && x.message.contains("no new entry")),
        "{}",
        support::dump(&f)
    );
    let changes = ENTRY.replace("pull/1000", "pull/2305/changes");
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", &changes),
    ]);
    assert!(has(&f, "L16", Error), "{}", support::dump(&f));
    let xxx = ENTRY.replace(
        "https://github.com/SemiAnalysisAI/InferenceX/pull/1000",
        "XXX",
    );
    let f = case_with(
        &[
            (MASTER, "l02_key.yaml"),
            ("perf-changelog.yaml.append", &xxx),
        ],
        &[],
        None,
    );
    assert!(
        has(&f, "L16", Error),
        "a placeholder is an error on main: {}",
        support::dump(&f)
    );
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", &xxx),
    ]);
    assert!(has(&f, "L16", Warning) && !has(&f, "L16", Error));
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(none(&f, "L16"), "{}", support::dump(&f));
}

#[test]
fn l17_claims() {
    let k = ENTRY.replace(
        "Add the config",
        "Add DSv4 SGLang with num_speculative_tokens 3 on lmsysorg/sglang:v0.5.12-cu130",
    );
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", &k),
        (FIXED, "l24_pass.sh"),
    ]);
    // (severity, about an image) of each L17 finding.
    let l17 = |f: &[Finding]| -> Vec<_> {
        f.iter()
            .filter(|x| x.rule == "L17")
            .map(|x| (x.severity, x.message.contains("image")))
            .collect()
    };
    // The image contradiction is an error; the K claim warns (issue 17
    // item 7: AL/K prose claims are below 95% precision on the history).
    assert_eq!(
        l17(&f),
        vec![(Error, true), (Warning, false)],
        "K and image contradict: {}",
        support::dump(&f)
    );
    // A nightly named where the config pins another build: a warning, as
    // engine knowledge gives nightly and dev images (`47e7ab0`, #2328).
    let nightly = ENTRY.replace(
        "Add the config",
        "Add DSv4 SGLang on lmsysorg/sglang:nightly-dev-cu13-20260721-8905cbd4",
    );
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", &nightly),
    ]);
    assert_eq!(l17(&f), vec![(Warning, true)], "{}", support::dump(&f));
    let ok = ENTRY.replace(
        "Add the config",
        "Add DSv4 SGLang on lmsysorg/sglang:v0.5.16-cu130 (TP8)",
    );
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", &ok),
    ]);
    assert!(none(&f, "L17"), "{}", support::dump(&f));
    let neg = ENTRY.replace("Add the config", "The STP entry's EP16 is not carried over");
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", &neg),
    ]);
    assert!(
        none(&f, "L17"),
        "negation suppression: {}",
        support::dump(&f)
    );
}

#[test]
fn l18_prefix() {
    let e = ENTRY.replace("dsv4-*", "kimik2.6-*");
    let f = case(&[(MASTER, "l18_key.yaml"), ("perf-changelog.yaml.append", &e)]);
    assert!(
        f.iter()
            .any(|x| x.rule == "L18" && x.message.contains("kimik2.6")),
        "{}",
        support::dump(&f)
    );
    let f = case(&[
        (MASTER, "l18_mismatch.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(
        f.iter()
            .any(|x| x.rule == "L18" && x.message.contains("starts with `dsv4x`")),
        "{}",
        support::dump(&f)
    );
    let f = case(&[
        (MASTER, "l02_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ]);
    assert!(none(&f, "L18"));
}

#[test]
fn l19_l21_l22_l27_agentic_scripts() {
    let key = [
        (MASTER, "agentic_key.yaml"),
        ("perf-changelog.yaml.append", ENTRY),
    ];
    let run = |script: &str| {
        let mut o = key.to_vec();
        o.push((AGENTIC_MTP, script));
        case(&o)
    };
    let f = run("l19_fail.sh");
    assert!(
        f.iter()
            .any(|x| x.rule == "L19" && x.severity == Error && x.message.contains("2.27")),
        "{}",
        support::dump(&f)
    );
    let f = run("l19_pass.sh");
    for r in ["L19", "L21", "L22", "L27", "L25", "L20"] {
        assert!(none(&f, r), "{r}: {}", support::dump(&f));
    }
    let f = run("l22_fail.sh");
    assert!(has(&f, "L22", Error), "{}", support::dump(&f));
    let f = run("l21_fail.sh");
    let l21: Vec<_> = f.iter().filter(|x| x.rule == "L21").collect();
    assert_eq!(l21.len(), 1, "{}", support::dump(&f));
    assert!(l21[0].message.contains("32, 64") && l21[0].severity == Warning);
    assert!(none(&run("l21_pass.sh"), "L21"));
    let f = run("l27_fail.sh");
    assert!(
        has(&f, "L27", Warning) && none(&f, "L19"),
        "{}",
        support::dump(&f)
    );
    let f = run("l27_pass.sh");
    assert!(none(&f, "L27") && none(&f, "L19"), "{}", support::dump(&f));
}

#[test]
fn l20_synthetic_on_fixed_seq_len() {
    let f = case(&[(FIXED, "l20_fail.sh")]);
    assert!(has(&f, "L20", Error), "{}", support::dump(&f));
    let f = case(&[(FIXED, "l07_pass.sh")]);
    assert!(none(&f, "L20"));
}

#[test]
fn l23_engine_patch_and_waiver() {
    let f = case(&[(FIXED, "l23_fail.sh")]);
    let l23: Vec<_> = f.iter().filter(|x| x.rule == "L23").collect();
    assert_eq!(l23.len(), 1, "{}", support::dump(&f));
    assert_eq!(
        l23[0].fix.as_deref(),
        Some(
            "use an image that needs no patch, or add the waiver `docs/waiver/1000.md` naming this script"
        )
    );
    let waiver = "# PR 1000 waiver\n\n## Config covered\n- benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh\n";
    let f = case(&[(FIXED, "l23_fail.sh"), ("docs/waiver/1000.md", waiver)]);
    assert!(none(&f, "L23"), "{}", support::dump(&f));
}

#[test]
fn l24_draft_precision() {
    let f = case(&[(FIXED_MTP, "l24_fail.sh")]);
    assert!(has(&f, "L24", Error), "{}", support::dump(&f));
    let f = case(&[(FIXED_MTP, "l24_pass.sh")]);
    assert!(none(&f, "L24"));
    let f = case(&[(
        &format!("{RECIPES}sglang/deepseek-v4/8k1k/disagg-b200-1p1d-mtp.yaml"),
        "recipe_l10_fail.yaml",
    )]);
    assert!(
        has(&f, "L24", Error) && has(&f, "L25", Warning),
        "{}",
        support::dump(&f)
    );
}

#[test]
fn l25_l26_client() {
    let f = case(&[(FIXED_MTP, "l25_fail.sh")]);
    assert!(has(&f, "L25", Error), "{}", support::dump(&f));
    let f = case(&[(FIXED_MTP, "l24_pass.sh")]);
    assert!(none(&f, "L25"));
    let f = case(&[(FIXED, "l26_fail.sh")]);
    assert!(
        f.iter()
            .any(|x| x.rule == "L26" && x.message.contains("--use-chat-templates")),
        "{}",
        support::dump(&f)
    );
    assert!(none(&case(&[(FIXED, "l07_pass.sh")]), "L26"));
}

#[test]
fn l29_references() {
    let models = String::from_utf8(support::trees("world-only").0["MODELS.md"].clone()).unwrap()
        + "\nSee `configs/deprecated/nvidia-kimik2.5-agentic-master.yaml`.\n";
    let f = case(&[("MODELS.md", &models)]);
    let l29: Vec<_> = f.iter().filter(|x| x.rule == "L29").collect();
    assert!(
        l29.iter().any(
            |x| x.severity == Info && x.message.contains("nvidia-kimik2.5-agentic-master.yaml")
        ),
        "{}",
        support::dump(&f)
    );
    let waiver =
        "# Waiver\n\nPatch script: `benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh`\n";
    assert!(none(&case(&[("docs/waiver/1000.md", waiver)]), "L29"));
}

#[test]
fn l30_backends() {
    let bad = std::fs::read_to_string(support::root().join("rules/l11_pass.sh"))
        .unwrap()
        .replace(
            "  --gpu-memory-utilization",
            "  --attention-backend NOT_A_BACKEND \\\n  --gpu-memory-utilization",
        );
    let f = case(&[(FIXED, &bad)]);
    assert!(
        f.iter().any(|x| x.rule == "L30"
            && x.message.contains("NOT_A_BACKEND")
            && x.message.contains("0.25.1")),
        "{}",
        support::dump(&f)
    );
    let good = bad.replace("NOT_A_BACKEND", "FLASHINFER_MLA");
    assert!(none(&case(&[(FIXED, &good)]), "L30"));
    // Recipes: trtllm_mla is a known SGLang attention backend.
    let f = case(&[(
        &format!("{RECIPES}sglang/deepseek-v4/8k1k/disagg-b200-1p1d-mtp.yaml"),
        "recipe_l10_fail.yaml",
    )]);
    assert!(none(&f, "L30"), "{}", support::dump(&f));
}

/// L31: a repeated key in a changed YAML file is a finding where it is
/// written (issue 17 item 6); the one YAML layer keeps the last value, as
/// PyYAML does.
#[test]
fn l31_duplicate_keys() {
    let recipe = "name: r\nbackend:\n  type: sglang\n  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: \"3.00\"\n    SGLANG_SIMULATE_ACC_LEN: \"3.39\"\n";
    let path = format!("{RECIPES}sglang/x/agentic/dup.yaml");
    let f = case(&[(path.as_str(), recipe)]);
    let l31: Vec<_> = f.iter().filter(|x| x.rule == "L31").collect();
    assert_eq!(l31.len(), 1, "{}", support::dump(&f));
    assert_eq!((l31[0].line, l31[0].severity), (6, Warning));
    assert!(l31[0].message.contains("first at line 5"), "{}", l31[0]);
    assert!(none(&case(&[(path.as_str(), "name: r\n")]), "L31"));
}
