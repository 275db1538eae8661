//! The bodies of the parser fuzz targets (`fuzz/fuzz_targets/`), one per
//! parser family; the service's `sweepgate::fuzzing` lists every target.
//! Each takes arbitrary bytes, must not panic, and asserts the cheap
//! properties noted on it.
//!
//! They live in the library rather than in the fuzz crate so that the
//! libFuzzer targets and `tests/it/fuzz_corpora.rs` (which replays the
//! committed corpora in CI without an instrumented build) call one copy,
//! and that copy is compiled, linted and kept in step with the parsers by
//! the ordinary build. An `include!`d file would be compiled twice, in two
//! crates, and only one of them under the workspace's clippy.
use crate::commands::{self, ParsedLine};
use crate::config::repo::RepoConfig;
use crate::recipe::{
    ParseError, changelog, codeowners, golden, master, models_md, runners, script, srt, thresholds,
    waiver,
};
use crate::signoff;

/// A target's body: arbitrary bytes in, a panic on a failed property.
pub type Body = fn(&[u8]);

/// Parsers the first byte of a `recipe_yaml` input selects from.
pub(crate) const RECIPE_YAML: &[&str] = &[
    "master",
    "master_document",
    "runners",
    "changelog",
    "changelog_gate",
    "golden",
    "thresholds",
    "srt",
];

/// Parsers the first byte of a `recipe_text` input selects from.
pub(crate) const RECIPE_TEXT: &[&str] = &["models_md", "waiver", "repo_config"];

/// The highest line number a parser may report for `bytes`: one more than
/// the line breaks, counting `\r\n`, `\n` and a lone `\r` (YAML and
/// CommonMark both break lines there).
pub(crate) fn max_line(bytes: &[u8]) -> usize {
    1 + line_breaks(bytes)
}

fn line_breaks(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')))
        .count()
}

pub fn assert_line(what: &str, line: usize, bytes: &[u8]) {
    let max = max_line(bytes);
    assert!(
        (1..=max).contains(&line),
        "{what}: line {line} is outside 1..={max}"
    );
}

fn check_error(e: &ParseError, bytes: &[u8]) {
    assert_line(&e.to_string(), e.loc.line, bytes);
}

/// Splits at the first NUL: two inputs from one (a NUL never occurs in the
/// texts themselves, so the seeds stay readable).
fn split_nul(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&[], data),
    }
}

/// The comment grammar on the body after the first NUL, and the edit diff
/// from the text before it. Every command line is where it says it is; a
/// body inside a fenced code block holds no command; an unchanged edit runs
/// nothing and an edit never runs more than the new body holds.
pub fn commands(data: &[u8]) {
    let (prev, cur) = split_nul(data);
    let (prev, cur) = (String::from_utf8_lossy(prev), String::from_utf8_lossy(cur));
    let parsed = commands::parse_comment(&cur);
    for p in &parsed {
        check_command_line(p, &cur);
    }
    assert_eq!(
        commands::commands(&cur).len(),
        parsed.iter().filter(|p| p.command().is_some()).count()
    );
    for line in cur.lines() {
        if let Some((normalized, _)) = commands::parse_line(line) {
            assert!(normalized.starts_with('/'), "{normalized:?}");
        }
    }

    // Nothing but a closing fence ends a fenced block: without backticks and
    // tildes, the text stays code however it is shaped.
    let inner: String = cur
        .chars()
        .map(|c| if c == '`' || c == '~' { '\'' } else { c })
        .collect();
    let fenced = format!("```\n{inner}\n```\n");
    let hidden = commands::parse_comment(&fenced);
    assert!(
        hidden.is_empty(),
        "a command inside a fenced block: {:?}",
        hidden[0]
    );

    assert!(commands::new_in_edit(&cur, &cur).is_empty());
    assert_eq!(commands::new_in_edit("", &cur), parsed);
    let new = commands::new_in_edit(&prev, &cur);
    assert!(new.len() <= parsed.len());
    for p in &new {
        assert!(parsed.contains(p), "{p:?} is not a line of the new body");
    }
}

fn check_command_line(p: &ParsedLine, body: &str) {
    assert!(
        body.is_char_boundary(p.offset) && body[p.offset..].starts_with('/'),
        "offset {} is not a `/`",
        p.offset
    );
    assert_eq!(
        p.line,
        1 + line_breaks(&body.as_bytes()[..p.offset]),
        "line of offset {}",
        p.offset
    );
    assert!(p.normalized.starts_with('/'), "{:?}", p.normalized);
}

/// Sign-off detection and checklist parsing: the text before the first NUL
/// is read as a checklist template, the rest as a sign-off body matched
/// against it (and against the fixture-shaped built-in template below).
/// Item lines are lines of their text; matches are one-to-one.
pub fn signoff(data: &[u8]) {
    let (template, body) = split_nul(data);
    let (template, body) = (
        String::from_utf8_lossy(template),
        String::from_utf8_lossy(body),
    );
    let _ = signoff::is_signoff(&body);
    let _ = signoff::detail_section(&body);
    let _ = signoff::signed_name(&body);
    for item in signoff::checkbox_items(&body, 1) {
        assert_line("checkbox item", item.line, body.as_bytes());
        let _ = item.short();
    }
    let s = signoff::similarity(&template, &body);
    assert!((0.0..=1.0).contains(&s), "similarity {s}");

    let known = signoff::known_items(signoff::KNOWN_ITEMS_TOML).unwrap_or_default();
    let _ = signoff::known_items(&template);
    let builtin = signoff::parse_template("template.md", SIGNOFF_TEMPLATE).ok();
    let parsed = signoff::parse_template("template.md", &template);
    if let Ok(t) = &parsed {
        for item in &t.items {
            assert_line("template item", item.line, template.as_bytes());
            let _ = signoff::checks_for(item, &known);
        }
    }
    for t in parsed.iter().chain(builtin.iter()) {
        let m = signoff::match_checklist(t, &body, 0.5);
        assert_eq!(m.matched.len(), t.items.len());
        let mut used: Vec<usize> = m.matched.iter().flatten().copied().collect();
        assert!(used.iter().all(|&j| j < m.signed.len()));
        used.sort_unstable();
        used.dedup();
        assert_eq!(used.len(), m.matched.iter().flatten().count(), "one-to-one");
        let _ = (m.missing(t), m.unchecked(t));
    }
}

/// A template shaped like `docs/PR_REVIEW_CHECKLIST.md`, so sign-off bodies
/// are matched against real-looking items even when the input has none.
const SIGNOFF_TEMPLATE: &str = "## Template\n```\nAs a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [ ] Verified that this PR passes evals\n  - [ ] I linked the corresponding upstream PR\n- [ ] Verified the sweep ran on the head commit\n\nSigned: `FILL_IN_GITHUB_USERNAME`\n```\n";

/// The YAML parsers of the benchmark repository, selected by the first byte:
/// master configs (whole and per document), runners, the changelog (and its
/// PR gate over base NUL head), golden AL curves, eval thresholds and srt
/// recipes. Errors name a line of the input.
pub fn recipe_yaml(data: &[u8]) {
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    match RECIPE_YAML[usize::from(sel) % RECIPE_YAML.len()] {
        "master" => match master::parse("configs/nvidia-master.yaml", bytes) {
            Ok(cfg) => {
                let _ = cfg.search_entry_count();
                for key in cfg.keys() {
                    assert!(cfg.get(key).is_some(), "{key}");
                }
            }
            Err(e) => check_error(&e, bytes),
        },
        "master_document" => {
            let (a, b) = split_nul(bytes);
            let doc = master::parse_document("configs/a-master.yaml", a)
                .and_then(|mut d| {
                    d.merge(master::parse_document("configs/b-master.yaml", b)?)?;
                    Ok(d)
                })
                .and_then(|d| d.validate());
            if let Err(e) = doc {
                // The error is in either file.
                assert_line(
                    &e.to_string(),
                    e.loc.line,
                    if e.loc.file.starts_with("configs/a") {
                        a
                    } else {
                        b
                    },
                );
            }
        }
        "runners" => match runners::parse("configs/runners.yaml", bytes) {
            Ok(r) => {
                let _ = (r.distinct_runners(), r.sorted_hardware_keys());
                for name in r.sorted_label_names() {
                    assert!(r.label(name).is_some(), "{name}");
                }
            }
            Err(e) => check_error(&e, bytes),
        },
        "changelog" => {
            match changelog::parse("perf-changelog.yaml", bytes) {
                Ok(c) => {
                    for e in &c.entries {
                        assert_line("changelog entry", e.line, bytes);
                    }
                }
                Err(e) => check_error(&e, bytes),
            }
            if let Err(e) = changelog::read("perf-changelog.yaml", bytes) {
                check_error(&e, bytes);
            }
        }
        "changelog_gate" => {
            let (base, head) = split_nul(bytes);
            let keys = ["dsr1-fp4-b200-sglang", "gptoss-fp4-mi355x-vllm"];
            for master_keys in [None, Some(&keys[..])] {
                let opts = changelog::GateOptions {
                    all_evals_label: base.len() % 2 == 1,
                    evals_only_label: head.len() % 2 == 1,
                    master_keys,
                };
                let _ = changelog::pr_gate("perf-changelog.yaml", base, head, &opts).passed();
            }
        }
        "golden" => match golden::parse("golden_al_distribution/x_mtp.yaml", bytes) {
            Ok(curve) => {
                let _ = curve.name();
                for mode in &curve.modes {
                    for cell in &mode.cells {
                        let _ = golden::cell_loc(&curve, cell);
                    }
                }
            }
            Err(e) => check_error(&e, bytes),
        },
        "thresholds" => match thresholds::parse("utils/evals/thresholds.yaml", bytes) {
            Ok(t) => {
                let _ = t.lookup(Some("dsr1"), "gsm8k");
                let _ = t.lookup(None, "");
            }
            Err(e) => check_error(&e, bytes),
        },
        "srt" => match srt::parse_recipe("recipes/x.yaml", bytes) {
            Ok(r) => {
                let _ = (
                    r.serving_role(),
                    r.env_everywhere("X"),
                    r.arg_everywhere("tp"),
                );
            }
            Err(e) => check_error(&e, bytes),
        },
        other => unreachable!("{other} is in RECIPE_YAML"),
    }
}

/// The text parsers selected by the first byte: MODELS.md, waivers and the
/// repository configuration (`.github/sweepgate.toml`). Errors name a line.
pub fn recipe_text(data: &[u8]) {
    let Some((&sel, bytes)) = data.split_first() else {
        return;
    };
    match RECIPE_TEXT[usize::from(sel) % RECIPE_TEXT.len()] {
        "models_md" => match models_md::parse("MODELS.md", bytes) {
            Ok(m) => {
                let _ = (m.model("dsr1"), m.policy("dsr1"));
            }
            Err(e) => check_error(&e, bytes),
        },
        "waiver" => match waiver::parse("docs/waiver/2508.md", bytes) {
            Ok(w) => {
                let _ = (w.missing_sections(), w.name_matches_pr(), w.covers("dsr1"));
            }
            Err(e) => check_error(&e, bytes),
        },
        "repo_config" => {
            if let Err(e) = RepoConfig::from_toml(".github/sweepgate.toml", bytes) {
                assert_line(&e.to_string(), e.line, bytes);
            }
        }
        other => unreachable!("{other} is in RECIPE_TEXT"),
    }
}

/// CODEOWNERS: the text before the first NUL is the file, each line after
/// it a path to look up. Errors name a line.
pub fn codeowners(data: &[u8]) {
    let (paths, file) = split_nul(data);
    match codeowners::parse(".github/CODEOWNERS", file) {
        Ok(c) => {
            let _ = (
                c.catch_all(),
                c.core_team(),
                c.all_owners(),
                c.names_user("x"),
            );
            for path in String::from_utf8_lossy(paths).lines() {
                let o = c.owner_of(path);
                let _ = (o.rule(), o.owners(), c.is_catch_all_path(path));
            }
        }
        Err(e) => check_error(&e, file),
    }
}

/// The bash script parser: every fact it reports is on a line of the script,
/// and flag resolution terminates.
pub fn script(data: &[u8]) {
    let facts = match script::parse_script("benchmarks/single_node/x.sh", data) {
        Ok(f) => f,
        Err(e) => return check_error(&e, data),
    };
    for &line in &facts.syntax_errors {
        assert_line("syntax error", line, data);
    }
    for a in &facts.assignments {
        assert_line("assignment", a.line, data);
    }
    for launch in &facts.servers {
        assert_line("server launch", launch.line, data);
        let _ = facts.resolved_server_flags(launch);
    }
    for call in &facts.clients {
        assert_line("client call", call.line, data);
        let _ = facts.resolved_client_flags(call);
    }
    let _ = (
        facts.is_recipe(),
        facts.required_vars(),
        facts.unused_assignments(),
        facts.first_server_line(),
    );
}
