//! Newtypes for the identifiers that cross module boundaries, so a PR number
//! is never passed where a run id is expected.
use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! numeric_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse().map($name)
            }
        }
    };
}

numeric_id!(
    /// A pull request (or issue) number within a repository.
    PrNumber
);
numeric_id!(
    /// A GitHub Actions workflow run id.
    RunId
);
numeric_id!(
    /// A GitHub App installation id.
    InstallationId
);
numeric_id!(
    /// A comment id (issue comment, review or review comment).
    CommentId
);
numeric_id!(
    /// A durable job in the queue.
    JobId
);

/// The `X-GitHub-Delivery` header: GitHub's unique id of one delivery.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DeliveryId(pub String);

impl fmt::Display for DeliveryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A full 40-hex (or 64-hex) commit id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Sha(pub String);

impl Sha {
    /// Accepts only a full hexadecimal object id, lower-cased.
    pub fn parse(s: &str) -> Option<Sha> {
        let ok = matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| Sha(s.to_ascii_lowercase()))
    }
}

impl fmt::Display for Sha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `owner/name` of a repository.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RepoName(pub String);

impl RepoName {
    pub fn new(owner: &str, name: &str) -> Self {
        RepoName(format!("{owner}/{name}"))
    }

    /// Splits `owner/name`; `None` when the text is not of that form.
    pub fn parts(&self) -> Option<(&str, &str)> {
        let (o, n) = self.0.split_once('/')?;
        (!o.is_empty() && !n.is_empty() && !n.contains('/')).then_some((o, n))
    }
}

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha_accepts_only_full_hex() {
        assert!(Sha::parse("0123456789abcdef0123456789abcdef01234567").is_some());
        assert!(Sha::parse("0123456").is_none());
        assert!(Sha::parse("zz23456789abcdef0123456789abcdef01234567").is_none());
        let s = Sha::parse("0123456789ABCDEF0123456789abcdef01234567").unwrap();
        assert_eq!(s.0, "0123456789abcdef0123456789abcdef01234567");
    }

    #[test]
    fn repo_name_parts() {
        assert_eq!(RepoName::new("a", "b").parts(), Some(("a", "b")));
        assert_eq!(RepoName("a".into()).parts(), None);
        assert_eq!(RepoName("a/b/c".into()).parts(), None);
    }
}
