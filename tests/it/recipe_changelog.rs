//! perf-changelog.yaml: facts of the real file, the PR gate and the strict
//! byte rules on edits of it, and no panics on arbitrary input.

use proptest::prelude::*;
use sweepgate_core::recipe::changelog::{
    self, DEFAULT_PLACEHOLDERS, GateOptions, GateRule, PrLink, ScenarioType, Side, StrictMode,
    StrictOptions, StrictRule,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
const FILE: &str = "perf-changelog.yaml";
const REPO: &str = "SemiAnalysisAI/InferenceX";

fn real() -> Vec<u8> {
    std::fs::read(format!("{DATA}/inferencex/perf-changelog.yaml")).unwrap()
}

fn pr(number: u64) -> StrictOptions<'static> {
    StrictOptions {
        repo: REPO,
        mode: StrictMode::Pr { number },
        placeholders: &DEFAULT_PLACEHOLDERS,
    }
}

fn entry(key: &str, link: &str) -> String {
    format!(
        "- config-keys:\n    - {key}\n  description:\n    - \"Test change\"\n  pr-link: {link}\n"
    )
}

fn with_suffix(base: &[u8], suffix: &str) -> Vec<u8> {
    let mut v = base.to_vec();
    v.extend_from_slice(suffix.as_bytes());
    v
}

fn gate(base: &[u8], head: &[u8]) -> changelog::GateReport {
    changelog::pr_gate(FILE, base, head, &GateOptions::default())
}

fn rules(f: &[changelog::Finding]) -> Vec<StrictRule> {
    f.iter().map(|f| f.rule).collect()
}

#[test]
fn real_file_has_772_entries_with_fields_and_lines() {
    let bytes = real();
    let t = std::time::Instant::now();
    let cl = changelog::parse(FILE, &bytes).unwrap();
    // Parsing the whole 395 KB file is fast even in a debug build.
    assert!(t.elapsed().as_millis() < 2000, "{:?}", t.elapsed());
    assert_eq!(cl.entries.len(), 772);

    let first = &cl.entries[0];
    assert_eq!((first.index, first.line), (0, 1));
    assert_eq!(first.config_keys[0].value, "70b-fp8-*-vllm");
    assert_eq!(first.config_keys[0].line, 2);
    assert_eq!(first.description.len(), 2);
    assert_eq!(
        first.pr_link.value,
        "https://github.com/SemiAnalysisAI/InferenceX/pull/95"
    );
    assert_eq!(first.pr_link.line, 6);

    let last = cl.entries.last().unwrap();
    assert_eq!((last.index, last.line), (771, 6373));
    assert_eq!(last.scenario_type, Some(vec![ScenarioType::AgenticCoding]));
    assert!(last.pr_link.value.ends_with("/pull/2707"));

    assert_eq!(cl.entries.iter().filter(|e| e.is_evals_only()).count(), 6);
    assert_eq!(
        cl.entries
            .iter()
            .filter(|e| e.scenario_type.is_some())
            .count(),
        67
    );
    let append: Vec<_> = cl.entries.iter().filter(|e| e.is_append_only()).collect();
    assert_eq!(append.len(), 1);
    assert!(append[0].pr_link.value.ends_with("/pull/2647"));
    assert_eq!(append[0].append_only.unwrap().line, 6318);
    assert_eq!(
        cl.entry_at_line(6319).map(|e| e.index),
        Some(append[0].index)
    );
}

#[test]
fn real_links_classify() {
    let cl = changelog::parse(FILE, &real()).unwrap();
    let mut other = Vec::new();
    let mut placeholder = Vec::new();
    for e in &cl.entries {
        match changelog::classify_link(&e.pr_link.value, REPO, &DEFAULT_PLACEHOLDERS) {
            PrLink::Canonical(_) => {}
            PrLink::Placeholder => placeholder.push(e),
            PrLink::Other => other.push(e),
        }
    }
    // Trailing spaces and the multi-line scalar are trimmed/folded by YAML, so
    // only two values are non-canonical after parsing.
    assert_eq!(other.len(), 1);
    assert_eq!(other[0].pr_link.line, 5123);
    assert!(other[0].pr_link.value.ends_with("/pull/2305/changes"));
    assert_eq!(placeholder.len(), 1);
    assert_eq!(placeholder[0].pr_link.line, 5598);
    assert_eq!(
        placeholder[0].config_keys[0].value,
        "glm5.1-fp8-b200-tilert"
    );
    let folded = cl.entry_at_line(3595).unwrap();
    assert_eq!(
        folded.pr_link.value,
        "https://github.com/SemiAnalysisAI/InferenceX/pull/1701"
    );
    assert_eq!(folded.pr_link.line, 3596);
}

#[test]
fn real_file_passes_the_strict_file_rules() {
    let f = changelog::strict_findings(FILE, None, &real(), &pr(1));
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn clean_append_passes_gate_and_strict_rules() {
    let base = real();
    let head = with_suffix(&base, &format!("\n{}", entry("dsv4-fp4-b200-vllm", "XXX")));
    let g = gate(&base, &head);
    assert!(g.passed(), "{:#?}", g.violations);
    assert_eq!(g.appended.len(), 1);
    assert_eq!(g.appended[0].index, 772);
    assert_eq!(g.appended[0].line, 6382);
    assert_eq!(g.appended[0].pr_link.line, 6386);
    assert!(changelog::strict_findings(FILE, Some(&base), &head, &pr(2710)).is_empty());

    // The PR's own canonical link is fine; another PR's link is not.
    let own = with_suffix(
        &base,
        &format!(
            "\n{}",
            entry(
                "dsv4-fp4-b200-vllm",
                "https://github.com/SemiAnalysisAI/InferenceX/pull/2710"
            )
        ),
    );
    assert!(changelog::strict_findings(FILE, Some(&base), &own, &pr(2710)).is_empty());
    let f = changelog::strict_findings(FILE, Some(&base), &own, &pr(2711));
    assert_eq!(rules(&f), vec![StrictRule::AppendedLink]);
    assert_eq!((f[0].entry, f[0].loc.line), (Some(772), 6386));
    // On main a placeholder is not allowed.
    let main = StrictOptions {
        mode: StrictMode::Main,
        ..pr(0)
    };
    let f = changelog::strict_findings(FILE, Some(&base), &head, &main);
    assert_eq!(rules(&f), vec![StrictRule::AppendedLink]);
}

#[test]
fn master_keys_must_resolve() {
    let base = real();
    let head = with_suffix(
        &base,
        &format!("\n{}", entry("dsv4-fp4-b200-vllm-typo", "XXX")),
    );
    let keys = ["dsv4-fp4-b200-vllm", "dsr1-fp8-h200-sglang"];
    let opts = GateOptions {
        master_keys: Some(&keys),
        ..GateOptions::default()
    };
    let g = changelog::pr_gate(FILE, &base, &head, &opts);
    assert_eq!(g.violations.len(), 1);
    assert_eq!(g.violations[0].rule, GateRule::UnknownConfigKey);
    assert_eq!(g.violations[0].loc.line, 6383);
    assert_eq!(g.violations[0].entry, Some(772));

    let glob = with_suffix(&base, &format!("\n{}", entry("dsv4*", "XXX")));
    assert!(changelog::pr_gate(FILE, &base, &glob, &opts).passed());
    // `?` is literal in the changelog.
    let q = with_suffix(&base, &format!("\n{}", entry("dsv4-fp4-b200-vll?", "XXX")));
    assert!(!changelog::pr_gate(FILE, &base, &q, &opts).passed());
}

#[test]
fn mid_file_insertion_passes_the_gate_but_not_the_strict_rules() {
    let base = real();
    let text = String::from_utf8(base.clone()).unwrap();
    let at = text
        .find("- config-keys:\n    - gptoss-fp4-b200-vllm\n")
        .unwrap();
    let head = format!(
        "{}{}\n{}",
        &text[..at],
        entry("dsv4-fp4-b200-vllm", "XXX"),
        &text[at..]
    );
    let g = gate(&base, head.as_bytes());
    assert!(g.passed(), "{:#?}", g.violations);
    assert_eq!(g.appended.len(), 1);
    assert_eq!(g.appended[0].index, 3);
    let f = changelog::strict_findings(FILE, Some(&base), head.as_bytes(), &pr(9));
    assert!(rules(&f).contains(&StrictRule::EntryChanged));
    assert!(rules(&f).contains(&StrictRule::HistoricalBytesChanged));
    assert_eq!(
        f.iter()
            .find(|f| f.rule == StrictRule::EntryChanged)
            .unwrap()
            .entry,
        Some(3)
    );
}

#[test]
fn link_correction_fails_the_gate_and_passes_strict_rules() {
    let base = real();
    let text = String::from_utf8(base.clone()).unwrap();
    let head = text.replace(
        "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n",
        "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2533\n",
    );
    let g = gate(&base, head.as_bytes());
    assert_eq!(g.violations.len(), 2, "{:#?}", g.violations);
    let del = &g.violations[0];
    assert_eq!(
        (del.rule, del.side, del.loc.line),
        (GateRule::Deletion, Side::Base, 5598)
    );
    let cl = changelog::parse(FILE, &base).unwrap();
    assert_eq!(del.entry, cl.entry_at_line(5598).map(|e| e.index));
    // The corrected line is "added" but is not a list of entries.
    assert_eq!(g.violations[1].rule, GateRule::AddedYaml);
    assert!(changelog::strict_findings(FILE, Some(&base), head.as_bytes(), &pr(9)).is_empty());

    // A correction to a non-canonical link is reported.
    let bad = text.replace(
        "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n",
        "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2533/files\n",
    );
    let f = changelog::strict_findings(FILE, Some(&base), bad.as_bytes(), &pr(9));
    assert_eq!(rules(&f), vec![StrictRule::CorrectionNotCanonical]);
    assert_eq!(f[0].loc.line, 5598);
    // Mixed with an addition.
    let mixed = format!("{head}\n{}", entry("dsv4-fp4-b200-vllm", "XXX"));
    let f = changelog::strict_findings(FILE, Some(&base), mixed.as_bytes(), &pr(9));
    assert!(rules(&f).contains(&StrictRule::CorrectionWithAdditions));
}

#[test]
fn deletions_and_removed_entries() {
    let base = real();
    let text = String::from_utf8(base.clone()).unwrap();
    let at = text.rfind("\n- config-keys:").unwrap();
    let head = &text[..at + 1];
    let g = gate(&base, head.as_bytes());
    assert!(
        g.violations
            .iter()
            .all(|v| v.rule == GateRule::Deletion || v.rule == GateRule::NoAdditions)
    );
    assert!(
        g.violations
            .iter()
            .any(|v| v.rule == GateRule::Deletion && v.entry == Some(771))
    );
    let f = changelog::strict_findings(FILE, Some(&base), head.as_bytes(), &pr(9));
    assert!(rules(&f).contains(&StrictRule::EntriesRemoved));

    // Whitespace-only deletions are tolerated by the gate: drop the "  " line
    // after the append-only entry while appending a new one.
    let head = text.replacen("  append-only: true\n  \n", "  append-only: true\n", 1);
    let head = format!("{head}\n{}", entry("dsv4-fp4-b200-vllm", "XXX"));
    let g = gate(&base, head.as_bytes());
    assert!(g.passed(), "{:#?}", g.violations);
}

#[test]
fn separators_and_trailing_blank_lines() {
    let base = real();
    // Two appended entries without an empty line between them.
    let head = with_suffix(
        &base,
        &format!("\n{}{}", entry("a", "XXX"), entry("b", "XXX")),
    );
    let g = gate(&base, &head);
    assert!(g.passed());
    assert_eq!(g.appended.len(), 2);
    let f = changelog::strict_findings(FILE, Some(&base), &head, &pr(9));
    assert_eq!(rules(&f), vec![StrictRule::Separator]);
    assert_eq!(f[0].entry, Some(773));

    // No empty line between the old tail and the new entry.
    let head = with_suffix(&base, &entry("a", "XXX"));
    let f = changelog::strict_findings(FILE, Some(&base), &head, &pr(9));
    assert_eq!(rules(&f), vec![StrictRule::SuffixStart]);
    assert_eq!(f[0].loc.line, 6381);

    // A blank line at the end of the file.
    let head = with_suffix(&base, &format!("\n{}\n", entry("a", "XXX")));
    let f = changelog::strict_findings(FILE, Some(&base), &head, &pr(9));
    assert_eq!(rules(&f), vec![StrictRule::TrailingBlankLine]);
}

#[test]
fn file_rules() {
    let base = real();
    let no_newline = with_suffix(&base, &format!("\n{}", entry("a", "XXX").trim_end()));
    let g = gate(&base, &no_newline);
    assert_eq!(g.violations.len(), 1);
    assert_eq!(g.violations[0].rule, GateRule::MissingFinalNewline);
    let f = changelog::strict_findings(FILE, Some(&base), &no_newline, &pr(9));
    assert!(rules(&f).contains(&StrictRule::MissingFinalNewline));

    let tab = with_suffix(
        &base,
        "\n- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link:\tXXX\n",
    );
    let f = changelog::strict_findings(FILE, Some(&base), &tab, &pr(9));
    let t = f
        .iter()
        .find(|f| f.rule == StrictRule::ForbiddenByte)
        .unwrap();
    assert_eq!((t.loc.line, t.loc.column), (6386, 11));

    // `config-keys` not first: parses, but the entry-line count is off.
    let reordered = with_suffix(
        &base,
        "\n- pr-link: XXX\n  config-keys:\n    - a\n  description:\n    - \"x\"\n",
    );
    assert!(gate(&base, &reordered).passed());
    let f = changelog::strict_findings(FILE, Some(&base), &reordered, &pr(9));
    assert!(rules(&f).contains(&StrictRule::EntryLineCount));

    let dup = with_suffix(
        &base,
        "\n- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link: XXX\n  pr-link: XXX\n",
    );
    let g = gate(&base, &dup);
    assert_eq!(g.violations[0].rule, GateRule::AddedYaml);
    assert_eq!(g.violations[0].loc.line, 6387);
    let f = changelog::strict_findings(FILE, Some(&base), &dup, &pr(9));
    assert_eq!(rules(&f), vec![StrictRule::Yaml]);
}

#[test]
fn schema_rules_on_added_entries() {
    let base = real();
    let add = |s: &str| with_suffix(&base, &format!("\n{s}"));
    let cases = [
        (
            "- config-keys: []\n  description:\n    - x\n  pr-link: XXX\n",
            6382,
            "must not be empty",
        ),
        (
            "- config-keys:\n    - a\n  description:\n    - x\n  pr-link: XXX\n  owner: me\n",
            6387,
            "unknown field `owner`",
        ),
        (
            "- config-keys:\n    - a\n  description:\n    - x\n",
            6382,
            "missing `pr-link`",
        ),
        (
            "- config-keys:\n    - 1.5\n  description:\n    - x\n  pr-link: XXX\n",
            6383,
            "must be strings",
        ),
        (
            "- config-keys:\n    - a\n  description:\n    - x\n  pr-link: XXX\n  scenario-type:\n    - 1k1k\n",
            6388,
            "unknown scenario type",
        ),
        (
            "- config-keys:\n    - a\n  description:\n    - x\n  pr-link: XXX\n  append-only: true\n  evals-only: true\n",
            6387,
            "cannot be combined with `evals-only`",
        ),
        (
            "- config-keys:\n    - a\n  description:\n    - x\n  pr-link: XXX\n  eval-min-prefill-ep: 0\n",
            6387,
            "≥ 1",
        ),
    ];
    for (text, line, msg) in cases {
        let g = gate(&base, &add(text));
        assert_eq!(g.violations.len(), 1, "{text}: {:#?}", g.violations);
        let v = &g.violations[0];
        assert_eq!(v.rule, GateRule::Schema, "{text}");
        assert_eq!(v.loc.line, line, "{text}");
        assert!(v.message.contains(msg), "{text}: {}", v.message);
        assert_eq!(v.entry, Some(772), "{text}");
    }
}

#[test]
fn append_only_mixing_and_labels() {
    let base = real();
    let ao =
        "- config-keys:\n    - a\n  description:\n    - x\n  pr-link: XXX\n  append-only: true\n";
    let head = with_suffix(&base, &format!("\n{ao}\n{}", entry("b", "XXX")));
    let g = gate(&base, &head);
    assert_eq!(g.violations.len(), 1);
    assert_eq!(
        (g.violations[0].rule, g.violations[0].entry),
        (GateRule::MixedAppendOnly, Some(773))
    );

    let head = with_suffix(&base, &format!("\n{ao}"));
    assert!(gate(&base, &head).passed());
    let opts = GateOptions {
        evals_only_label: true,
        ..GateOptions::default()
    };
    let g = changelog::pr_gate(FILE, &base, &head, &opts);
    assert_eq!(g.violations[0].rule, GateRule::AppendOnlyWithEvalLabel);
    assert_eq!(g.violations[0].loc.line, 6387);
}

#[test]
fn parse_errors_carry_file_line_and_column() {
    let e = changelog::parse(
        FILE,
        b"- config-keys:\n    - a\n  description: [x]\n  pr-link: XXX\n  bogus: 1\n",
    )
    .unwrap_err();
    assert_eq!(
        (e.loc.file.as_str(), e.loc.line, e.loc.column),
        (FILE, 5, 3)
    );
    let e = changelog::parse(FILE, b"config-keys: a\n").unwrap_err();
    assert_eq!((e.loc.line, e.loc.column), (1, 1));
    let e = changelog::parse(FILE, b"- config-keys:\n  - [\n").unwrap_err();
    assert_eq!(e.loc.file, FILE);
    assert!(e.loc.line >= 2);
    let e = changelog::parse(FILE, b"- a\n- \xff\n").unwrap_err();
    assert_eq!((e.loc.line, e.loc.column), (2, 3));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parser_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = changelog::read(FILE, &bytes);
        let _ = changelog::strict_findings(FILE, Some(&bytes), &bytes, &pr(1));
    }

    #[test]
    fn parser_never_panics_on_yamlish_text(
        text in prop::collection::vec(
            prop::sample::select(vec![
                "- ", "config-keys:", "description:", "pr-link:", " ", "  ", "\n", "- a", "[", "]",
                "{", "}", ":", "'", "\"", "&x ", "*x", "!!str ", "#", "|", ">", "append-only: true",
                "1.5", "null", "~", "\t", "? ", ",", "---\n", "...\n",
            ]),
            0..80,
        ).prop_map(|v| v.concat())
    ) {
        let _ = changelog::read(FILE, text.as_bytes());
        let _ = changelog::pr_gate(FILE, b"", text.as_bytes(), &GateOptions::default());
    }

    #[test]
    fn gate_never_panics_on_edits_of_the_tail(
        cut in 0usize..4000,
        insert in "[- a-z:\\n\"']{0,120}",
    ) {
        // The last entries only, so 256 cases stay fast in debug builds.
        let full = real();
        let start = full.len() - 8000;
        let start = start + full[start..].windows(15).position(|w| w == b"\n- config-keys:").unwrap() + 1;
        let base = full[start..].to_vec();
        let at = base.len() - 4000 + cut;
        let mut head = base[..at].to_vec();
        head.extend_from_slice(insert.as_bytes());
        head.extend_from_slice(&base[at..]);
        let g = changelog::pr_gate(FILE, &base, &head, &GateOptions::default());
        for v in &g.violations {
            prop_assert!(v.loc.line >= 1);
        }
        let _ = changelog::strict_findings(FILE, Some(&base), &head, &pr(1));
    }
}
