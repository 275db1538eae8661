//! The real waiver (docs/waiver/2508.md) and eval thresholds
//! (utils/evals/thresholds.yaml).

use sweepgate_core::recipe::thresholds::{self, ScoreCheck, Source};
use sweepgate_core::recipe::waiver;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/inferencex/{rel}")).unwrap()
}

#[test]
fn waiver_2508() {
    let w = waiver::parse("docs/waiver/2508.md", &read("docs/waiver/2508.md")).unwrap();
    assert_eq!((w.pr, w.title_line), (2508, 1));
    assert!(w.name_matches_pr());
    assert!(w.missing_sections().is_empty(), "{:?}", w.sections);
    assert_eq!(w.sections.len(), 5);
    assert!(w.covers("kimik3-fp4-mi355x-vllm-agentic-mtp"));
    assert_eq!(w.config_keys.len(), 1);
    assert_eq!(w.config_keys[0].line, 9);
    assert_eq!(
        w.image.as_ref().map(|i| i.value.as_str()),
        Some("vllm/vllm-openai-rocm:nightly-cb8104839c141609d99f1254459ef3a4f1bd4263")
    );
    assert!(
        w.patch_entrypoint
            .as_ref()
            .is_some_and(|p| p.value.contains("apply_k3_container_patches.sh"))
    );
    let paths: Vec<&str> = w.linked_paths.iter().map(|p| p.value.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "docs/PR_REVIEW_CHECKLIST.md",
            "configs/amd-master.yaml",
            "benchmarks/single_node/agentic/kimik3_fp4_mi355x_mtp.sh",
            "benchmarks/single_node/agentic/apply_k3_container_patches.sh",
        ]
    );
    // L29: every cited path exists at HEAD (TREE.tsv lists the repository).
    let tree = String::from_utf8(read("TREE.tsv")).unwrap();
    for p in &paths {
        assert!(tree.lines().any(|l| l.ends_with(&format!("\t{p}"))), "{p}");
    }
    assert_eq!(w.patches.len(), 11);
    assert_eq!(w.patches[0].upstream, "aiter #4474");
    assert!(
        w.patches
            .iter()
            .any(|p| p.upstream == "vllm #50619 (PARTIAL)")
    );
    assert_eq!(w.upstream_links.len(), 9);
    assert!(
        w.upstream_links
            .iter()
            .all(|u| u.value.starts_with("https://github.com/"))
    );
    assert!(w.removal_plan.contains("delete this"));
}

#[test]
fn thresholds_of_the_real_file() {
    let t = thresholds::parse(
        "utils/evals/thresholds.yaml",
        &read("utils/evals/thresholds.yaml"),
    )
    .unwrap();
    let defaults: Vec<(&str, f64)> = t
        .defaults
        .iter()
        .map(|b| (b.task.as_str(), b.value))
        .collect();
    assert_eq!(
        defaults,
        vec![
            ("gsm8k", 0.90),
            ("gpqa_diamond_cot_n_shot", 0.30),
            ("swebench_lite", 0.50)
        ]
    );
    assert_eq!(t.models.len(), 8);
    let expect = [
        ("dsr1", 0.91),
        ("dsv4", 0.91),
        ("glm5", 0.94),
        ("glm5.1", 0.93),
        ("gptoss", 0.91),
        ("kimik2.5", 0.90),
        ("minimaxm2.5", 0.92),
        ("qwen3.5", 0.94),
    ];
    for (p, v) in expect {
        let l = t.lookup(Some(p), "gsm8k");
        assert_eq!((l.value, l.source), (v, Source::Model), "{p}");
    }
    // kimik3, glm5.2 and minimaxm3 have no override: the 0.90 default.
    for p in ["kimik3", "glm5.2", "minimaxm3"] {
        let l = t.lookup(Some(p), "gsm8k");
        assert_eq!(
            (l.value, l.source, l.line),
            (0.90, Source::Default, Some(3)),
            "{p}"
        );
    }
    assert_eq!(
        t.lookup(Some("dsv4"), "gpqa_diamond_cot_n_shot").value,
        0.30
    );
    assert_eq!(t.lookup(Some("dsv4"), "mmlu").source, Source::CliFallback);
    assert_eq!(t.lookup(Some("dsv4"), "gsm8k").line, Some(10));

    // Seed 002's gsm8k results (0.9750 and 0.9742) pass the dsv4 bar.
    let r = t.check(
        Some("dsv4"),
        "gsm8k",
        [
            ("exact_match,strict-match", 0.9750),
            ("exact_match,flexible-extract", 0.9742),
            ("exact_match_stderr,strict-match", 0.004),
        ],
    );
    assert!(matches!(r, ScoreCheck::Pass { counted: 2, .. }), "{r:?}");
    let r = t.check(
        Some("qwen3.5"),
        "gsm8k",
        [("exact_match,flexible-extract", 0.935)],
    );
    assert!(matches!(r, ScoreCheck::Below { .. }));
}
