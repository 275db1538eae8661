//! One handler per event kind: glue that reads what it needs through the
//! GitHub client, calls the pure modules (commands, checks, lint) and hands
//! the result to the publisher. Handlers hold no rules.
pub(crate) mod authored;
pub(crate) mod commands;
pub mod dispatch;
pub(crate) mod guide;
pub(crate) mod legacy;
pub(crate) mod lint;
pub(crate) mod publish;
pub mod repo_config;
pub(crate) mod sweeps;
pub(crate) mod verify;

use crate::events::{EventRouter, HandlerError, JobContext};
use crate::github::{Api, GitHub};
use std::sync::Arc;
use sweepgate_core::ids::{InstallationId, RepoName};

/// What every handler may use.
#[derive(Clone)]
pub struct Services {
    pub github: GitHub,
    /// The date the verifier's Check 7 assesses against.
    pub clock: Clock,
    /// The dashboard's public base URL, linked from the verdict comment.
    pub public_url: Option<String>,
    /// The credential that sends staging requests to the results
    /// repository, when it is not the App's (`docs/operations.md`,
    /// "Staging"): the App keeps `contents: read` everywhere.
    pub staging: Option<GitHub>,
    /// Where a repository in shadow mode (`mode = "shadow"` in its
    /// configuration) has its writes stored instead of sent.
    pub shadow_log: Option<Arc<dyn crate::github::shadow::WriteSink>>,
}

/// An injectable clock: the system's, or a fixed date (tests, replays of
/// a review as of its day).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Clock {
    #[default]
    System,
    Fixed(chrono::NaiveDate),
}

impl Clock {
    pub(crate) fn today(self) -> chrono::NaiveDate {
        match self {
            Clock::System => chrono::Utc::now().date_naive(),
            Clock::Fixed(d) => d,
        }
    }
}

impl Services {
    pub fn new(github: GitHub) -> Self {
        Self {
            github,
            clock: Clock::System,
            public_url: None,
            staging: None,
            shadow_log: None,
        }
    }

    /// Keeps the intended writes of repositories in shadow mode in `log`.
    pub fn with_shadow_log(mut self, log: Arc<dyn crate::github::shadow::WriteSink>) -> Self {
        self.shadow_log = Some(log);
        self
    }

    /// Sends staging requests with `token` (a fine-grained token holding
    /// `contents: write` on the results repository alone) instead of the
    /// App; `None` keeps the App.
    pub fn with_staging_token(
        mut self,
        api_url: &str,
        token: Option<crate::config::server::Secret>,
    ) -> Result<Self, crate::github::GitHubError> {
        self.staging = match token {
            None => None,
            Some(t) => Some(GitHub::new(crate::github::GitHubConfig {
                api_url: api_url.to_owned(),
                credentials: crate::github::Credentials::Token(t),
                policy: crate::github::RetryPolicy::default(),
            })?),
        };
        Ok(self)
    }

    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    pub fn with_public_url(mut self, url: Option<String>) -> Self {
        self.public_url = url.map(|u| u.trim_end_matches('/').to_owned());
        self
    }
}

impl Services {
    /// The API as the installation that sent the delivery.
    pub(crate) fn api(&self, ctx: &JobContext) -> Result<Api, HandlerError> {
        let id = ctx
            .envelope
            .installation_id
            .ok_or_else(|| HandlerError::Permanent("the delivery names no installation".into()))?;
        Ok(self.github.installation(InstallationId(id))?)
    }
}

impl Services {
    /// `api` as the repository's configuration asks: writes go to the
    /// shadow log when it says `mode = "shadow"`. A repository that asks
    /// for shadow on a server with no log gets no writes at all: the job
    /// fails with the reason rather than write live.
    pub(crate) fn in_mode(
        &self,
        api: Api,
        cfg: &sweepgate_core::config::RepoConfig,
    ) -> Result<Api, HandlerError> {
        if cfg.mode != sweepgate_core::config::WriteMode::Shadow || api.is_shadow() {
            return Ok(api);
        }
        match &self.shadow_log {
            Some(log) => Ok(api.with_sink(log.clone())),
            None => Err(HandlerError::Permanent(
                "the repository's configuration asks for shadow mode, and this server keeps no shadow log".into(),
            )),
        }
    }

    /// The installation's API in the repository's mode, with the
    /// repository's configuration.
    pub(crate) async fn api_in_mode(
        &self,
        ctx: &JobContext,
        repo: &RepoName,
        default_branch: &str,
    ) -> Result<(Api, repo_config::Loaded), HandlerError> {
        let api = self.api(ctx)?;
        let loaded = repo_config::load(&api, &ctx.store, repo, default_branch).await?;
        Ok((self.in_mode(api, &loaded.config)?, loaded))
    }
}

impl Services {
    /// The API as the installation that covers `repo` (the results
    /// repository may live in another organisation).
    pub(crate) async fn api_for_repo(&self, repo: &RepoName) -> Result<Api, HandlerError> {
        if !self.github.is_app() {
            return Ok(self.github.app());
        }
        #[derive(serde::Deserialize)]
        struct Installation {
            id: u64,
        }
        let (o, r) = repo
            .parts()
            .ok_or_else(|| HandlerError::Permanent(format!("`{repo}` is not owner/name")))?;
        let inst: Installation = self
            .github
            .app()
            .get(&format!("/repos/{o}/{r}/installation"))
            .await?;
        Ok(self.github.installation(InstallationId(inst.id))?)
    }
}

impl Services {
    /// The API that sends a staging request to `repo` (the results
    /// repository): the staging credential when one is configured.
    pub(crate) async fn staging_api(&self, repo: &RepoName) -> Result<Api, HandlerError> {
        match &self.staging {
            Some(s) => Ok(s.app()),
            None => self.api_for_repo(repo).await,
        }
    }
}

/// Where a handler works: the repository, the API as the installation that
/// sent the delivery, and the repository's configuration.
pub(crate) struct Scope {
    pub repo: RepoName,
    pub api: Api,
    pub cfg: sweepgate_core::config::RepoConfig,
    pub default_branch: String,
}

impl Services {
    pub(crate) async fn scope(&self, ctx: &JobContext) -> Result<Scope, HandlerError> {
        let repo = repo_of(ctx)?;
        let api = self.api(ctx)?;
        let default_branch = ctx
            .envelope
            .default_branch
            .clone()
            .unwrap_or_else(|| "main".into());
        let cfg = repo_config::load(&api, &ctx.store, &repo, &default_branch)
            .await?
            .config;
        let api = self.in_mode(api, &cfg)?;
        Ok(Scope {
            repo,
            api,
            cfg,
            default_branch,
        })
    }
}

/// A file at a revision through a repository source; a read failure is
/// worth another attempt.
pub(crate) async fn read_at(
    src: &dyn crate::repo::RepoSource,
    rev: &str,
    path: &str,
) -> Result<Option<Vec<u8>>, HandlerError> {
    crate::repo::read_optional(src, rev, path)
        .await
        .map_err(|e| HandlerError::Transient {
            message: e.to_string(),
            retry_after: e.retry_after(),
        })
}

/// Notes on the PR's dashboard timeline what a handler did. A retried job
/// repeating the same effect adds nothing.
pub(crate) async fn record_activity(
    store: &crate::store::Store,
    repo: &RepoName,
    pr: sweepgate_core::ids::PrNumber,
    head_sha: Option<&str>,
    kind: &str,
    summary: &str,
    detail: &serde_json::Value,
) -> Result<(), HandlerError> {
    let detail = detail.to_string();
    let pr_number = pr.0 as i64;
    let previous = store.last_activity(&repo.0, pr_number, kind).await?;
    let same = previous.is_some_and(|a| {
        a.head_sha.as_deref() == head_sha && a.summary == summary && a.detail == detail
    });
    if !same {
        store
            .record_activity(&crate::store::NewActivity {
                repository: repo.0.clone(),
                pr_number,
                head_sha: head_sha.map(str::to_owned),
                kind: kind.to_owned(),
                summary: summary.to_owned(),
                detail,
                at: crate::store::now_ms(),
            })
            .await?;
    }
    Ok(())
}

/// The repository the delivery is about.
pub(crate) fn repo_of(ctx: &JobContext) -> Result<RepoName, HandlerError> {
    ctx.envelope
        .repository
        .clone()
        .ok_or_else(|| HandlerError::Permanent("the delivery names no repository".into()))
}

/// Every handler sweepgate has, in the order they run for one job.
pub fn event_router(services: Services) -> EventRouter {
    EventRouter::new()
        .with(Arc::new(guide::ContributionGuide::new(services.clone())))
        .with(Arc::new(commands::Commands::new(services.clone())))
        .with(Arc::new(verify::SignoffVerifier::new(services.clone())))
        .with(Arc::new(legacy::LegacyVerdicts::new(services.clone())))
        .with(Arc::new(lint::RecipeLint::new(services.clone())))
        .with(Arc::new(repo_config::ConfigCheck::new(services.clone())))
        .with(Arc::new(sweeps::SweepGate::new(services.clone())))
        .with(Arc::new(sweeps::RunResults::new(services.clone())))
        .with(Arc::new(dispatch::SweepJobs))
        .with(Arc::new(sweeps::StagingCallback::new(services)))
}
