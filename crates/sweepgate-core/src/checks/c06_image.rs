//! Check 6 — Upstream image / engine-first ordering (`docs/rules.md`
//! §2 Check 6, §1.7). (a) vLLM/SGLang keys on established SKUs use the
//! upstream Docker Hub images; (b) a key of another framework lands only
//! after a vLLM/SGLang key of the same model and SKU. A claimed exception
//! (new hardware, new architecture) is REVIEW. The scope of (a) is a
//! setting (§5.2, extended by default).
use super::engine_first::{self, Landing, Order};
use super::lint::image::ImageRef;
use super::snapshot::{ChangeKind, Family, MasterEntry};
use super::{CheckResult, ImageScope, Snapshot};
use crate::config::RepoConfig;

const N: u8 = 6;

const EXCEPTION_WORDS: [&str; 8] = [
    "mi455x",
    "ualoe72",
    "rubin",
    "vr200",
    "tpuv8",
    "new hardware",
    "new model architecture",
    "not supported upstream",
];

/// A display form: digest shortened to 8 characters.
pub(crate) fn short_image(image: &str) -> String {
    match image.split_once("@sha256:") {
        Some((a, d)) => format!("{a}@sha256:{}…", d.get(..8).unwrap_or(d)),
        None => image.to_owned(),
    }
}

/// A master entry as the ordering rule reads it.
fn landing(e: &MasterEntry) -> Landing<'_> {
    Landing::new(
        &e.key,
        e.framework(),
        Some(e.prefix()),
        Some(e.model()),
        e.runner(),
    )
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    let keys: Vec<_> = facts
        .changed
        .iter()
        .filter(|k| k.kind != ChangeKind::Indirect)
        .collect();
    if keys.is_empty() {
        return CheckResult::na(N, "no master-config entries changed.");
    }
    let detail = s.detail_section().to_ascii_lowercase();
    let exception = EXCEPTION_WORDS.iter().find(|w| detail.contains(*w));
    let mut notes: Vec<String> = Vec::new();
    // A key whose master config did not parse at base: what the PR
    // introduced cannot be told (`ec1b7ef`, #791, reverts an edit that left
    // `.github/configs/amd-master.yaml:37` invalid; its keys were there).
    // The lint calls such findings pre-existing; the check asks a person.
    let mut untold: Vec<String> = Vec::new();
    let base_unread = |file: &str| {
        facts
            .errors
            .iter()
            .any(|x| x.starts_with(&format!("{file} at base:")))
    };
    let head: Vec<Landing> = facts.masters_head.values().map(landing).collect();
    let before: Vec<Landing> = facts.masters_base.values().map(landing).collect();
    for k in &keys {
        let e = &k.entry;
        let fw = e.framework();
        let family = e.family();
        let sku = e.sku();
        let in_scope = match s.settings.upstream_image_scope {
            ImageScope::Extended => family != Family::Other,
            ImageScope::Strict => fw == "vllm" || fw == "sglang",
        };
        if family != Family::Other {
            if in_scope && cfg.policy.established_skus.contains(&sku) {
                let want = if family == Family::Vllm {
                    "vllm/"
                } else {
                    "lmsysorg/"
                };
                // The namespaces configured for this family (`vllm/` → `vllm`).
                let ns: Vec<&str> = cfg
                    .policy
                    .upstream_image_prefixes
                    .iter()
                    .filter(|p| p.as_str() == want)
                    .map(|p| p.trim_end_matches('/'))
                    .collect();
                // The predicate lint L15 uses. A PR is judged on what it
                // changes: a key that keeps its image (`9bfcebf`, #689,
                // changes only its search space) does not introduce it.
                // Nor does one that bumps a non-upstream image to another
                // non-upstream build (`765e11e` #1568, `3f529cd` #1000,
                // `34bedd5` #445: rocm/sgl-dev to rocm/sgl-dev): the key
                // was off upstream on the default branch already.
                // Nor one whose sweep the base's workflows ran with this
                // image before the master configs held it (`c028a3a`, #145;
                // `b1107b8`, #251).
                let legacy = s.base_legacy_images.contains(e.image());
                let introduced = !legacy
                    && facts.masters_base.get(&k.key).is_none_or(|b| {
                        b.image() != e.image() && ImageRef::parse(b.image()).is_upstream(&ns)
                    });
                let introduces_fork = introduced && !ImageRef::parse(e.image()).is_upstream(&ns);
                if introduces_fork && base_unread(&e.file) {
                    untold.push(format!(
                        "{} uses non-upstream image {} on {sku}, and {} did not parse at base",
                        k.key,
                        e.image(),
                        e.file
                    ));
                    continue;
                }
                if introduces_fork {
                    if let Some(w) = exception {
                        return CheckResult::review(
                            N,
                            format!(
                                "{} uses non-upstream image {} on {sku}; the sign-off claims an exception (\"{w}\") a person must confirm.",
                                k.key,
                                e.image()
                            ),
                        )
                        .file(&e.file, e.field_line("image"));
                    }
                    return CheckResult::fail(
                        N,
                        format!(
                            "{} uses non-upstream image {} on {sku} without documented exception.",
                            k.key,
                            e.image()
                        ),
                    )
                    .subject(k.key.clone())
                    .file(&e.file, e.field_line("image"));
                }
                if introduced {
                    notes.push(format!(
                        "{} (framework: {fw}) uses upstream {}; a vLLM/SGLang entry, so the ordering rule does not apply",
                        k.key,
                        short_image(e.image())
                    ));
                } else if legacy {
                    notes.push(format!(
                        "{} (framework: {fw}) keeps image {}, which the base's sweep workflows ran",
                        k.key,
                        short_image(e.image())
                    ));
                } else {
                    notes.push(format!(
                        "{} (framework: {fw}) keeps its image {}",
                        k.key,
                        short_image(e.image())
                    ));
                }
            } else {
                notes.push(format!(
                    "{} (framework: {fw}) is on {sku}, outside the established SKUs; no image rule",
                    k.key
                ));
            }
            continue;
        }
        // Only a key the PR adds lands (`9a517b1`, #663, changes an
        // existing one).
        if k.kind != ChangeKind::Added {
            notes.push(format!("{} ({fw}) was already there", k.key));
            continue;
        }
        // The ordering fact, as lint L15 reads it.
        match engine_first::order(&landing(e), &head, &before) {
            Order::Engine => {}
            Order::Follows(o) => notes.push(format!("{} ({fw}) follows {o}", k.key)),
            Order::Joins(o) => notes.push(format!(
                "{} ({fw}) joins {o}, which landed on {sku} before this PR",
                k.key
            )),
            Order::First if base_unread(&e.file) => untold.push(format!(
                "{} ({fw}) lands before any vLLM/SGLang {} entry on {sku}, and {} did not parse at base",
                k.key,
                e.prefix(),
                e.file
            )),
            Order::First => {
                if let Some(w) = exception {
                    return CheckResult::review(
                        N,
                        format!(
                            "{} ({fw}) lands before any vLLM/SGLang {} entry on {sku}; the sign-off claims an exception (\"{w}\").",
                            k.key,
                            e.prefix()
                        ),
                    )
                    .file(&e.file, e.line);
                }
                return CheckResult::fail(
                    N,
                    format!(
                        "{} ({fw}) lands before any vLLM/SGLang {} entry on {sku}.",
                        k.key,
                        e.prefix()
                    ),
                )
                .subject(k.key.clone())
                .file(&e.file, e.line);
            }
        }
    }
    if !untold.is_empty() {
        return CheckResult::review(
            N,
            format!(
                "{}; whether this PR introduced it cannot be told.",
                untold.join("; ")
            ),
        );
    }
    CheckResult::pass(N, format!("{}.", notes.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::ChangedFile;

    fn snap(entries: &str) -> Snapshot {
        let mut s = Snapshot::default();
        s.head_files
            .insert("configs/nvidia-master.yaml".into(), entries.into());
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s
    }

    fn entry(key: &str, fw: &str, image: &str) -> String {
        let mut p = key.split('-');
        let (prefix, prec, sku) = (
            p.next().unwrap_or(""),
            p.next().unwrap_or(""),
            p.next().unwrap_or(""),
        );
        format!(
            "{key}:\n  image: {image}\n  model-prefix: {prefix}\n  precision: {prec}\n  framework: {fw}\n  runner: {sku}\n"
        )
    }

    #[test]
    fn image_refs_parse() {
        let r = ImageRef::parse("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24");
        assert_eq!(r.registry.as_deref(), Some("nvcr.io"));
        assert_eq!(r.repository, "nvidia/tensorrt-llm/release");
        let r = ImageRef::parse("lmsysorg/sglang:v1@sha256:abc");
        assert_eq!(
            (r.registry, r.tag.as_deref(), r.digest.as_deref()),
            (None, Some("v1"), Some("sha256:abc"))
        );
    }

    #[test]
    fn upstream_image_passes_and_fork_fails() {
        let r = check(
            &snap(&entry("m-fp4-b200-sglang", "sglang", "lmsysorg/sglang:v1")),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "m-fp4-b200-sglang (framework: sglang) uses upstream lmsysorg/sglang:v1; a vLLM/SGLang entry, so the ordering rule does not apply."
        );
        let r = check(
            &snap(&entry(
                "m-fp8-mi355x-sglang-disagg",
                "sglang-disagg",
                "rocm/sgl-dev:x",
            )),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "m-fp8-mi355x-sglang-disagg uses non-upstream image rocm/sgl-dev:x on mi355x without documented exception."
        );
    }

    #[test]
    fn other_framework_needs_a_sibling() {
        let r = check(
            &snap(&entry(
                "g-fp8-b200-tilert",
                "tilert",
                "ghcr.io/tile-ai/tilert",
            )),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "g-fp8-b200-tilert (tilert) lands before any vLLM/SGLang g entry on b200."
        );
        let both = format!(
            "{}{}",
            entry("g-fp8-b200-tilert", "tilert", "ghcr.io/tile-ai/tilert"),
            entry("g-fp8-b200-vllm", "vllm", "vllm/vllm-openai:v1")
        );
        let r = check(&snap(&both), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
    }

    /// A PR is judged on what it changes: `9bfcebf` (#689) changes a key
    /// but keeps its vendor image, `9a517b1` (#663) changes a TRT key that
    /// landed earlier.
    #[test]
    fn what_the_base_had_is_not_the_prs() {
        let fork = entry(
            "m-fp8-mi355x-sglang-disagg",
            "sglang-disagg",
            "rocm/sgl-dev:x",
        );
        let trt = entry("g-fp8-b200-tilert", "tilert", "ghcr.io/tile-ai/tilert");
        let head = format!("{fork}  multinode: true\n{trt}  multinode: true\n");
        let mut s = snap(&head);
        s.base_files
            .insert("configs/nvidia-master.yaml".into(), format!("{fork}{trt}"));
        s.files[0].status = "modified".into();
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
    }

    /// `c028a3a` (#145) builds the master config from the workflows that
    /// ran the same sweeps with the same images: nothing introduced.
    #[test]
    fn an_image_the_base_workflows_ran_is_not_the_prs() {
        let fork = entry("m-fp8-mi355x-sglang", "sglang", "rocm/7.0:x-mi35x");
        let mut s = snap(&fork);
        s.base_legacy_images.insert("rocm/7.0:x-mi35x".into());
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "m-fp8-mi355x-sglang (framework: sglang) keeps image rocm/7.0:x-mi35x, which the base's sweep workflows ran."
        );
        let mut s = snap(&fork);
        s.base_legacy_images.insert("rocm/7.0:y-mi35x".into());
        assert_eq!(check(&s, &RepoConfig::default()).outcome, Outcome::Fail);
    }

    /// `ec1b7ef` (#791): the base's master config did not parse, so what
    /// the PR introduced cannot be told: REVIEW, never FAIL.
    #[test]
    fn an_unparsable_base_is_no_fail() {
        let fork = entry(
            "m-fp8-mi355x-sglang-disagg",
            "sglang-disagg",
            "rocm/sgl-dev:x",
        );
        let mut s = snap(&fork);
        s.base_files.insert(
            "configs/nvidia-master.yaml".into(),
            "m-fp8-mi355x-sglang-disagg: { tp: 8， ep: 1 \n".into(),
        );
        s.files[0].status = "modified".into();
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Review, "{}", r.reason);
        assert!(r.reason.contains("did not parse at base"), "{}", r.reason);
    }

    /// `0f24199` (#617): a sibling serving the same model counts whatever
    /// its `model-prefix` field says.
    #[test]
    fn a_sibling_of_the_same_model_counts() {
        let both = format!(
            "{}  model: org/M\n{}  model: org/M\n",
            entry("g-fp8-b200-tilert", "tilert", "ghcr.io/tile-ai/tilert")
                .replace("model-prefix: g", "model-prefix: g-fp8"),
            entry("g-fp8-b200-vllm", "vllm", "vllm/vllm-openai:v1")
        );
        let r = check(&snap(&both), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
    }
}
