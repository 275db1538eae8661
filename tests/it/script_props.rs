//! `parse_script` never panics on arbitrary input, and every fact it reports
//! points at a line of the input.

use proptest::prelude::*;
use sweepgate_core::recipe::script::parse_script;

/// Fragments that exercise the grammar's odd corners (quotes, heredocs,
/// arrays, continuations, substitutions), mixed with arbitrary bytes.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("vllm serve ".to_string()),
        Just("python3 -m sglang.launch_server ".to_string()),
        Just("--tp=".to_string()),
        Just("--x ".to_string()),
        Just("\\\n".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("$(".to_string()),
        Just(")".to_string()),
        Just("${A[@]}".to_string()),
        Just("${B:-x}".to_string()),
        Just("A=(".to_string()),
        Just("<<EOF\n".to_string()),
        Just("EOF\n".to_string()),
        Just("if [ \"$X\" ]; then ".to_string()),
        Just("elif ".to_string()),
        Just("else ".to_string()),
        Just("fi\n".to_string()),
        Just("case $K in a) ".to_string()),
        Just(";; esac\n".to_string()),
        Just(" && ".to_string()),
        Just("export C=1 ".to_string()),
        Just("pip install ".to_string()),
        Just("sed -i ".to_string()),
        Just("f() { ".to_string()),
        Just("}\n".to_string()),
        Just("\n".to_string()),
        "[ -~]{0,12}",
        any::<char>().prop_map(|c| c.to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_lines_are_in_range(parts in prop::collection::vec(fragment(), 0..60)) {
        let src: String = parts.concat();
        let facts = parse_script("p.sh", src.as_bytes()).expect("grammar runs");
        let max_line = src.split('\n').count().max(1);
        for s in &facts.servers {
            prop_assert!(s.line >= 1 && s.end_line <= max_line && s.line <= s.end_line);
            for f in &s.flags {
                prop_assert!(f.line >= 1 && f.line <= max_line);
            }
            let _ = facts.resolved_server_flags(s);
        }
        for a in &facts.assignments {
            prop_assert!(a.line >= 1 && a.line <= max_line);
        }
        for e in &facts.expansions {
            prop_assert!(e.line >= 1 && e.line <= max_line);
        }
        for c in &facts.clients {
            let _ = facts.resolved_client_flags(c);
        }
        let _ = facts.unused_assignments();
    }

    #[test]
    fn arbitrary_bytes_do_not_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_script("b.sh", &bytes).expect("grammar runs");
    }
}

#[test]
fn deep_nesting_is_bounded() {
    let src = format!("{}x{}", "$(".repeat(3000), ")".repeat(3000));
    let _ = parse_script("deep.sh", src.as_bytes()).expect("grammar runs");
    let src = format!(
        "{}\n{}",
        "if true; then\n".repeat(1500),
        "fi\n".repeat(1500)
    );
    let f = parse_script("deep_if.sh", src.as_bytes()).expect("grammar runs");
    assert!(f.syntax_errors.is_empty());
}

/// tree-sitter-bash's scanner crashed the process on `{` followed by a
/// character of a supplementary plane (found by the property test above).
#[test]
fn supplementary_plane_characters_do_not_crash_the_scanner() {
    for c in ['\u{E0000}', '\u{92053}', '\u{10FFFF}', '\u{7FFFF}'] {
        let src = format!("{{{c}\nvllm serve --tp 8 {c}\n");
        let f = parse_script("plane.sh", src.as_bytes()).expect("grammar runs");
        assert_eq!(f.servers.len(), 1, "{c:?}");
        assert_eq!(f.servers[0].line, 2);
    }
}
