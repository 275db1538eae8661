//! Image references (docs/rules.md §1.7).

/// A parsed image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImageRef {
    /// Normalised text (first `#` replaced with `/`).
    pub text: String,
    /// Registry host when the first component is one (`nvcr.io`).
    pub registry: Option<String>,
    /// Repository path without registry (`vllm/vllm-openai`).
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    pub(crate) fn parse(raw: &str) -> ImageRef {
        let text = raw.trim().replacen('#', "/", 1);
        let (rest, digest) = match text.split_once('@') {
            Some((r, d)) => (r.to_string(), Some(d.to_string())),
            None => (text.clone(), None),
        };
        let (name, tag) = match rest.rsplit_once('/') {
            Some((head, last)) => match last.split_once(':') {
                Some((n, t)) => (format!("{head}/{n}"), Some(t.to_string())),
                None => (rest.clone(), None),
            },
            None => match rest.split_once(':') {
                Some((n, t)) => (n.to_string(), Some(t.to_string())),
                None => (rest.clone(), None),
            },
        };
        let first = name.split('/').next().unwrap_or("");
        let has_registry = name.contains('/')
            && (first.contains('.') || first.contains(':') || first == "localhost");
        let (registry, repository) = if has_registry && first == "docker.io" {
            (
                None,
                name.split_once('/')
                    .map(|x| x.1.to_string())
                    .unwrap_or_default(),
            )
        } else if has_registry {
            (
                Some(first.to_string()),
                name.split_once('/')
                    .map(|x| x.1.to_string())
                    .unwrap_or_default(),
            )
        } else {
            (None, name)
        };
        ImageRef {
            text,
            registry,
            repository,
            tag,
            digest,
        }
    }

    /// Docker Hub namespace (`vllm` of `vllm/vllm-openai`), when on Docker Hub.
    pub(crate) fn hub_namespace(&self) -> Option<&str> {
        if self.registry.is_some() {
            return None;
        }
        self.repository.split_once('/').map(|x| x.0)
    }

    /// Check 6(a) and L15 alike: on Docker Hub, in one of the upstream
    /// namespaces (`vllm`, `lmsysorg`).
    pub(crate) fn is_upstream(&self, namespaces: &[&str]) -> bool {
        self.hub_namespace()
            .is_some_and(|n| namespaces.contains(&n))
    }

    pub(crate) fn pinned_by_digest(&self) -> bool {
        self.digest.as_deref().is_some_and(|d| {
            d.strip_prefix("sha256:")
                .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        })
    }

    /// Same repository and tag (digest ignored), after the `#` fix.
    pub(crate) fn same_repo_tag(&self, other: &ImageRef) -> bool {
        self.registry == other.registry
            && self.repository == other.repository
            && self.tag == other.tag
    }
}

/// A tag that looks immutable: `vX.Y.Z[-suffix]`, or `nightly-<≥7 hex>`,
/// or anything ending in a 40-hex commit.
pub(crate) fn immutable_tag(tag: &str) -> bool {
    let semver = {
        let t = tag.strip_prefix('v').unwrap_or(tag);
        let mut it = t.splitn(3, '.');
        let a = it
            .next()
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        let b = it
            .next()
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        let c = it
            .next()
            .is_some_and(|p| p.bytes().next().is_some_and(|b| b.is_ascii_digit()));
        a && b && c
    };
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    let nightly = tag
        .strip_prefix("nightly-")
        .is_some_and(|h| h.len() >= 7 && hex(h));
    let commit = tag
        .rsplit('-')
        .next()
        .is_some_and(|h| h.len() == 40 && hex(h));
    semver || nightly || commit
}

static CLAIM: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\b([a-z0-9][a-z0-9.-]*(?::\d+)?(?:[/#][a-z0-9][a-z0-9._-]*)+:[A-Za-z0-9][A-Za-z0-9._-]*(?:@sha256:[0-9a-f]{64})?)")
        .expect("literal regex")
});

/// Image references named in prose (a changelog description, a PR body),
/// as written: a sentence's full stop or comma after a tag is punctuation,
/// never part of the tag (`… to lmsysorg/sglang:v0.5.16-cu130.`), and URLs
/// are not images.
pub(crate) fn image_claims(text: &str) -> Vec<String> {
    CLAIM
        .captures_iter(text)
        .filter_map(|c| {
            let m = c.get(1)?;
            if text[m.end()..].starts_with("://") || text[..m.start()].ends_with("://") {
                return None;
            }
            let claim = m.as_str().trim_end_matches(['.', ',', ';', ':']);
            // `vllm/model_executor/…/shared_experts.py:165` is a source
            // line, not an image (history `4205a91`, #2418).
            let name = claim.split(':').next().unwrap_or(claim);
            let source_file = name.rsplit_once('.').is_some_and(|(_, ext)| {
                [
                    "py", "sh", "yaml", "yml", "md", "json", "txt", "cu", "cc", "cpp", "h", "rs",
                    "toml",
                ]
                .contains(&ext)
            });
            (claim.contains('/') && claim.contains(':') && !source_file).then(|| claim.to_owned())
        })
        .collect()
}

/// A claimed image names a shipped one: the same reference, or, for a
/// claim without a digest, the same registry, repository and tag
/// (docs/contracts.md §6).
pub(crate) fn claim_matches(claim: &ImageRef, shipped: &ImageRef) -> bool {
    claim.text == shipped.text || (claim.digest.is_none() && claim.same_repo_tag(shipped))
}

/// The image claims of one text that contradict the shipped images, used
/// by lint L17 and Check 15 alike. When a claim of the text names a shipped
/// image, the other images of that text are context (the image it
/// replaced, a sibling's image) and contradict nothing.
pub(crate) fn contradicting_claims(text: &str, shipped: &[ImageRef]) -> Vec<String> {
    // An image right after "from" is the one being replaced ("moves from
    // the sibling's lmsysorg/sglang:v0.5.12-cu130 to v0.5.16-cu130"), and
    // so is one before an arrow (`d7cce62`, #1516: "Image:
    // vllm/vllm-openai:v0.21.0 -> v0.19.1-cu130").
    let replaced = |c: &str| {
        text.find(c).is_some_and(|at| {
            let before = &text[..at];
            let start = before.char_indices().rev().nth(48).map_or(0, |(i, _)| i);
            let after = text[at + c.len()..].trim_start();
            before[start..].to_ascii_lowercase().contains("from ")
                || ["->", "→", "=>"].iter().any(|a| after.starts_with(a))
        })
    };
    // The image of another container: named as the value of an `…_IMAGE`
    // variable, or a router (`761ac0d`, #2301: "Re-pin VLLM_ROUTER_IMAGE to
    // vllm/vllm-router:nightly-20260716-1fbcde7" beside the serving image).
    let auxiliary = |c: &str| {
        let repo = ImageRef::parse(c).repository;
        let name = repo.rsplit('/').next().unwrap_or(&repo);
        name.contains("router")
            || text.find(c).is_some_and(|at| {
                let before = &text[..at];
                let start = before.char_indices().rev().nth(48).map_or(0, |(i, _)| i);
                before[start..]
                    .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .any(|w| {
                        w.len() > "_IMAGE".len()
                            && w.ends_with("_IMAGE")
                            && w.bytes()
                                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                    })
            })
    };
    let claims: Vec<String> = image_claims(text)
        .into_iter()
        .filter(|c| !replaced(c) && !auxiliary(c))
        .collect();
    let parsed: Vec<(String, ImageRef)> = claims
        .into_iter()
        .map(|c| {
            let r = ImageRef::parse(&c);
            (c, r)
        })
        .filter(|(_, r)| r.tag.is_some() || r.digest.is_some())
        .collect();
    let names_shipped = parsed
        .iter()
        .any(|(_, c)| shipped.iter().any(|s| claim_matches(c, s)));
    if names_shipped {
        return Vec::new();
    }
    parsed.into_iter().map(|(c, _)| c).collect()
}

/// What an image says about the engine release inside it (L30).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Release {
    /// An upstream image of a released version (`vllm/vllm-openai:v0.21.0`,
    /// `lmsysorg/sglang:v0.5.16-cu130`): its PyPI release `0.21.0`.
    Version(String),
    /// Nightly, dev, custom or vendor builds, digest-only references and
    /// unknown repositories: the release's option tables do not apply.
    Unreleased(&'static str),
}

/// The upstream Docker Hub repositories of an engine's releases.
fn upstream_repositories(engine: &str) -> &'static [&'static str] {
    match engine {
        "vllm" => &["vllm/vllm-openai", "vllm/vllm-openai-rocm"],
        "sglang" => &["lmsysorg/sglang", "lmsysorg/sglang-rocm"],
        _ => &[],
    }
}

/// The engine release an image runs. A tag is a release when it starts with
/// `vX.Y.Z` (`.postN` / `rcN` allowed) and its suffixes name only the build
/// (`-cu130`, `-ubuntu2404`, `-rocm720-mi35x-20260517`), never a commit
/// (`…-7a33ba9`), `dev` or `nightly`.
pub(crate) fn release_of(engine: &str, image: &str) -> Release {
    let i = ImageRef::parse(image);
    if !matches!(i.registry.as_deref(), None | Some("docker.io"))
        || !upstream_repositories(engine).contains(&i.repository.as_str())
    {
        return Release::Unreleased("not an upstream image");
    }
    let Some(tag) = i.tag.as_deref() else {
        return Release::Unreleased("pinned by digest only");
    };
    let mut parts = tag.split('-');
    let head = parts.next().unwrap_or("");
    let Some(version) = head.strip_prefix('v') else {
        return Release::Unreleased("not a release tag");
    };
    let mut nums = version.splitn(3, '.');
    let numeric =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let (a, b) = (nums.next(), nums.next());
    let c = nums.next().unwrap_or("");
    let patch_digits: String = c.chars().take_while(char::is_ascii_digit).collect();
    let rest = &c[patch_digits.len()..];
    let rest_ok = rest.is_empty()
        || rest
            .strip_prefix(".post")
            .or_else(|| rest.strip_prefix("rc"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !numeric(a) || !numeric(b) || patch_digits.is_empty() || !rest_ok {
        return Release::Unreleased("not a release tag");
    }
    if parts.any(unreleased_part) {
        return Release::Unreleased("a dev or custom build");
    }
    Release::Version(version.to_owned())
}

/// A tag part that names a dev, nightly or commit build (`dev`,
/// `nightly`, `7a33ba9`), not a release.
fn unreleased_part(p: &str) -> bool {
    let l = p.to_ascii_lowercase();
    let hexish = l.len() >= 7
        && l.bytes().all(|b| b.is_ascii_hexdigit())
        && l.bytes().any(|b| b.is_ascii_alphabetic());
    l.contains("dev") || l.contains("nightly") || hexish
}

/// A nightly, dev or commit build, or a reference by digest only: images
/// that are re-pinned as their builds are replaced, which changelog prose
/// lags behind (`47e7ab0`, #2328: the entry names `nightly-387189c…`, the
/// key ships `nightly-5e35a6f…`). Engine knowledge gives such images at
/// most a warning (docs/rules.md §3), and so does L17.
pub(crate) fn is_dev_build(i: &ImageRef) -> bool {
    // A repository of dev builds by name: `rocm/atom-dev`, `rocm/sgl-dev`
    // (`53a6281`, #1867, names `rocm/atom-dev:MiniMax-M3-20260619` while the
    // key ships the build of 2026-06-22).
    let name = i.repository.rsplit('/').next().unwrap_or("");
    name.split('-').any(|p| p == "dev" || p == "nightly")
        || i.tag
            .as_deref()
            .is_none_or(|t| t.split('-').any(unreleased_part))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `d7cce62` (#1516): "Image: vllm/vllm-openai:v0.21.0 -> v0.19.1-cu130"
    /// names the image replaced, then the shipped one.
    #[test]
    fn an_image_before_an_arrow_is_the_replaced_one() {
        let shipped = [ImageRef::parse("vllm/vllm-openai:v0.19.1-cu130")];
        let t = "Image: vllm/vllm-openai:v0.21.0 -> v0.19.1-cu130";
        assert!(contradicting_claims(t, &shipped).is_empty());
        let t = "Image: vllm/vllm-openai:v0.21.0";
        assert_eq!(
            contradicting_claims(t, &shipped),
            vec!["vllm/vllm-openai:v0.21.0"]
        );
    }

    #[test]
    fn dev_builds_are_nightly_dev_commit_or_digest_only() {
        for dev in [
            "vllm/vllm-openai:nightly-5e35a6f4f9bbc217c599692157ca985c894373f7",
            "lmsysorg/sglang:dev-nightly-0820",
            "vllm/vllm-openai:vllm-x86_64-cu13-0.25.1-7a33ba9",
            "lmsysorg/sglang@sha256:1bf5",
            "rocm/atom-dev:MiniMax-M3-20260619",
        ] {
            assert!(is_dev_build(&ImageRef::parse(dev)), "{dev}");
        }
        for release in [
            "lmsysorg/sglang:v0.5.16-cu130",
            "vllm/vllm-openai:v0.21.0",
            "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24",
            "vllm/vllm-openai:kimi-k3",
        ] {
            assert!(!is_dev_build(&ImageRef::parse(release)), "{release}");
        }
    }

    #[test]
    fn parses_references() {
        assert!(ImageRef::parse("docker.io/vllm/vllm-openai:v1").is_upstream(&["vllm"]));
        let i = ImageRef::parse("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24");
        assert_eq!(i.registry.as_deref(), Some("nvcr.io"));
        assert_eq!(i.repository, "nvidia/tensorrt-llm/release");
        assert_eq!(i.tag.as_deref(), Some("1.3.0rc24"));
        let v = ImageRef::parse(
            "vllm/vllm-openai:v0.20.1@sha256:9eff9734aaaabbbbccccddddeeeeffff000011112222333344445555666623aa4",
        );
        assert_eq!(v.hub_namespace(), Some("vllm"));
        assert_eq!(v.tag.as_deref(), Some("v0.20.1"));
        let h = ImageRef::parse("localhost:5000/x/y");
        assert_eq!(h.registry.as_deref(), Some("localhost:5000"));
        assert!(immutable_tag("v0.21.0"));
        assert!(immutable_tag("v0.5.16-cu130"));
        assert!(immutable_tag(
            "nightly-5e35a6f4f9bbc217c599692157ca985c894373f7"
        ));
        assert!(!immutable_tag("kimi-k3"));
        assert!(!immutable_tag("dev-nightly-0820"));
        assert!(!immutable_tag("latest"));
    }

    /// `761ac0d` (#2301, `perf-changelog.yaml:5060`): the router's image
    /// is another container's; `47e7ab0` (#2328, `:5460`) names a serving
    /// image the key does not ship.
    #[test]
    fn other_containers_images_are_context() {
        let shipped = [ImageRef::parse("vllm/vllm-openai-rocm:nightly-2afa3f7e")];
        let t = "Re-pin VLLM_ROUTER_IMAGE to vllm/vllm-router:nightly-20260716-1fbcde7 (previous one was garbage-collected)";
        assert!(contradicting_claims(t, &shipped).is_empty());
        let t = "Use vllm/vllm-openai:nightly-387189c4 with prefix caching enabled";
        let shipped = [ImageRef::parse("vllm/vllm-openai:nightly-5e35a6f4")];
        assert_eq!(
            contradicting_claims(t, &shipped),
            vec!["vllm/vllm-openai:nightly-387189c4"]
        );
    }

    /// Real text of the history: commit `26b2ac6` (#2428), `perf-changelog.yaml:5514`.
    #[test]
    fn prose_claims_drop_punctuation_and_context() {
        let t = "Image bumped from lmsysorg/sglang:v0.5.15.post1-cu130 (the STP entry) to lmsysorg/sglang:v0.5.16-cu130. SGLANG_SIMULATE_ACC_TOKEN_MODE is only read from v0.5.16";
        assert_eq!(
            image_claims(t),
            vec![
                "lmsysorg/sglang:v0.5.15.post1-cu130",
                "lmsysorg/sglang:v0.5.16-cu130"
            ]
        );
        let shipped = [ImageRef::parse("lmsysorg/sglang:v0.5.16-cu130")];
        assert!(contradicting_claims(t, &shipped).is_empty());
        let other = [ImageRef::parse("lmsysorg/sglang:v0.5.17-cu130")];
        // The image after "from" is the replaced one; the new one contradicts.
        assert_eq!(
            contradicting_claims(t, &other),
            vec!["lmsysorg/sglang:v0.5.16-cu130"]
        );
        assert!(image_claims("see https://github.com/a/b:c for it").is_empty());
        assert!(
            image_claims("at vllm/model_executor/layers/fused_moe/runner/shared_experts.py:165.")
                .is_empty()
        );
    }

    #[test]
    fn releases_and_builds() {
        let v = |e, i| match release_of(e, i) {
            Release::Version(v) => Some(v),
            Release::Unreleased(_) => None,
        };
        assert_eq!(
            v("vllm", "vllm/vllm-openai:v0.21.0").as_deref(),
            Some("0.21.0")
        );
        assert_eq!(
            v("vllm", "vllm/vllm-openai-rocm:v0.20.1-ubuntu2404").as_deref(),
            Some("0.20.1")
        );
        assert_eq!(
            v("sglang", "lmsysorg/sglang:v0.5.16-cu130").as_deref(),
            Some("0.5.16")
        );
        assert_eq!(
            v("sglang", "lmsysorg/sglang:v0.5.12.post1").as_deref(),
            Some("0.5.12.post1")
        );
        assert_eq!(
            v(
                "sglang",
                "lmsysorg/sglang-rocm:v0.5.12-rocm720-mi35x-20260517"
            )
            .as_deref(),
            Some("0.5.12")
        );
        // Custom builds, nightlies, digest-only, vendor images (real tags of the history).
        for (e, i) in [
            ("vllm", "vllm/vllm-openai:vllm-x86_64-cu13-0.25.1-7a33ba9"),
            (
                "vllm",
                "vllm/vllm-openai:nightly-3ee2df30337a301164c46ae444b76ee67e71c106",
            ),
            ("vllm", "vllm/vllm-openai:kimi-k3"),
            (
                "vllm",
                "vllm/vllm-openai@sha256:9eff9734aaaabbbbccccddddeeeeffff000011112222333344445555666623aa4",
            ),
            (
                "sglang",
                "lmsysorg/sglang:nightly-dev-cu13-20260721-8905cbd4",
            ),
            (
                "sglang",
                "rocm/sgl-dev:sglang-0.5.9-rocm720-mi35x-mori-0227-2",
            ),
            ("sglang", "lmsysorg/sglang:v0.5.14-dev-cu130"),
        ] {
            assert_eq!(v(e, i), None, "{i}");
        }
    }
}
