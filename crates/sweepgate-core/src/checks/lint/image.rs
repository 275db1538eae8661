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
        let (registry, repository) = if has_registry {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_references() {
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
}
