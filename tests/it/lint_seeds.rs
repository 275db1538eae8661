//! Seed scenarios of docs/contracts.md §7 for the recipe lint (seeds 000, 001,
//! 003, 004): exactly the listed findings, nothing else at error level.

use crate::lint_support as support;

use support::*;
use sweepgate_core::checks::lint::Severity::{self, Error, Info, Warning};

const MASTER: &str = "configs/nvidia-master.yaml";
const CHANGELOG: &str = "perf-changelog.yaml";

fn errors(
    f: &[sweepgate_core::checks::lint::Finding],
) -> Vec<(&'static str, Severity, String, usize)> {
    keys(f).into_iter().filter(|k| k.1 == Error).collect()
}

fn sorted(
    mut v: Vec<(&'static str, Severity, String, usize)>,
) -> Vec<(&'static str, Severity, String, usize)> {
    v.sort();
    v
}

#[test]
fn seed_004_l01_for_h200_cw_and_nb_with_rename_fix() {
    let (_, head, _) = trees("seed004");
    let f = run("seed004");
    let key_line = line_of(&head, MASTER, "dsv4-fp8-h200-vllm-mtp:");
    assert_eq!(
        sorted(errors(&f)),
        vec![
            ("L01", Error, MASTER.into(), key_line),
            ("L01", Error, MASTER.into(), key_line)
        ],
        "{}",
        dump(&f)
    );
    let l01 = of_rule(&f, "L01");
    let want = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_mtp.sh";
    let have = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_vllm_mtp.sh";
    for launcher in ["h200-cw", "h200-nb"] {
        let x = l01
            .iter()
            .find(|x| x.message.contains(&format!("launcher `{launcher}`")))
            .expect(launcher);
        assert!(x.message.contains(want) && x.message.contains(have), "{x}");
        assert_eq!(
            x.fix.as_deref(),
            Some(
                format!("rename `{have}` to `{want}` (the name every launcher of `h200` accepts)")
                    .as_str()
            )
        );
    }
    // L02 compares only paths that exist.
    assert!(of_rule(&f, "L02").is_empty(), "{}", dump(&f));
}

#[test]
fn seed_000_unpinned_install_unknown_backend_and_dotted_spelling() {
    let (_, head, _) = trees("seed000");
    let f = run("seed000");
    let script = "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b300_vllm.sh";
    let pip = line_of(&head, script, "pip install");
    let dotted = line_of(&head, script, "--attention-config.mla_prefill_backend");
    // docs/contracts.md §7 (issue 17): vLLM v0.21.0, the pinned image,
    // introduced `TOKENSPEED_MLA` (attention and MLA prefill backend), as
    // the table generated from vllm-0.21.0's own source records: no L30.
    assert_eq!(
        sorted(errors(&f)),
        sorted(vec![("L12", Error, script.into(), pip)]),
        "{}",
        dump(&f)
    );
    assert!(of_rule(&f, "L30").is_empty(), "{}", dump(&f));
    let warnings: Vec<_> = keys(&f).into_iter().filter(|k| k.1 == Warning).collect();
    assert_eq!(
        warnings,
        vec![("L11", Warning, script.into(), dotted)],
        "{}",
        dump(&f)
    );
    assert_eq!(
        of_rule(&f, "L11")[0].fix.as_deref(),
        Some("--attention_config.mla_prefill_backend")
    );
    // v0.21.0 looks immutable but is no digest: information only.
    let infos: Vec<_> = keys(&f)
        .into_iter()
        .filter(|k| k.2 != script && k.1 == Info)
        .collect();
    assert_eq!(
        infos,
        vec![(
            "L13",
            Info,
            MASTER.into(),
            line_of(&head, MASTER, "image: vllm/vllm-openai:v0.21.0")
        )]
    );
}

#[test]
fn seed_001_clean_apart_from_tbd_placeholder() {
    let (_, head, _) = trees("seed001");
    let f = run("seed001");
    assert!(errors(&f).is_empty(), "{}", dump(&f));
    let tbd = line_of(&head, CHANGELOG, "pull/TBD");
    let l16: Vec<_> = keys(&f).into_iter().filter(|k| k.0 == "L16").collect();
    assert_eq!(
        l16,
        vec![("L16", Warning, CHANGELOG.into(), tbd)],
        "{}",
        dump(&f)
    );
    // Chat template used: --dsv4 implies it.
    assert!(of_rule(&f, "L25").is_empty());
    // The only other finding is the moving tag deepseekv4-cu130.
    let rest: Vec<_> = keys(&f).into_iter().filter(|k| k.0 != "L16").collect();
    assert_eq!(
        rest,
        vec![(
            "L13",
            Warning,
            MASTER.into(),
            line_of(&head, MASTER, "image: vllm/vllm-openai:deepseekv4-cu130")
        )],
        "{}",
        dump(&f)
    );
}

#[test]
fn seed_003_review_findings() {
    let (_, head, _) = trees("seed003");
    let f = run("seed003");
    let stp = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200.sh";
    let mtp = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_mtp.sh";
    let tp = line_of(&head, stp, "--tp 8");
    let algo = line_of(&head, stp, "--speculative-algo");
    let serve = line_of(&head, stp, "sglang serve \\");
    let link = line_of(&head, CHANGELOG, "pull/1131");
    assert_eq!(
        sorted(errors(&f)),
        sorted(vec![
            ("L08", Error, stp.into(), algo),
            ("L09", Error, stp.into(), tp),
            ("L09", Error, mtp.into(), tp),
            ("L16", Error, CHANGELOG.into(), link),
        ]),
        "{}",
        dump(&f)
    );
    let w = |rule: &str| -> Vec<(&'static str, Severity, String, usize)> {
        sorted(keys(&f).into_iter().filter(|k| k.0 == rule).collect())
    };
    assert_eq!(
        w("L07"),
        sorted(vec![
            ("L07", Warning, stp.into(), serve),
            ("L07", Warning, mtp.into(), serve)
        ])
    );
    assert_eq!(
        w("L10"),
        sorted(vec![
            ("L10", Warning, stp.into(), algo),
            ("L10", Warning, mtp.into(), algo)
        ])
    );
    assert!(w("L06").is_empty(), "EVAL_* is exempt: {}", dump(&f));
    let l17 = of_rule(&f, "L17");
    assert_eq!(l17.len(), 4, "{}", dump(&f));
    assert!(
        l17.iter()
            .all(|x| x.severity == Warning && x.file == CHANGELOG)
    );
    for topic in [
        "EP8",
        "dp-attention",
        "speculative decoding",
        "prefix caching",
    ] {
        assert!(
            l17.iter().any(|x| x.message.contains(topic)),
            "{topic}: {}",
            dump(&f)
        );
    }
    assert_eq!(
        of_rule(&f, "L16")[0].fix.as_deref(),
        Some("pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1145")
    );
}
