//! Golden AL curves of the real repository: lookups that the verifier spec
//! checked against HEAD, and the engine encodings of those values.

use sweepgate_core::recipe::golden::{
    self, Decoded, DraftMethod, DraftSampling, GoldenSet, Lookup, NoCell, NoCurve, Query,
    ThinkingMode, VllmSpecConfig,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn set() -> GoldenSet {
    let dir = format!("{DATA}/inferencex/golden_al_distribution");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        files.push((
            format!("golden_al_distribution/{name}"),
            std::fs::read(&p).unwrap(),
        ));
    }
    GoldenSet::parse_files(files.iter().map(|(p, b)| (p.as_str(), b.as_slice()))).unwrap()
}

fn q<'a>(prefix: &'a str, method: DraftMethod, mode: ThinkingMode, k: u32) -> Query<'a> {
    Query {
        prefix,
        method,
        sampling: None,
        draft_model: None,
        mode,
        k,
    }
}

fn al(set: &GoldenSet, query: &Query<'_>) -> (f64, String) {
    match set.lookup(query) {
        Lookup::Found { curve, cell } => (cell.al, curve.name().to_owned()),
        other => panic!("{query:?}: {other:?}"),
    }
}

#[test]
fn nine_curves_with_slugs() {
    let s = set();
    assert_eq!(s.curves.len(), 9);
    let dsv4 = s
        .curves
        .iter()
        .find(|c| c.name() == "dsv4_mtp.yaml")
        .unwrap();
    assert_eq!(dsv4.slug, "deepseek-v4-pro");
    assert_eq!(dsv4.slug_line, 9);
    assert_eq!(
        dsv4.source_run.as_deref(),
        Some("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/27180633016")
    );
    let kimi = s
        .curves
        .iter()
        .find(|c| c.name() == "kimik3_dspark.yaml")
        .unwrap();
    assert_eq!(kimi.draft_model.as_deref(), Some("Inferact/Kimi-K3-DSpark"));
    assert_eq!(kimi.sampling, DraftSampling::Greedy);
    assert!(kimi.mode(ThinkingMode::Off).is_none());
    for c in &s.curves {
        assert!(c.mode(ThinkingMode::On).is_some(), "{}", c.file);
        assert_eq!(c.mode(ThinkingMode::On).unwrap().cells.len(), 8);
    }
}

#[test]
fn spec_lookups() {
    let s = set();
    // qwen3.5 thinking_on K=3 → 3.39 (SGLANG_SIMULATE_ACC_LEN in the H200 MTP script).
    assert_eq!(
        al(&s, &q("qwen3.5", DraftMethod::Mtp, ThinkingMode::On, 3)),
        (3.39, "qwen3.5_mtp.yaml".into())
    );
    assert_eq!(
        al(&s, &q("qwen3.5", DraftMethod::Mtp, ThinkingMode::On, 7)).0,
        5.04
    );

    // minimaxm3: the draft id picks the GQA head.
    let mut gqa = q("minimaxm3", DraftMethod::Eagle3, ThinkingMode::On, 3);
    gqa.draft_model = Some("Inferact/MiniMax-M3-EAGLE3-GQA");
    assert_eq!(al(&s, &gqa), (2.78, "minimaxm3_eagle3_gqa.yaml".into()));
    let mut plain = gqa.clone();
    plain.draft_model = Some("Inferact/MiniMax-M3-EAGLE3");
    assert_eq!(al(&s, &plain), (2.83, "minimaxm3_eagle3.yaml".into()));

    // glm5.2 K=5 → 3.61; thinking_off was never collected.
    assert_eq!(
        al(&s, &q("glm5.2", DraftMethod::Mtp, ThinkingMode::On, 5)).0,
        3.61
    );
    assert!(matches!(
        s.lookup(&q("glm5.2", DraftMethod::Mtp, ThinkingMode::Off, 5)),
        Lookup::NoCell {
            missing: NoCell::Mode {
                mode: ThinkingMode::Off,
                ..
            },
            ..
        }
    ));

    // kimik3: probabilistic K=7 → 3.84, greedy 3.78; K=2 2.51 vs 2.45.
    let mut prob = q("kimik3", DraftMethod::DSpark, ThinkingMode::On, 7);
    prob.sampling = Some(DraftSampling::Probabilistic);
    assert_eq!(
        al(&s, &prob),
        (
            3.84,
            "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method.yaml".into()
        )
    );
    assert_eq!(
        al(&s, &q("kimik3", DraftMethod::DSpark, ThinkingMode::On, 7)).0,
        3.78
    );
    prob.k = 2;
    assert_eq!(al(&s, &prob).0, 2.51);
    assert_eq!(
        al(&s, &q("kimik3", DraftMethod::DSpark, ThinkingMode::On, 2)).0,
        2.45
    );

    // dsv4 MTP: thinking_off K=3 → 2.97; thinking_on K=3 2.49, K=2 2.27.
    assert_eq!(
        al(&s, &q("dsv4", DraftMethod::Mtp, ThinkingMode::Off, 3)).0,
        2.97
    );
    assert_eq!(
        al(&s, &q("dsv4", DraftMethod::Mtp, ThinkingMode::On, 3)).0,
        2.49
    );
    assert_eq!(
        al(&s, &q("dsv4", DraftMethod::Mtp, ThinkingMode::On, 2)).0,
        2.27
    );
}

#[test]
fn dsv4_dspark_and_checkpoint_select_the_0813_file() {
    let s = set();
    let (v, f) = al(&s, &q("dsv4", DraftMethod::DSpark, ThinkingMode::On, 5));
    assert_eq!((v, f.as_str()), (3.61, "dsv4-pro-0813-dspark.yaml"));
    // The 0813 checkpoint in the draft id picks DSpark even if the caller said MTP.
    let mut by_ckpt = q("dsv4", DraftMethod::Mtp, ThinkingMode::On, 3);
    by_ckpt.draft_model = Some("deepseek-ai/DeepSeek-V4-Pro-0813");
    assert_eq!(al(&s, &by_ckpt).1, "dsv4-pro-0813-dspark.yaml");
    // Explicitly greedy: only a probabilistic DSpark curve exists for dsv4.
    let mut greedy = q("dsv4", DraftMethod::DSpark, ThinkingMode::On, 5);
    greedy.sampling = Some(DraftSampling::Greedy);
    assert_eq!(
        s.lookup(&greedy),
        Lookup::NoCurve(NoCurve::NoSampling {
            prefix: "dsv4".into(),
            wanted: DraftSampling::Greedy,
            available: vec![DraftSampling::Probabilistic],
        })
    );
}

#[test]
fn precise_misses() {
    let s = set();
    assert_eq!(
        s.lookup(&q("kimik2.6", DraftMethod::Eagle3, ThinkingMode::On, 3)),
        Lookup::NoCurve(NoCurve::UnknownPrefix {
            prefix: "kimik2.6".into()
        })
    );
    match s.lookup(&q("glm5.2", DraftMethod::Eagle3, ThinkingMode::On, 3)) {
        Lookup::NoCurve(NoCurve::NoMethod { available, .. }) => {
            assert_eq!(available, vec![DraftMethod::Mtp])
        }
        other => panic!("{other:?}"),
    }
    match s.lookup(&q("qwen3.5", DraftMethod::Mtp, ThinkingMode::On, 9)) {
        Lookup::NoCell {
            missing: NoCell::DraftLength {
                k: 9, available, ..
            },
            ..
        } => assert_eq!(available, (1..=8).collect::<Vec<_>>()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn engine_encodings_of_the_golden_values() {
    let s = set();
    let golden = |query: &Query<'_>| s.lookup(query).al().unwrap();

    // SGLang: qwen3.5 H200 MTP script pins 3.39 with the full triple.
    let Decoded::Simulated(sg) = golden::sglang_env([
        ("SGLANG_SIMULATE_ACC_LEN", "3.39"),
        ("SGLANG_SIMULATE_ACC_METHOD", "match-expected"),
        ("SGLANG_SIMULATE_ACC_TOKEN_MODE", "real-draft-token"),
    ]) else {
        panic!()
    };
    assert!(sg.problems.is_empty());
    assert!(sg.matches(golden(&q("qwen3.5", DraftMethod::Mtp, ThinkingMode::On, 3))));

    // TRT-LLM: minimaxm3 B200/B300 scripts force 1.78 = 2.78 − 1 (GQA head).
    let mut gqa = q("minimaxm3", DraftMethod::Eagle3, ThinkingMode::On, 3);
    gqa.draft_model = Some("Inferact/MiniMax-M3-EAGLE3-GQA");
    let Decoded::Simulated(trt) = golden::trtllm_env("1.78") else {
        panic!()
    };
    assert!(trt.matches(golden(&gqa)));
    let mut plain = gqa.clone();
    plain.draft_model = Some("Inferact/MiniMax-M3-EAGLE3");
    assert!(!trt.matches(golden(&plain)));

    // vLLM: kimik3 DSpark K=7 probabilistic at 3.84.
    let spec = VllmSpecConfig::parse(
        r#"{"method": "dspark", "model": "Inferact/Kimi-K3-DSpark", "num_speculative_tokens": 7,
            "draft_sample_method": "probabilistic", "rejection_sample_method": "synthetic",
            "synthetic_acceptance_length": 3.84}"#,
    )
    .unwrap();
    let Decoded::Simulated(v) = spec.decoded() else {
        panic!()
    };
    assert!(v.problems.is_empty());
    let query = Query {
        prefix: "kimik3",
        method: DraftMethod::parse(spec.method.as_deref().unwrap()),
        sampling: spec.sampling(),
        draft_model: spec.model.as_deref(),
        mode: ThinkingMode::On,
        k: v.k.unwrap(),
    };
    assert!(v.matches(golden(&query)));

    // ATOM: glm5.2 MI355X rate 0.663 at K=3 gives 2.99 (golden 2.99).
    let Decoded::Simulated(atom) = golden::atom_args(None, Some("0.663"), Some(3)) else {
        panic!()
    };
    assert!(atom.matches(golden(&q("glm5.2", DraftMethod::Mtp, ThinkingMode::On, 3))));

    // Injector: dsv4 GB200 agg keys pin 2.49 at K=2, golden 2.27 → mismatch.
    let Decoded::Simulated(inj) = golden::runner_injected(
        "dynamo-vllm",
        [
            "SYNTHETIC_ACCEPTANCE=true",
            "SYNTHETIC_ACCEPTANCE_LENGTH=2.49",
        ],
        &golden::default_injectors(),
    ) else {
        panic!()
    };
    assert!(!inj.matches(golden(&q("dsv4", DraftMethod::Mtp, ThinkingMode::On, 2))));
    assert!(inj.matches(golden(&q("dsv4", DraftMethod::Mtp, ThinkingMode::On, 3))));

    // TRT recipes with thinking disabled force 1.49 but thinking_off K=3 is 2.97.
    let mode = golden::resolve_thinking(golden::thinking_signal(
        "DYN_DEFAULT_THINKING_MODE",
        "disabled",
    ))
    .unwrap();
    let Decoded::Simulated(t149) = golden::trtllm_env("1.49") else {
        panic!()
    };
    assert!(!t149.matches(golden(&q("dsv4", DraftMethod::Mtp, mode, 3))));
}
