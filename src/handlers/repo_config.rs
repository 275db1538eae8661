//! Loads `.github/sweepgate.toml` from the default branch. A missing file
//! means the defaults; an invalid one keeps the last valid configuration in
//! force (remembered in the store) and the error is returned for reporting.
use crate::events::HandlerError;
use crate::github::Api;
use crate::store::{Store, now_ms};
use sweepgate_core::config::{ConfigError, RepoConfig, repo::REPO_CONFIG_PATH};
use sweepgate_core::ids::RepoName;

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
            store.keep_valid_config(repo, &text, now_ms()).await?;
            Ok(Loaded {
                config,
                error: None,
            })
        }
        Err(error) => {
            let last = store
                .last_valid_config(repo)
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

/// The configuration files sweepgate reads from the default branch.
pub(crate) const CONFIG_FILES: [&str; 2] = [
    REPO_CONFIG_PATH,
    sweepgate_core::checks::VERIFIER_SETTINGS_PATH,
];

pub(crate) const CONFIG_CHECK: &str = "sweepgate / config";

/// Every problem of the configuration files given, as
/// `file:line:column: message` (verifier settings name no position).
pub(crate) fn validate(files: &[(&str, Vec<u8>)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, bytes) in files {
        if *path == REPO_CONFIG_PATH {
            if let Err(e) = RepoConfig::from_toml(path, bytes) {
                out.push(format!("{}:{}:{}: {}", e.file, e.line, e.column, e.message));
            }
        } else if let Err(e) = sweepgate_core::checks::VerifierSettings::from_toml(
            path,
            &String::from_utf8_lossy(bytes),
        ) {
            out.push(format!("{}: {}", e.file, e.message));
        }
    }
    out
}

/// Configuration changes: a PR that edits a configuration file gets one
/// validation comment (edited per head) and a check run; a push to the
/// default branch reloads the configuration, and a check run on the
/// pushed commit says whether it took effect.
pub(crate) struct ConfigCheck {
    services: super::Services,
}

impl ConfigCheck {
    pub(crate) fn new(services: super::Services) -> Self {
        Self { services }
    }
}

/// The check run of a validation: failure with an annotation per problem
/// that names a line.
async fn report(
    api: &Api,
    repo: &RepoName,
    sha: &str,
    problems: &[String],
    success_title: &str,
) -> Result<(), HandlerError> {
    let annotations: Vec<serde_json::Value> = problems
        .iter()
        .filter_map(|p| {
            let mut parts = p.splitn(4, ':');
            let (file, line) = (parts.next()?, parts.next()?.parse::<usize>().ok()?);
            Some(serde_json::json!({
                "path": file,
                "start_line": line.max(1),
                "end_line": line.max(1),
                "annotation_level": "failure",
                "title": "invalid sweepgate configuration",
                "message": p,
            }))
        })
        .collect();
    let summary = if problems.is_empty() {
        success_title.to_owned()
    } else {
        problems.join("\n")
    };
    api.check_run_with_annotations(
        repo,
        &crate::github::CheckRunReport {
            name: CONFIG_CHECK,
            head_sha: sha,
            conclusion: if problems.is_empty() {
                "success"
            } else {
                "failure"
            },
            title: if problems.is_empty() {
                success_title
            } else {
                "invalid sweepgate configuration"
            },
            summary: &summary,
            annotations: &annotations,
        },
    )
    .await?;
    Ok(())
}

#[async_trait::async_trait]
impl crate::events::Handler for ConfigCheck {
    fn id(&self) -> crate::events::HandlerId {
        crate::events::HandlerId::ConfigCheck
    }

    async fn handle(
        &self,
        ctx: &crate::events::JobContext,
        event: &crate::events::Event,
    ) -> Result<(), HandlerError> {
        use crate::events::Event;
        match event {
            Event::Push(ev) => {
                let default = ctx.envelope.default_branch.as_deref().unwrap_or("main");
                if ev.ref_name != format!("refs/heads/{default}")
                    || ev.after.chars().all(|c| c == '0')
                {
                    return Ok(());
                }
                let scope = self.services.scope(ctx).await?;
                // `scope` already reloaded the file; say whether it took.
                let mut files = Vec::new();
                for path in CONFIG_FILES {
                    if let Some(b) = scope.api.file_at(&scope.repo, path, &ev.after).await? {
                        files.push((path, b));
                    }
                }
                if files.is_empty() {
                    return Ok(());
                }
                let problems = validate(&files);
                if !problems.is_empty() {
                    tracing::warn!(repo = %scope.repo, problems = ?problems, "configuration on the default branch is invalid; the last valid one stays in force");
                }
                report(
                    &scope.api,
                    &scope.repo,
                    &ev.after,
                    &problems,
                    "configuration reloaded",
                )
                .await
            }
            Event::PullRequest(ev) => {
                let scope = self.services.scope(ctx).await?;
                let pr = &ev.pull_request;
                let Some(head) = pr.head.as_ref() else {
                    return Ok(());
                };
                let changed = scope.api.pr_files(&scope.repo, pr.number).await?;
                let touched: Vec<&str> = CONFIG_FILES
                    .into_iter()
                    .filter(|p| changed.iter().any(|f| f.filename == *p))
                    .collect();
                if touched.is_empty() {
                    return Ok(());
                }
                // Files read from the head repository (a fork's head
                // commit is visible through the base repository).
                let mut files = Vec::new();
                for path in &touched {
                    if let Some(b) = scope.api.file_at(&scope.repo, path, &head.sha).await? {
                        files.push((*path, b));
                    }
                }
                let problems = validate(&files);
                // The problems quote the PR's file (a key may be anything).
                let quoted: Vec<String> =
                    problems.iter().map(|p| crate::comments::quote(p)).collect();
                let body = crate::comments::render(&crate::comments::ConfigCheck {
                    sha: &head.sha,
                    files: &touched
                        .iter()
                        .map(|p| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(" and "),
                    many: touched.len() > 1,
                    branch: &scope.default_branch,
                    problems: &quoted,
                });
                super::publish::upsert(
                    &scope.api,
                    &scope.repo,
                    pr.number,
                    crate::comments::CONFIG_CHECK_MARKER,
                    &body,
                )
                .await?;
                report(
                    &scope.api,
                    &scope.repo,
                    &head.sha,
                    &problems,
                    "configuration valid",
                )
                .await
            }
            _ => Ok(()),
        }
    }
}
