//! Loads `.github/sweepgate.toml` from the default branch. A missing file
//! means the defaults; an invalid one keeps the last valid configuration in
//! force (remembered in the store) and the error is returned for reporting.
use crate::config::{ConfigError, RepoConfig, repo::REPO_CONFIG_PATH};
use crate::events::HandlerError;
use crate::github::Api;
use crate::ids::RepoName;
use crate::store::{Store, now_ms};

const NS: &str = "repo-config";

pub struct Loaded {
    pub config: RepoConfig,
    /// Set when the file on the default branch is invalid.
    pub error: Option<ConfigError>,
}

pub async fn load(
    api: &Api,
    store: &Store,
    repo: &RepoName,
    default_branch: &str,
) -> Result<Loaded, HandlerError> {
    let Some(bytes) = api.file_at(repo, REPO_CONFIG_PATH, default_branch).await? else {
        return Ok(Loaded {
            config: RepoConfig::default(),
            error: None,
        });
    };
    match RepoConfig::from_toml(REPO_CONFIG_PATH, &bytes) {
        Ok(config) => {
            let text = String::from_utf8_lossy(&bytes);
            store.kv_put(NS, &repo.0, &text, now_ms()).await?;
            Ok(Loaded {
                config,
                error: None,
            })
        }
        Err(error) => {
            let last = store
                .kv_get(NS, &repo.0)
                .await?
                .and_then(|t| RepoConfig::from_toml(REPO_CONFIG_PATH, t.as_bytes()).ok())
                .unwrap_or_default();
            tracing::warn!(%repo, %error, "invalid repository configuration; keeping the last valid one");
            Ok(Loaded {
                config: last,
                error: Some(error),
            })
        }
    }
}
