//! Loads the repository configuration from the default branch:
//! `.github/sweepgate.toml`, and the old files of the sections it lacks
//! (`sweepgate_core::config::sources`). A missing file means the
//! defaults; an invalid one keeps the last valid configuration in force
//! (remembered in the store), and the error, with file and line, is
//! returned for the `sweepgate / config` check run. A configuration error
//! never fails a job.
use crate::events::HandlerError;
use crate::github::{Api, GitHubError};
use crate::store::{Store, now_ms};
use sweepgate_core::config::repo::REPO_CONFIG_PATH;
use sweepgate_core::config::{CONFIG_FILES, ConfigError, Deprecation, RepoConfig, Resolved};
use sweepgate_core::ids::RepoName;

pub struct Loaded {
    pub config: RepoConfig,
    /// Set when the configuration on the default branch is invalid.
    pub error: Option<ConfigError>,
    /// Deprecated files and keys the configuration on the default branch
    /// uses (read on every load).
    pub notes: Vec<Deprecation>,
}

/// The files at `reference`, resolved; `all` also reads the old files a
/// section replaces (to say they are ignored).
async fn read(
    api: &Api,
    repo: &RepoName,
    reference: &str,
    all: bool,
) -> Result<Result<Resolved, ConfigError>, GitHubError> {
    crate::config::repo::read_with(|path| api.file_at(repo, path, reference), all).await
}

pub async fn load(
    api: &Api,
    store: &Store,
    repo: &RepoName,
    default_branch: &str,
) -> Result<Loaded, HandlerError> {
    match read(api, repo, default_branch, false).await? {
        Ok(Resolved { config, notes }) => {
            // Kept as one file: it reads back as this configuration.
            match config.to_toml() {
                Ok(text) => store.keep_valid_config(repo, &text, now_ms()).await?,
                Err(e) => tracing::warn!(%repo, %e, "the configuration could not be kept"),
            }
            Ok(Loaded {
                config,
                error: None,
                notes,
            })
        }
        Err(error) => {
            // What an older release kept (the raw file) reads back alike.
            let last = store
                .last_valid_config(repo)
                .await?
                .and_then(|t| RepoConfig::from_toml(REPO_CONFIG_PATH, t.as_bytes()).ok())
                .unwrap_or_default();
            tracing::warn!(%repo, %error, "invalid repository configuration; keeping the last valid one");
            Ok(Loaded {
                config: last,
                error: Some(error),
                notes: Vec::new(),
            })
        }
    }
}

pub(crate) const CONFIG_CHECK: &str = "sweepgate / config";

/// What a validation found: the error (the first; nothing is used until it
/// is fixed) and the deprecation notes.
#[derive(Default)]
struct Findings {
    error: Option<ConfigError>,
    notes: Vec<Deprecation>,
}

impl Findings {
    fn of(r: Result<Resolved, ConfigError>) -> Self {
        match r {
            Ok(r) => Findings {
                error: None,
                notes: r.notes,
            },
            Err(e) => Findings {
                error: Some(e),
                notes: Vec::new(),
            },
        }
    }

    fn problems(&self) -> Vec<String> {
        self.error.iter().map(ToString::to_string).collect()
    }

    fn notes(&self) -> Vec<String> {
        self.notes.iter().map(ToString::to_string).collect()
    }
}

/// Configuration changes: a PR that edits a configuration file gets one
/// validation comment (edited per head) and a check run; a push to the
/// default branch reloads the configuration, and a check run on the
/// pushed commit says whether it took effect; any other PR gets a check
/// run only while the configuration in force has an error or uses
/// deprecated files.
pub(crate) struct ConfigCheck {
    services: super::Services,
}

impl ConfigCheck {
    pub(crate) fn new(services: super::Services) -> Self {
        Self { services }
    }
}

/// How a check run presents the findings.
struct Report<'a> {
    /// The title when nothing is wrong.
    ok_title: &'a str,
    /// The conclusion on an error (`failure` for the files the commit
    /// holds, `neutral` for the default branch's, shown on a PR).
    on_error: &'a str,
    /// The annotation level of an error (`warning` on a PR that did not
    /// cause it).
    error_level: &'a str,
    /// Said before the findings.
    lead: Option<String>,
}

/// The check run of a validation: an annotation per error and deprecation
/// note, at its line.
async fn report(
    api: &Api,
    repo: &RepoName,
    sha: &str,
    found: &Findings,
    how: Report<'_>,
) -> Result<(), HandlerError> {
    let annotation = |file: &str, line: usize, level: &str, title: &str, message: String| {
        serde_json::json!({
            "path": file,
            "start_line": line.max(1),
            "end_line": line.max(1),
            "annotation_level": level,
            "title": title,
            "message": message,
        })
    };
    let mut annotations: Vec<serde_json::Value> = found
        .error
        .iter()
        .map(|e| {
            annotation(
                &e.file,
                e.line,
                how.error_level,
                "invalid sweepgate configuration",
                e.to_string(),
            )
        })
        .collect();
    annotations.extend(found.notes.iter().map(|n| {
        annotation(
            &n.file,
            n.line,
            "notice",
            "deprecated sweepgate configuration",
            n.to_string(),
        )
    }));
    let mut lines: Vec<String> = how.lead.into_iter().collect();
    lines.extend(found.problems());
    if !found.notes.is_empty() {
        lines.push("Deprecated configuration:".into());
        lines.extend(found.notes().into_iter().map(|n| format!("- {n}")));
    }
    let (conclusion, title) = match (&found.error, found.notes.is_empty()) {
        (Some(_), _) => (how.on_error, "invalid sweepgate configuration"),
        (None, true) => ("success", how.ok_title),
        (None, false) => ("success", "deprecated sweepgate configuration in use"),
    };
    let summary = if lines.is_empty() {
        how.ok_title.to_owned()
    } else {
        lines.join("\n")
    };
    api.check_run_with_annotations(
        repo,
        &crate::github::CheckRunReport {
            name: CONFIG_CHECK,
            head_sha: sha,
            conclusion,
            title,
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
        let repo = super::repo_of(ctx)?;
        let default = ctx.envelope.default_branch.as_deref().unwrap_or("main");
        match event {
            Event::Push(ev) => {
                if ev.ref_name != format!("refs/heads/{default}")
                    || ev.after.chars().all(|c| c == '0')
                {
                    return Ok(());
                }
                // Reloaded (and kept when valid) as every handler does.
                let (api, _) = self.services.api_in_mode(ctx, &repo, default).await?;
                // A commit with no configuration file gets no check run.
                let any = std::sync::atomic::AtomicBool::new(false);
                let read = |path| {
                    let file = api.file_at(&repo, path, &ev.after);
                    let any = &any;
                    async move {
                        let bytes = file.await?;
                        if bytes.is_some() {
                            any.store(true, std::sync::atomic::Ordering::Relaxed);
                        }
                        Ok::<_, GitHubError>(bytes)
                    }
                };
                let resolved = crate::config::repo::read_with(read, true).await?;
                if !any.into_inner() {
                    return Ok(());
                }
                let found = Findings::of(resolved);
                if let Some(e) = &found.error {
                    tracing::warn!(%repo, error = %e, "configuration on the default branch is invalid; the last valid one stays in force");
                }
                let how = Report {
                    ok_title: "configuration reloaded",
                    on_error: "failure",
                    error_level: "failure",
                    lead: found
                        .error
                        .is_some()
                        .then(|| "The last valid configuration stays in force.".to_owned()),
                };
                report(&api, &repo, &ev.after, &found, how).await
            }
            Event::PullRequest(ev) => {
                let (api, loaded) = self.services.api_in_mode(ctx, &repo, default).await?;
                let pr = &ev.pull_request;
                let Some(head) = pr.head.as_ref() else {
                    return Ok(());
                };
                let changed = api.pr_files(&repo, pr.number).await?;
                let touched: Vec<&str> = CONFIG_FILES
                    .into_iter()
                    .filter(|p| changed.iter().any(|f| f.filename == *p))
                    .collect();
                if touched.is_empty() {
                    // The configuration in force: said on every PR while
                    // it is broken or uses deprecated files.
                    let found = Findings {
                        error: loaded.error,
                        notes: loaded.notes,
                    };
                    if found.error.is_none() && found.notes.is_empty() {
                        return Ok(());
                    }
                    let how = Report {
                        ok_title: "configuration valid",
                        on_error: "neutral",
                        error_level: "warning",
                        lead: Some(format!(
                            "The configuration of `{default}`{}",
                            if found.error.is_some() {
                                " is invalid; the last valid one is in force."
                            } else {
                                ":"
                            }
                        )),
                    };
                    return report(&api, &repo, &head.sha, &found, how).await;
                }
                // The files as they would be after a merge (a fork's head
                // commit is visible through the base repository).
                let found = Findings::of(read(&api, &repo, &head.sha, true).await?);
                // The problems quote the PR's file (a key may be anything).
                let quote = |v: Vec<String>| -> Vec<String> {
                    v.iter().map(|p| crate::comments::quote(p)).collect()
                };
                let body = crate::comments::render(&crate::comments::ConfigCheck {
                    sha: &head.sha,
                    files: &touched
                        .iter()
                        .map(|p| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(" and "),
                    many: touched.len() > 1,
                    branch: default,
                    problems: &quote(found.problems()),
                    notes: &quote(found.notes()),
                });
                super::publish::upsert(
                    &api,
                    &repo,
                    pr.number,
                    crate::comments::CONFIG_CHECK_MARKER,
                    &body,
                )
                .await?;
                let how = Report {
                    ok_title: "configuration valid",
                    on_error: "failure",
                    error_level: "failure",
                    lead: None,
                };
                report(&api, &repo, &head.sha, &found, how).await
            }
            _ => Ok(()),
        }
    }
}
