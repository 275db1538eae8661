//! Check 15 — PR description (`docs/rules.md` §2 Check 15,
//! `docs/contracts.md` §6): the claims of the PR body and of the new changelog
//! descriptions are compared with the files shipped at the head.
//!
//! * Hard identifiers (image, pinned AL, draft length K, flags of a fenced
//!   serve command) that contradict the files FAIL. An image claim without
//!   a digest matches by repository and tag.
//! * Advisory claims (parallelism tokens, DP attention, speculative
//!   decoding on/off, prefix caching on/off) that contradict the files are
//!   REVIEW, each listed.
//! * Sentences with a negation ("was", "instead of", "drop", …) never
//!   FAIL: their hard mismatches are REVIEW and their advisory claims are
//!   not compared. Unparsed prose is only counted.
//! * Changelog description lines never FAIL either (measured precision on
//!   the history, `docs/precision.md` "Rule changes"): their hard
//!   mismatches are REVIEW.
use std::sync::LazyLock;

use regex::Regex;

use super::c11_golden;
use super::lint::image::{ImageRef, contradicting_claims, image_claims};
use super::snapshot::ChangedKey;
use super::{CheckResult, Evidence, Snapshot, strip_shell_comments};
use crate::config::RepoConfig;
use crate::recipe::golden::{Decoded, GoldenSet, Lookup, Query};

const N: u8 = 15;

static AL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(synthetic_acceptance_length|SGLANG_SIMULATE_ACC_LEN|TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS|spec-decode-acceptance-length|golden AL|synthetic acceptance)[^0-9\n]{0,12}(\d+\.\d+)")
        .unwrap_or_else(|_| unreachable!())
});
static K: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:num_speculative_tokens[\s:=]*(\d+)|\bK\s*=\s*(\d+)|\b(\d+) draft tokens|num-steps\s+(\d+))")
        .unwrap_or_else(|_| unreachable!())
});
static PAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(TP|EP|DEP|TEP|DP)(\d+)\b").unwrap_or_else(|_| unreachable!()));

const NEGATIONS: [&str; 9] = [
    "not carried over",
    "drop",
    "instead of",
    "replaces",
    "replaced",
    "(was ",
    " was ",
    "previously",
    "no longer",
];

#[derive(Debug, Clone)]
struct Sentence {
    text: String,
    /// Where it is written (file:line for the changelog, PR body).
    source: String,
    ev: Option<Evidence>,
}

impl Sentence {
    /// A changelog description line. Its hard mismatches are REVIEW, not
    /// FAIL: on the real history (issue 17 item 7) such prose quotes other
    /// entries' images, other curves' ALs and SGLang's draft-token count
    /// (K+1) too often for a FAIL; lint L17 reports them per entry.
    fn is_changelog_line(&self) -> bool {
        self.ev.is_some()
    }
}

fn sentences(s: &Snapshot, cfg: &RepoConfig) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in s.pr.body.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || t.is_empty() {
            continue;
        }
        for part in t.split(". ").flat_map(|p| p.split("; ")) {
            if !part.trim().is_empty() {
                out.push(Sentence {
                    text: part.trim().to_owned(),
                    source: "the PR body".into(),
                    ev: None,
                });
            }
        }
    }
    let cl = &cfg.paths.changelog;
    for e in &s.facts(cfg).new_entries {
        for d in &e.description {
            out.push(Sentence {
                text: d.value.clone(),
                source: format!("{cl}:{}", d.line),
                ev: Some(Evidence::File {
                    path: cl.clone(),
                    line: d.line,
                }),
            });
        }
    }
    out
}

/// Fenced blocks of the body that present a serve command.
fn serve_blocks(body: &str) -> Vec<String> {
    crate::markdown::outline(body)
        .code
        .into_values()
        .filter(|c| c.fenced && (c.text.contains("serve") || c.text.contains("launch_server")))
        .map(|c| c.text)
        .collect()
}

/// Shipped ALs and Ks of the agentic spec keys.
fn shipped_al_k(s: &Snapshot, cfg: &RepoConfig, keys: &[&ChangedKey]) -> (Vec<f64>, Vec<u32>) {
    let dir = &cfg.paths.golden_al_dir;
    let set = GoldenSet::parse_files(
        s.policy
            .iter()
            .filter(|(p, _)| p.starts_with(dir.as_str()))
            .map(|(p, t)| (p.as_str(), t.as_bytes())),
    )
    .unwrap_or_default();
    let (mut als, mut ks) = (Vec::new(), Vec::new());
    for k in keys {
        let l = c11_golden::served_of(s, k);
        ks.extend(l.ks.iter().map(|x| x.k));
        for e in &l.encodings {
            match &e.decoded {
                Decoded::Simulated(sim) => {
                    als.push(sim.al);
                    als.push(sim.written);
                }
                Decoded::FromGolden { .. } => {
                    if let (Ok(mode), [kv]) = (l.thinking, l.ks.as_slice()) {
                        let q = Query {
                            prefix: k.entry.prefix(),
                            method: l.method.clone(),
                            sampling: l.sampling,
                            draft_model: l.draft_model.as_deref(),
                            mode,
                            k: kv.k,
                        };
                        if let Lookup::Found { cell, .. } = set.lookup(&q) {
                            als.push(cell.al);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (als, ks)
}

pub fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let sents = sentences(s, cfg);
    if sents.is_empty() && serve_blocks(&s.pr.body).is_empty() {
        return CheckResult::na(N, "empty PR body and no changelog description.");
    }
    let keys: Vec<&ChangedKey> = facts.changed.iter().collect();
    let spec_keys: Vec<&ChangedKey> = keys.iter().copied().filter(|k| k.uses_spec(s)).collect();
    let mut launch = String::new();
    for k in &keys {
        for (_, t) in k.launch_texts(s) {
            launch.push_str(&strip_shell_comments(t));
            launch.push('\n');
        }
    }
    let rows: Vec<_> = keys.iter().flat_map(|k| k.entry.rows()).collect();
    let images: Vec<(String, &ChangedKey)> = keys
        .iter()
        .map(|k| (k.entry.image().to_owned(), *k))
        .collect();
    let (als, ks) = shipped_al_k(s, cfg, &spec_keys);
    let spec_on = !spec_keys.is_empty();
    let dp_on = rows.iter().any(|r| r.dp_attn)
        || launch.contains("--enable-dp-attention")
        || launch.contains("enable-dp-attention: true");
    let prefix_off = launch.contains("--disable-radix-cache")
        || launch.contains("disable-radix-cache: true")
        || launch.contains("--no-enable-prefix-caching");

    let mut checked = 0usize;
    let mut prose = 0usize;
    let mut hard: Vec<(String, Option<Evidence>)> = Vec::new();
    let mut soft: Vec<(String, Option<Evidence>)> = Vec::new();
    for st in &sents {
        let t = &st.text;
        let lower = t.to_ascii_lowercase();
        let negated = NEGATIONS.iter().any(|n| lower.contains(n));
        let mut parsed = false;
        // Hard: images.
        if !images.is_empty() {
            let shipped: Vec<ImageRef> = images.iter().map(|(i, _)| ImageRef::parse(i)).collect();
            let claims = image_claims(t);
            parsed |= !claims.is_empty();
            checked += claims.len();
            // The implementation lint L17 uses: context images (the one
            // replaced, a sibling's) do not contradict.
            for claim in contradicting_claims(t, &shipped) {
                let (img, k) = &images[0];
                let msg = format!(
                    "{} claims image {claim} but {} ships {img}",
                    st.source, k.entry.file
                );
                if negated || st.is_changelog_line() {
                    soft.push((msg, st.ev.clone()))
                } else {
                    hard.push((msg, st.ev.clone()))
                }
            }
        }
        // Hard: AL.
        if !als.is_empty() {
            for c in AL.captures_iter(t) {
                let Some(v) = c.get(2).and_then(|m| m.as_str().parse::<f64>().ok()) else {
                    continue;
                };
                parsed = true;
                checked += 1;
                if !als.iter().any(|a| (a - v).abs() < 0.005) {
                    let shipped = als
                        .iter()
                        .map(|a| format!("{a:.2}"))
                        .collect::<Vec<_>>()
                        .join("/");
                    let msg = format!("{} claims AL {v} but the launch ships {shipped}", st.source);
                    if negated || st.is_changelog_line() {
                        soft.push((msg, st.ev.clone()))
                    } else {
                        hard.push((msg, st.ev.clone()))
                    }
                }
            }
        }
        // Hard: K.
        if !ks.is_empty() {
            for c in K.captures_iter(t) {
                let Some(v) = (1..=4)
                    .find_map(|i| c.get(i))
                    .and_then(|m| m.as_str().parse::<u32>().ok())
                else {
                    continue;
                };
                parsed = true;
                checked += 1;
                if !ks.contains(&v) {
                    let shipped = ks.iter().map(u32::to_string).collect::<Vec<_>>().join("/");
                    let msg = format!(
                        "{} claims K={v} but the launch ships K={shipped}",
                        st.source
                    );
                    if negated || st.is_changelog_line() {
                        soft.push((msg, st.ev.clone()))
                    } else {
                        hard.push((msg, st.ev.clone()))
                    }
                }
            }
        }
        if negated {
            if !parsed {
                prose += 1;
            }
            continue;
        }
        // Advisory: parallelism.
        if !rows.is_empty() {
            for c in PAR.captures_iter(t) {
                let (Some(kind), Some(n)) = (
                    c.get(1),
                    c.get(2).and_then(|m| m.as_str().parse::<i64>().ok()),
                ) else {
                    continue;
                };
                parsed = true;
                checked += 1;
                let ok = match kind.as_str() {
                    "TP" => rows.iter().any(|r| r.tp == Some(n)),
                    "EP" => rows.iter().any(|r| r.ep == Some(n)),
                    "DEP" => rows
                        .iter()
                        .any(|r| r.dp_attn && (r.tp == Some(n) || r.ep == Some(n))),
                    "TEP" => rows.iter().any(|r| r.tp == Some(n) && r.ep == Some(n)),
                    _ => rows.iter().any(|r| r.dp_attn && r.tp == Some(n)),
                };
                if !ok {
                    let have = |f: fn(&super::snapshot::SearchRow) -> Option<i64>| {
                        let mut v: Vec<String> =
                            rows.iter().filter_map(f).map(|x| x.to_string()).collect();
                        v.dedup();
                        v.join("/")
                    };
                    let actual = match kind.as_str() {
                        "EP" => format!("search-space ep: {}", have(|r| r.ep)),
                        "TP" => format!("search-space tp: {}", have(|r| r.tp)),
                        _ => format!(
                            "search-space tp: {}, ep: {}, dp-attn: {}",
                            have(|r| r.tp),
                            have(|r| r.ep),
                            rows.iter().any(|r| r.dp_attn)
                        ),
                    };
                    soft.push((
                        format!("\"{}{n}\" ({actual})", kind.as_str()),
                        st.ev.clone(),
                    ));
                }
            }
        }
        let says_off = ["disabled", "disable ", " off", "without", "turned off"]
            .iter()
            .any(|w| lower.contains(w));
        // Advisory: DP attention.
        if lower.contains("dp-attention")
            || lower.contains("dp attention")
            || lower.contains("attention-dp")
            || lower.contains("dp-attn")
        {
            parsed = true;
            checked += 1;
            let claim_on = !says_off;
            if claim_on != dp_on {
                let why = if dp_on {
                    "DP attention is enabled"
                } else {
                    "no dp-attn search-space row and no --enable-dp-attention in the scripts"
                };
                soft.push((
                    format!(
                        "\"dp-attention{}\" ({why})",
                        if claim_on { "" } else { " off" }
                    ),
                    st.ev.clone(),
                ));
            }
        }
        // Advisory: speculative decoding.
        if [
            "speculative decoding",
            "spec decoding",
            "speculative-decoding",
            "spec-decoding",
        ]
        .iter()
        .any(|w| lower.contains(w))
        {
            parsed = true;
            checked += 1;
            let claim_on = !says_off;
            if claim_on != spec_on {
                let why = if spec_on {
                    let key = spec_keys.first().map_or(String::new(), |k| k.key.clone());
                    format!(
                        "{key} runs speculative decoding: spec-decoding mtp or --speculative-* flags in its script"
                    )
                } else {
                    "no spec-decoding row and no speculative flags".to_owned()
                };
                soft.push((
                    format!(
                        "\"speculative decoding {}\" ({why})",
                        if claim_on { "enabled" } else { "disabled" }
                    ),
                    st.ev.clone(),
                ));
            }
        }
        // Advisory: prefix caching.
        if [
            "prefix caching",
            "prefix cache",
            "radix cache",
            "prefix-caching",
        ]
        .iter()
        .any(|w| lower.contains(w))
        {
            parsed = true;
            checked += 1;
            let claim_on = !says_off;
            if claim_on == prefix_off {
                let why = if prefix_off {
                    "the scripts disable it"
                } else {
                    "no --disable-radix-cache / --no-enable-prefix-caching in the scripts, so it is on"
                };
                soft.push((
                    format!(
                        "\"prefix caching {}\" ({why})",
                        if claim_on { "enabled" } else { "disabled" }
                    ),
                    st.ev.clone(),
                ));
            }
        }
        if !parsed {
            prose += 1;
        }
    }
    // Hard: flags of a fenced serve command.
    for b in serve_blocks(&s.pr.body) {
        for w in b.split_whitespace() {
            let flag = w
                .split('=')
                .next()
                .unwrap_or(w)
                .trim_end_matches(['\\', ',']);
            if flag.starts_with("--") && flag.len() > 2 {
                checked += 1;
                let bare = &flag[2..];
                if !launch.contains(flag) && !launch.contains(&format!("{bare}:")) {
                    hard.push((format!("the PR body's serve command passes {flag}, absent from the shipped script"), None));
                }
            }
        }
    }
    let prose_txt = if prose == 0 {
        String::new()
    } else {
        format!("; {prose} prose sentences not parsed")
    };
    if let Some((msg, ev)) = hard.first() {
        let more = if hard.len() > 1 {
            format!(" (+{} more)", hard.len() - 1)
        } else {
            String::new()
        };
        return CheckResult::fail(N, format!("{msg}{more}."))
            .subject(msg.clone())
            .with_all(ev.clone());
    }
    if !soft.is_empty() {
        let list: Vec<String> = soft.iter().map(|(m, _)| m.clone()).collect();
        let n = list.len();
        return CheckResult::review(
            N,
            format!(
                "{n} contradicted claim{}: {}{prose_txt}.",
                if n == 1 { "" } else { "s" },
                list.join("; ")
            ),
        )
        .with_all(soft.into_iter().filter_map(|(_, e)| e));
    }
    CheckResult::pass(
        N,
        format!("description claims match shipped recipe ({checked} claims checked{prose_txt})."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::ChangedFile;

    const MASTER: &str = "d-fp4-b200-sglang:\n  image: lmsysorg/sglang:deepseek-v4-blackwell\n  model-prefix: d\n  precision: fp4\n  framework: sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, ep: 1, conc-start: 4, conc-end: 64, spec-decoding: mtp }\n";

    fn snap(body: &str) -> Snapshot {
        let mut s = Snapshot::default();
        s.pr.body = body.into();
        s.head_files
            .insert("configs/nvidia-master.yaml".into(), MASTER.into());
        s.head_files.insert(
            "benchmarks/single_node/fixed_seq_len/d_fp4_b200_mtp.sh".into(),
            "sglang serve --tp 8 --speculative-algorithm EAGLE --speculative-num-steps 3\n".into(),
        );
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s
    }

    #[test]
    fn matching_claims_pass() {
        let r = check(
            &snap(
                "Image lmsysorg/sglang:deepseek-v4-blackwell, TP8 with EAGLE speculative decoding (--speculative-num-steps 3).\nSome prose.",
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "description claims match shipped recipe (4 claims checked; 1 prose sentences not parsed)."
        );
    }

    #[test]
    fn wrong_image_fails_and_advisory_is_review() {
        let r = check(
            &snap("Image bump to lmsysorg/sglang:v0.5.9."),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "the PR body claims image lmsysorg/sglang:v0.5.9 but configs/nvidia-master.yaml ships lmsysorg/sglang:deepseek-v4-blackwell."
        );
        let r = check(
            &snap("Baseline (TP8, EP8). Prefix caching disabled."),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Review);
        assert_eq!(
            r.reason,
            "2 contradicted claims: \"EP8\" (search-space ep: 1); \"prefix caching disabled\" (no --disable-radix-cache / --no-enable-prefix-caching in the scripts, so it is on)."
        );
    }

    #[test]
    fn negated_sentences_do_not_block() {
        let r = check(
            &snap("The EP8 of the old entry is not carried over."),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
    }
}
