//! Reading a repository's configuration (`sweepgate_core::config`) at one
//! revision, from GitHub or a local clone: `.github/sweepgate.toml`, then
//! the old files of the sections it lacks (`config::sources`).
use std::future::Future;

use sweepgate_core::config::repo::REPO_CONFIG_PATH;
use sweepgate_core::config::sources::{self, OLD_FILES};
use sweepgate_core::config::{ConfigError, Resolved};

use crate::repo::{RepoError, RepoSource};

/// Reads the files through `read` (a path's bytes, `None` when absent)
/// and resolves them; `all` reads every old file, also those a section
/// replaces (to say they are ignored). The outer error is `read`'s, the
/// inner one the configuration's.
pub(crate) async fn read_with<F, Fut, E>(
    read: F,
    all: bool,
) -> Result<Result<Resolved, ConfigError>, E>
where
    F: Fn(&'static str) -> Fut,
    Fut: Future<Output = Result<Option<Vec<u8>>, E>>,
{
    let main = read(REPO_CONFIG_PATH).await?;
    let wanted = if all {
        OLD_FILES.iter().map(|o| o.path).collect()
    } else {
        sources::old_files_for(main.as_deref())
    };
    let mut old = Vec::new();
    for path in wanted {
        if let Some(bytes) = read(path).await? {
            old.push((path, bytes));
        }
    }
    let old: Vec<(&str, &[u8])> = old.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    Ok(sources::resolve(
        main.as_deref().map(|b| (REPO_CONFIG_PATH, b)),
        &old,
    ))
}

/// The configuration at `rev` of a repository source (the command line:
/// an invalid file is an error, the inner one; deprecation notes are
/// logged).
pub async fn read_at(
    src: &dyn RepoSource,
    rev: &str,
) -> Result<Result<sweepgate_core::config::RepoConfig, ConfigError>, RepoError> {
    let read = read_with(|p| crate::repo::read_optional(src, rev, p), false).await?;
    Ok(read.map(|resolved| {
        for n in &resolved.notes {
            tracing::warn!("{n}");
        }
        resolved.config
    }))
}
