//! MODELS.md of the real repository: deprecations with their effective
//! day, scenarios, support matrix and engine policy.

use chrono::NaiveDate;
use sweepgate_core::recipe::models_md::{
    self, Active, Added, Enactment, Engine, ModelsMd, Origin, Scenario, ScenarioStatus, Target,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn md() -> ModelsMd {
    let bytes = std::fs::read(format!("{DATA}/inferencex/MODELS.md")).unwrap();
    models_md::parse("MODELS.md", &bytes).unwrap()
}

fn d(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

const S8K1K: Scenario = Scenario::Fixed {
    isl: 8192,
    osl: 1024,
};
const S1K1K: Scenario = Scenario::Fixed {
    isl: 1024,
    osl: 1024,
};

#[test]
fn notice_tables_take_effect_the_day_after_the_last_day() {
    let m = md();
    let notice: Vec<_> = m
        .deprecations
        .iter()
        .filter(|x| x.origin == Origin::Notice)
        .collect();
    // 3 scenario/precision rows, 5 A/B rows, 1 sentence (kimik2.5 8k1k).
    assert_eq!(notice.len(), 9);

    let mm = notice
        .iter()
        .find(|x| x.prefix.as_deref() == Some("minimaxm3") && x.target == Target::Scenario(S8K1K))
        .unwrap();
    assert_eq!(mm.last_day, Some(d("2026-08-03")));
    assert_eq!(mm.effective, Some(d("2026-08-04")));
    assert_eq!(mm.status, Enactment::Enacted(d("2026-08-04")));
    assert_eq!(mm.remains.as_deref(), Some("Agentic coding"));
    assert_eq!(mm.line, 21);

    let qwen_bf16 = notice
        .iter()
        .find(|x| {
            x.prefix.as_deref() == Some("qwen3.5") && matches!(x.target, Target::Precision(_))
        })
        .unwrap();
    assert_eq!(qwen_bf16.target, Target::Precision("bf16".into()));

    let ab: Vec<_> = notice
        .iter()
        .filter(|x| matches!(x.target, Target::NonSpecArm { .. }))
        .collect();
    assert_eq!(ab.len(), 5);
    for x in &ab {
        assert_eq!(x.status, Enactment::NotYetEnacted, "{x:?}");
    }
    let kimi = ab
        .iter()
        .find(|x| x.prefix.as_deref() == Some("kimik3"))
        .unwrap();
    // "deprecated from day 0": in force on any date.
    assert_eq!(kimi.effective, None);
    assert_eq!(
        kimi.target,
        Target::NonSpecArm {
            scenario: Scenario::AgenticCoding,
            arm: "non-DSpark".into()
        }
    );

    let k25 = notice
        .iter()
        .find(|x| x.prefix.as_deref() == Some("kimik2.5") && x.target == Target::Scenario(S8K1K))
        .unwrap();
    assert_eq!(k25.effective, Some(d("2026-08-07")));
    assert_eq!(k25.status, Enactment::Enacted(d("2026-08-07")));
}

#[test]
fn deprecation_lookups_use_the_given_date() {
    let m = md();
    // minimaxm3 8k1k: still allowed on its last day, deprecated the next day.
    assert!(
        m.deprecation_for("minimaxm3", S8K1K, "fp4", true, d("2026-08-03"))
            .is_none()
    );
    assert!(
        m.deprecation_for("minimaxm3", S8K1K, "fp4", true, d("2026-08-04"))
            .is_some()
    );
    // Agentic coding of minimaxm3 stays, with spec decoding.
    assert!(
        m.deprecation_for(
            "minimaxm3",
            Scenario::AgenticCoding,
            "fp4",
            true,
            d("2026-10-16")
        )
        .is_none()
    );
    // …but the non-EAGLE3 arm is announced (not yet enacted).
    let arm = m
        .deprecation_for(
            "minimaxm3",
            Scenario::AgenticCoding,
            "fp4",
            false,
            d("2026-10-16"),
        )
        .unwrap();
    assert_eq!(arm.status, Enactment::NotYetEnacted);
    // kimik3 non-DSpark: from day 0, so even before the notice.
    assert!(
        m.deprecation_for(
            "kimik3",
            Scenario::AgenticCoding,
            "fp4",
            false,
            d("2026-07-28")
        )
        .is_some()
    );
    // qwen3.5 bf16 in any scenario after 2026-08-03.
    assert!(
        m.deprecation_for("qwen3.5", S8K1K, "bf16", true, d("2026-08-04"))
            .is_some()
    );
    assert!(
        m.deprecation_for("qwen3.5", S8K1K, "fp8", true, d("2026-08-04"))
            .is_none()
    );
    // 1k1k for every model since 2026-07-17.
    let all = m
        .deprecation_for("dsv4", S1K1K, "fp4", false, d("2026-07-17"))
        .unwrap();
    assert_eq!(
        (all.origin, all.prefix.as_deref()),
        (Origin::Scenarios, None)
    );
    assert!(
        m.deprecation_for("dsv4", S1K1K, "fp4", false, d("2026-07-16"))
            .is_none()
    );
    // A retired model: anything after its retirement date.
    let gone = m
        .deprecation_for(
            "glm5.1",
            Scenario::AgenticCoding,
            "fp8",
            true,
            d("2026-07-18"),
        )
        .unwrap();
    assert_eq!(
        (gone.origin, &gone.target),
        (Origin::Matrix, &Target::Model)
    );
    assert!(
        m.deprecation_for(
            "glm5.1",
            Scenario::AgenticCoding,
            "fp8",
            true,
            d("2026-07-17")
        )
        .is_none()
    );
    // dsr1 8k1k is active.
    assert!(
        m.deprecation_for("dsr1", S8K1K, "fp8", false, d("2026-10-16"))
            .is_none()
    );
    assert_eq!(m.deprecations_on("dsr1", d("2026-10-16")).count(), 2);
}

#[test]
fn scenarios_table() {
    let m = md();
    assert_eq!(m.scenarios.len(), 4);
    let by = |s: Scenario| m.scenarios.iter().find(|r| r.scenario == Some(s)).unwrap();
    assert_eq!(by(S8K1K).status, ScenarioStatus::Active);
    assert_eq!(by(S8K1K).isl_osl, Some((8192, 1024)));
    assert_eq!(
        by(S1K1K).status,
        ScenarioStatus::DeprecatedSince(d("2026-07-17"))
    );
    assert_eq!(by(S1K1K).pr, Some(2263));
    let s1k8k = Scenario::Fixed {
        isl: 1024,
        osl: 8192,
    };
    assert_eq!(
        by(s1k8k).status,
        ScenarioStatus::DeprecatedSince(d("2026-03-27"))
    );
    assert_eq!(by(Scenario::AgenticCoding).isl_osl, None);
}

#[test]
fn support_matrix() {
    let m = md();
    assert_eq!(m.matrix.len(), 12);
    let glm = m.model("glm5.1").unwrap();
    assert_eq!(glm.prefixes, vec!["glm5", "glm5.1"]);
    assert_eq!(
        glm.active,
        Active::Retired {
            date: Some(d("2026-07-18")),
            pr: Some(2276)
        }
    );
    assert_eq!(glm.deprecated.len(), 3);
    assert_eq!(m.model("qwen3.8").unwrap().added, Added::Tbd);
    assert_eq!(
        m.model("kimik3").unwrap().added,
        Added::Date {
            date: d("2026-07-27"),
            pr: Some(2391)
        }
    );
    assert!(
        m.model("kimik3")
            .unwrap()
            .lists_active(Scenario::AgenticCoding)
    );
    let qwen = m.model("qwen3.5").unwrap();
    assert!(qwen.lists_active(S8K1K) && qwen.lists_active(Scenario::AgenticCoding));
    assert_eq!(m.model("kimik2.5").unwrap().deprecated.len(), 4);
    let retired: Vec<&str> = m
        .matrix
        .iter()
        .filter(|r| r.is_retired())
        .flat_map(|r| r.prefixes.iter().map(String::as_str))
        .collect();
    assert_eq!(
        retired,
        vec![
            "glm5",
            "glm5.1",
            "minimaxm2.5",
            "kimik2.5",
            "gptoss",
            "llama70b"
        ]
    );
    // L18: kimik2.6 is not registered.
    assert!(m.model("kimik2.6").is_none());
}

#[test]
fn engine_policy() {
    let m = md();
    assert_eq!(m.engine_policy.len(), 5);
    assert_eq!(
        m.policy("dsv4").unwrap().primary,
        vec![Engine::Vllm, Engine::Sglang]
    );
    for p in ["kimik3", "minimaxm3"] {
        assert_eq!(m.policy(p).unwrap().primary, vec![Engine::Vllm], "{p}");
    }
    for p in ["glm5.2", "qwen3.5"] {
        assert_eq!(m.policy(p).unwrap().primary, vec![Engine::Sglang], "{p}");
    }
    assert_eq!(
        m.policy("minimaxm3").unwrap().agreed_drafts,
        vec![
            "Inferact/MiniMax-M3-EAGLE3",
            "Inferact/MiniMax-M3-EAGLE3-GQA"
        ]
    );
    assert_eq!(
        m.new_hardware_exceptions,
        vec![
            "MI455X UALoE72",
            "VR200 NVL72",
            "Rubin NVL8",
            "TPUv8t",
            "TPUv8i"
        ]
    );
}

#[test]
fn parse_never_panics_on_mangled_input() {
    let bytes = std::fs::read(format!("{DATA}/inferencex/MODELS.md")).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    // Cut the file at many points (on char boundaries).
    for cut in (0..text.len()).step_by(97) {
        if text.is_char_boundary(cut) {
            let _ = models_md::parse("MODELS.md", &text.as_bytes()[..cut]);
        }
    }
}
