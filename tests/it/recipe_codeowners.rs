//! CODEOWNERS: facts of the real file, and a differential test against the
//! `codeowner` crate on generated patterns and paths.

use proptest::prelude::*;
use sweepgate_core::recipe::codeowners::{self, Owner, Ownership};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn real() -> codeowners::CodeOwners {
    let path = format!("{DATA}/inferencex/.github/CODEOWNERS");
    let bytes = std::fs::read(&path).unwrap();
    codeowners::parse(".github/CODEOWNERS", &bytes).unwrap()
}

#[test]
fn real_file_has_six_rules_in_order() {
    let co = real();
    assert!(co.invalid.is_empty(), "{:?}", co.invalid);
    let patterns: Vec<(&str, usize)> = co
        .rules
        .iter()
        .map(|r| (r.pattern.as_str(), r.line))
        .collect();
    assert_eq!(
        patterns,
        vec![
            ("*", 1),
            ("configs/amd-master.yaml", 4),
            ("configs/nvidia-master.yaml", 7),
            ("MODELS.md", 10),
            ("MODELS_zh.md", 11),
            ("experimental/operatorx/", 14),
        ]
    );
    assert_eq!(co.rules[1].owners.len(), 5);
}

#[test]
fn catch_all_team_is_on_the_star_line() {
    let co = real();
    assert_eq!(
        co.core_team(),
        Some(&Owner::Team {
            org: "InferenceX".into(),
            team: "core".into()
        })
    );
    assert_eq!(co.catch_all().map(|r| r.line), Some(1));
}

#[test]
fn last_match_wins_on_the_real_file() {
    let co = real();
    // Line 3 alone owns the NVIDIA config: owners never add up across lines.
    let nv = co.owner_of("configs/nvidia-master.yaml");
    assert_eq!(nv.rule().map(|r| r.line), Some(7));
    assert_eq!(
        nv.owners()
            .iter()
            .map(|o| o.to_string())
            .collect::<Vec<_>>(),
        vec!["@ankur-singh", "@kedarpotdar-nv", "@InferenceX/core"]
    );
    // The AMD config does not list the core team.
    let amd = co.owner_of("configs/amd-master.yaml");
    assert!(!amd.owners().iter().any(|o| o.team().is_some()));
    // Unanchored: MODELS.md also matches at depth.
    assert_eq!(
        co.owner_of("docs/MODELS.md").rule().map(|r| r.line),
        Some(10)
    );
    for p in [
        "perf-changelog.yaml",
        "benchmarks/single_node/agentic/x_mtp.sh",
        "golden_al_distribution/dsv4_mtp.yaml",
        "configs/runners.yaml",
    ] {
        assert!(co.is_catch_all_path(p), "{p}");
    }
    assert_eq!(
        co.owner_of("experimental/operatorx/a/b.py")
            .rule()
            .map(|r| r.line),
        Some(14)
    );
    assert!(co.is_catch_all_path("experimental/operatorx"));
    assert!(co.names_user("hbarclay"));
    assert!(!co.names_user("InferenceX"));
    assert_eq!(co.all_owners().len(), 9);
}

fn segment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a", "b", "ab", "a.md", "*", "?", "**", "a*", "*.md", "?b", "*b*", "***",
    ])
}

fn pattern() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop::collection::vec(segment(), 1..4),
        any::<bool>(),
    )
        .prop_map(|(lead, segs, trail)| {
            let mut s = String::new();
            if lead {
                s.push('/');
            }
            s.push_str(&segs.join("/"));
            if trail {
                s.push('/');
            }
            s
        })
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "b", "ab", "a.md", "bb", "x.md", "abb"]),
        1..5,
    )
    .prop_map(|v| v.join("/"))
}

fn owners_token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "@u1", "@org/team", "@u1 @u2", "dev@example.com"])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn agrees_with_codeowner_crate(
        rules in prop::collection::vec((pattern(), owners_token()), 1..6),
        paths in prop::collection::vec(path(), 1..16),
    ) {
        let text: String = rules
            .iter()
            .map(|(p, o)| format!("{p} {o}\n"))
            .collect();
        let ours = codeowners::parse("CODEOWNERS", text.as_bytes()).unwrap();
        let theirs = codeowner::CodeOwners::parse(&text);
        prop_assert_eq!(ours.rules.len(), theirs.rules().len());
        for p in &paths {
            let a = ours.owner_of(p);
            let b = theirs.rule_for(p);
            prop_assert_eq!(a.rule().map(|r| r.line), b.map(|r| r.line), "path {} in\n{}", p, text);
            match (a, b) {
                (Ownership::Unowned(_), Some(r)) => prop_assert!(r.is_unowned()),
                (Ownership::Owned(r), Some(t)) => {
                    prop_assert_eq!(r.owners.len(), t.owners.len());
                    for (x, y) in r.owners.iter().zip(&t.owners) {
                        prop_assert_eq!(x.to_string(), y.to_string());
                    }
                }
                (Ownership::Unmatched, None) => {}
                _ => prop_assert!(false, "ownership state differs for {}", p),
            }
        }
    }

    #[test]
    fn never_panics_on_arbitrary_text(text in ".{0,400}") {
        let co = codeowners::parse("CODEOWNERS", text.as_bytes()).unwrap();
        let _ = co.owner_of("a/b/c.md");
    }
}
