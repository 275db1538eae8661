//! Typed helpers for the REST endpoints sweepgate calls, one file per
//! GitHub API area. Paths are built here and nowhere else.
pub(crate) mod access;
pub(crate) mod artifacts;
pub(crate) mod checks;
pub(crate) mod comments;
pub(crate) mod hooks;
pub(crate) mod pulls;
pub(crate) mod repos;
pub(crate) mod runs;

use super::GitHubError;
use serde::Deserialize;
use sweepgate_core::ids::RepoName;

#[derive(Debug, Clone, Deserialize)]
pub struct Login {
    #[serde(default)]
    pub login: String,
}

fn repo_path(repo: &RepoName) -> Result<String, GitHubError> {
    let (o, r) = repo
        .parts()
        .ok_or_else(|| GitHubError::Config(format!("`{repo}` is not owner/name")))?;
    Ok(format!("/repos/{}/{}", enc(o), enc(r)))
}

/// Percent-encodes one path segment.
pub(super) fn seg_enc(s: &str) -> String {
    enc(s)
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// Encodes a file path, keeping its slashes.
fn enc_path(p: &str) -> String {
    p.split('/').map(enc).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_encoded() {
        assert_eq!(enc_path("a b/c#d.yaml"), "a%20b/c%23d.yaml");
        assert_eq!(repo_path(&RepoName::new("o", "r")).unwrap(), "/repos/o/r");
        assert!(repo_path(&RepoName("bad".into())).is_err());
    }
}
