//! L17 (E / W): changelog text contradicts the config (docs/rules.md §3
//! L17, Check 15 rules; seed 003). Hard identifiers in new `description`
//! lines (image, AL, K) must match the files at head (E); parallelism, EP,
//! dp-attention, speculative-decoding and prefix-caching claims warn (W),
//! with negation suppression.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::context::{Context, settings, settings_at};
use super::image::{ImageRef, contradicting_claims, is_dev_build};
use super::{Finding, Rule, Severity};
use crate::recipe::golden::Decoded;
use crate::recipe::golden::served;

pub(crate) const RULE: Rule = Rule {
    id: "L17",
    name: "changelog-claims",
    description: "A new changelog entry's description must agree with the configs and scripts it ships.",
    check,
};

static TP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bTP(\d+)\b").expect("literal regex"));
static EP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bEP(\d+)\b").expect("literal regex"));
static DP_ATTN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(dp[- ]attention|dp[- ]attn|attention[- ]dp)\b").expect("literal regex")
});
const SUBJECT: &str =
    r"prefix[- ]caching|radix[- ]cache|speculative[- ]decoding|spec[- ]decoding|MTP|EAGLE";
static STATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)((?:{SUBJECT})(?:\s*(?:,|and|&|\+)\s*(?:{SUBJECT}))*)\s+(?:are\s+|is\s+|were\s+|was\s+)?(disabled|off|enabled|on)\b"
    ))
    .expect("literal regex")
});
static SUBJECTS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("(?i){SUBJECT}")).expect("literal regex"));
static AL_CLAIM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(synthetic_acceptance_length|SGLANG_SIMULATE_ACC_LEN|golden AL|synthetic AL|acceptance length)\D{0,12}?(\d+\.\d+)")
        .expect("literal regex")
});
static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d+\.\d+").expect("literal regex"));
static K_CLAIM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:num_speculative_tokens\W{0,3}|\bK\s*=\s*|num-steps\s*)(\d+)|\b(\d+) draft tokens",
    )
    .expect("literal regex")
});
static AL_SHIPPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(synthetic_acceptance_length|SGLANG_SIMULATE_ACC_LEN|SYNTHETIC_ACCEPTANCE_LENGTH|--spec-decode-acceptance-length|TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS)["']?\s*[:= ]\s*["']?(\d+(?:\.\d+)?)"#)
        .expect("literal regex")
});
static K_SHIPPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(num_speculative_tokens|speculative-num-steps|num-speculative-tokens|max_draft_len)["']?\s*[:= ]\s*["']?(\d+)"#)
        .expect("literal regex")
});

const NEGATIONS: [&str; 7] = [
    "not carried over",
    "drop",
    "instead of",
    "replace",
    "no longer",
    "removed",
    "previously",
];

struct Shipped {
    tp: BTreeSet<i64>,
    ep: BTreeSet<i64>,
    dp_attn: bool,
    spec: bool,
    prefix_caching: bool,
    images: Vec<ImageRef>,
    als: Vec<f64>,
    ks: BTreeSet<u64>,
}

fn shipped(ctx: &Context<'_>, keys: &[String]) -> Shipped {
    let mut s = Shipped {
        tp: BTreeSet::new(),
        ep: BTreeSet::new(),
        dp_attn: false,
        spec: false,
        prefix_caching: true,
        images: Vec::new(),
        als: Vec::new(),
        ks: BTreeSet::new(),
    };
    let mut texts: Vec<String> = Vec::new();
    for k in keys {
        let Some(e) = ctx.entry(k) else { continue };
        s.images.push(ImageRef::parse(&e.image.value));
        for se in e.search_entries() {
            if let Some(tp) = &se.tp {
                s.tp.insert(tp.value);
            }
            s.ep.insert(se.ep());
            s.dp_attn |= se.dp_attn();
            s.spec |= se.spec_decoding().as_str() != "none";
            for w in [&se.prefill, &se.decode].into_iter().flatten() {
                s.tp.insert(w.tp.value);
                s.ep.insert(w.ep.value);
                s.dp_attn |= w.dp_attn.value;
            }
            texts.extend(settings(se));
        }
        // The launch as Check 11 and L19 read it (variables resolved), so
        // an AL kept in a shell variable is shipped too.
        let mut launch = Vec::new();
        for sc in ctx.scripts_of(k) {
            launch.extend(served::script_settings(&sc.facts, &sc.text));
        }
        for r in ctx.recipes_of(k) {
            launch.extend(served::recipe_settings(r));
        }
        let items: Vec<(String, usize)> = e.search_entries().flat_map(settings_at).collect();
        let master = served::master_settings(e.file.as_ref(), &items);
        let l = served::served(&launch, &master, &e.framework.value, &[]);
        s.ks.extend(l.ks.iter().map(|x| u64::from(x.k)));
        for enc in &l.encodings {
            if let Decoded::Simulated(sim) = &enc.decoded {
                s.als.push(sim.al);
                s.als.push(sim.written);
            }
        }
        for sc in ctx.scripts_of(k) {
            texts.push(crate::checks::strip_shell_comments(&sc.text));
        }
        for r in ctx.recipes_of(k) {
            if let Some(t) = ctx.input.head_text(&r.path) {
                texts.push(t.to_string());
            }
        }
    }
    for t in &texts {
        if super::spec::spec_line(t).is_some() {
            s.spec = true;
        }
        if t.contains("--disable-radix-cache")
            || t.contains("--no-enable-prefix-caching")
            || t.contains("disable-radix-cache: true")
        {
            s.prefix_caching = false;
        }
        if t.contains("--enable-dp-attention") || t.contains("enable-dp-attention: true") {
            s.dp_attn = true;
        }
        for c in AL_SHIPPED.captures_iter(t) {
            if let Ok(v) = c[2].parse::<f64>() {
                s.als.push(v);
                if &c[1] == "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS" {
                    s.als.push(v + 1.0);
                }
            }
        }
        for c in K_SHIPPED.captures_iter(t) {
            if let Ok(v) = c[2].parse::<u64>() {
                s.ks.insert(v);
            }
        }
    }
    s
}

fn warn(path: &str, line: usize, msg: String) -> Finding {
    Finding::new("L17", Severity::Warning, path, line, msg)
        .fix("make the description say what the config ships")
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let path = ctx.input.config.paths.changelog.clone();
    let mut out = Vec::new();
    let all_keys: Vec<String> = ctx
        .head_master
        .as_ref()
        .map(|m| m.keys().map(String::from).collect())
        .unwrap_or_default();
    for entry in ctx.new_changelog_entries() {
        let keys: Vec<String> = all_keys
            .iter()
            .filter(|k| entry.selects(k))
            .cloned()
            .collect();
        if keys.is_empty() {
            continue;
        }
        let s = shipped(ctx, &keys);
        let names = keys.join(", ");
        for d in &entry.description {
            let text = d.value.as_str();
            let lower = text.to_ascii_lowercase();
            let negated = NEGATIONS.iter().any(|n| lower.contains(n));
            let hard = if negated {
                Severity::Warning
            } else {
                Severity::Error
            };
            // Hard identifiers.
            // A hard identifier claim that contradicts the files.
            // Images stay errors; AL and K claims warn: on the history,
            // changelog prose quotes other draft lengths, measured ALs and
            // curve ranges far more often than it contradicts the files
            // (docs/precision.md "Rule changes").
            let mut claim = |what: &str, message: String, fix: &str, dev: bool| {
                let sev = if what == "image" && !dev {
                    hard
                } else {
                    Severity::Warning
                };
                out.push(
                    Finding::new("L17", sev, &path, d.line, message)
                        .subject(format!("{names}: {what}"))
                        .fix(fix),
                );
            };
            let shipped: Vec<&str> = s.images.iter().map(|i| i.text.as_str()).collect();
            let shipped_dev = s.images.iter().any(is_dev_build);
            for image in contradicting_claims(text, &s.images) {
                // A nightly or dev build on either side: a warning, as
                // engine knowledge gives them (`47e7ab0`, #2328).
                let dev = shipped_dev || is_dev_build(&ImageRef::parse(&image));
                claim(
                    "image",
                    format!(
                        "the description names image `{image}`, but {names} ships `{}`",
                        shipped.join("`, `")
                    ),
                    "name the image the config pins",
                    dev,
                );
            }
            // As with images, when one AL (or K) claim of the line is the
            // shipped one, the others are context ("from 2.99 to 3.61").
            let als: Vec<f64> = AL_CLAIM
                .captures_iter(text)
                .filter_map(|c| c[2].parse::<f64>().ok())
                .collect();
            // Any number of the line that is a shipped AL makes the AL
            // claims context ("raise … from 2.99 to 3.61").
            let shipped_al_named = NUMBER
                .find_iter(text)
                .filter_map(|m| m.as_str().parse::<f64>().ok())
                .any(|v| s.als.iter().any(|a| (a - v).abs() < 0.005));
            if !s.als.is_empty() && !als.is_empty() && !shipped_al_named {
                for v in als {
                    let pinned: Vec<String> = s.als.iter().map(|a| format!("{a}")).collect();
                    claim(
                        "AL",
                        format!(
                            "the description claims AL {v}, but the shipped files pin {}",
                            pinned.join(", ")
                        ),
                        "quote the AL the files pin",
                        false,
                    );
                }
            }
            // `N draft tokens` is SGLang's `num-draft-tokens`, which is K+1.
            let ks: Vec<(u64, bool)> = K_CLAIM
                .captures_iter(text)
                .filter_map(|c| match (c.get(1), c.get(2)) {
                    (Some(m), _) => m.as_str().parse().ok().map(|v| (v, false)),
                    (None, Some(m)) => m.as_str().parse().ok().map(|v| (v, true)),
                    _ => None,
                })
                .collect();
            let k_ok = |(v, tokens): &(u64, bool)| {
                s.ks.contains(v) || (*tokens && v.checked_sub(1).is_some_and(|k| s.ks.contains(&k)))
            };
            if !s.ks.is_empty() && !ks.iter().any(k_ok) {
                for (v, _) in ks {
                    let used: Vec<String> = s.ks.iter().map(u64::to_string).collect();
                    claim(
                        "K",
                        format!(
                            "the description claims K={v}, but the shipped files use K={}",
                            used.join(", ")
                        ),
                        "quote the draft length the files use",
                        false,
                    );
                }
            }
            if negated {
                continue;
            }
            // Advisory claims.
            for c in TP.captures_iter(text) {
                if let Ok(v) = c[1].parse::<i64>()
                    && !s.tp.is_empty()
                    && !s.tp.contains(&v)
                {
                    out.push(warn(
                        &path,
                        d.line,
                        format!(
                            "the description claims TP{v}, but {names} searches tp {}",
                            join(&s.tp)
                        ),
                    ));
                }
            }
            for c in EP.captures_iter(text) {
                if let Ok(v) = c[1].parse::<i64>()
                    && !s.ep.contains(&v)
                {
                    out.push(warn(
                        &path,
                        d.line,
                        format!(
                            "the description claims EP{v}, but {names} searches ep {}",
                            join(&s.ep)
                        ),
                    ));
                }
            }
            if let Some(m) = DP_ATTN.find(text) {
                let before = lower[..m.start()].trim_end();
                let off = before.ends_with("no")
                    || before.ends_with("without")
                    || lower[m.end()..].trim_start().starts_with("disabled");
                if !off && !s.dp_attn {
                    out.push(warn(&path, d.line, format!("the description claims dp-attention, but {names} enables no DP attention (dp-attn false, no --enable-dp-attention)")));
                } else if off && s.dp_attn {
                    out.push(warn(
                        &path,
                        d.line,
                        format!("the description says dp-attention is off, but {names} enables it"),
                    ));
                }
            }
            for c in STATE.captures_iter(text) {
                let on = matches!(c[2].to_ascii_lowercase().as_str(), "enabled" | "on");
                for subj in SUBJECTS.find_iter(&c[1]) {
                    let sj = subj.as_str().to_ascii_lowercase().replace('-', " ");
                    if sj.contains("prefix") || sj.contains("radix") {
                        if on != s.prefix_caching {
                            out.push(warn(&path, d.line, format!(
                                "the description says prefix caching is {}, but the shipped scripts {}",
                                if on { "enabled" } else { "disabled" },
                                if s.prefix_caching { "keep it on (no --disable-radix-cache / --no-enable-prefix-caching)" } else { "disable it" }
                            )));
                        }
                    } else if on != s.spec {
                        out.push(warn(
                            &path,
                            d.line,
                            format!(
                                "the description says speculative decoding is {}, but {}",
                                if on { "enabled" } else { "disabled" },
                                if s.spec {
                                    "the shipped config/scripts enable it"
                                } else {
                                    "the shipped config/scripts do not use it"
                                }
                            ),
                        ));
                    }
                }
            }
        }
    }
    // One finding per (line, message).
    out.dedup();
    out
}

fn join(v: &BTreeSet<i64>) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join("/")
}
