//! Signed links into the dashboard that work without a login
//! (`docs/contracts.md` §4): the Pareto plot a verdict links, bound to the
//! repository, the PR and the SHA. The key is random, made once and kept
//! in the store, so every replica signs and checks alike and a restart
//! keeps old links working.
use crate::store::{Store, StoreError, now_ms};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use sweepgate_core::ids::{PrNumber, RepoName};

/// The name of the link key among the store's signing keys.
const KEY_NAME: &str = "dashboard-link";

/// The store's link key, made on first use.
pub(crate) async fn link_key(store: &Store) -> Result<Vec<u8>, StoreError> {
    let fresh = hex::encode(rand::random::<[u8; 32]>());
    let stored = store.signing_key(KEY_NAME, &fresh, now_ms()).await?;
    Ok(hex::decode(&stored).unwrap_or_else(|_| stored.into_bytes()))
}

fn mac(key: &[u8], repo: &str, pr: u64, sha: &str) -> Hmac<Sha256> {
    let mut m = Hmac::<Sha256>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    m.update(format!("pareto.svg\n{repo}\n{pr}\n{sha}").as_bytes());
    m
}

/// The signature of the plot of `repo#pr` at `sha`.
pub(crate) fn plot_signature(key: &[u8], repo: &str, pr: u64, sha: &str) -> String {
    hex::encode(mac(key, repo, pr, sha).finalize().into_bytes())
}

/// Whether `sig` signs exactly this repository, PR and SHA.
pub(crate) fn plot_signature_valid(key: &[u8], repo: &str, pr: u64, sha: &str, sig: &str) -> bool {
    hex::decode(sig).is_ok_and(|s| mac(key, repo, pr, sha).verify_slice(&s).is_ok())
}

/// The public URL of a verdict's Pareto plot under `base` (the server's
/// public URL).
pub async fn signed_plot_url(
    store: &Store,
    base: &str,
    repo: &RepoName,
    pr: PrNumber,
    sha: &str,
) -> Result<String, StoreError> {
    let key = link_key(store).await?;
    let sig = plot_signature(&key, &repo.0, pr.0, sha);
    Ok(format!(
        "{}/repos/{repo}/pulls/{pr}/pareto.svg?sha={sha}&sig={sig}",
        base.trim_end_matches('/')
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_binds_repository_pr_and_sha() {
        let key = [7u8; 32];
        let sig = plot_signature(&key, "o/r", 5, "abc");
        assert!(plot_signature_valid(&key, "o/r", 5, "abc", &sig));
        assert!(!plot_signature_valid(&key, "o/r", 6, "abc", &sig));
        assert!(!plot_signature_valid(&key, "o/x", 5, "abc", &sig));
        assert!(!plot_signature_valid(&key, "o/r", 5, "abd", &sig));
        assert!(!plot_signature_valid(&[8u8; 32], "o/r", 5, "abc", &sig));
        assert!(!plot_signature_valid(&key, "o/r", 5, "abc", "zz"));
    }
}
