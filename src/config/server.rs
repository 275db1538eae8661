//! Server configuration: flags, then environment, then an optional TOML
//! file, then defaults. Secrets are wrapped so they never reach a log.
use crate::store::SqliteSync;
use serde::Deserialize;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// A secret value: `Debug` and `Display` print `***`.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// The flags of `sweepgate serve` (each also readable from the environment).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServerArgs {
    /// TOML file with any of the settings below (kebab-case keys).
    #[arg(long, env = "SWEEPGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, env = "SWEEPGATE_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// `sqlite:path` (default `sqlite:sweepgate.db`) or `postgres://…`.
    #[arg(long, env = "SWEEPGATE_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Webhook secret; repeat (or separate with commas) to accept several
    /// during a rotation.
    #[arg(
        long = "webhook-secret",
        env = "SWEEPGATE_WEBHOOK_SECRETS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub webhook_secrets: Vec<String>,
    /// GitHub App id.
    #[arg(long, env = "SWEEPGATE_APP_ID")]
    pub app_id: Option<u64>,
    /// PEM file of the GitHub App's private key.
    #[arg(long, env = "SWEEPGATE_PRIVATE_KEY_PATH")]
    pub private_key_path: Option<PathBuf>,
    /// A personal access token instead of App credentials (local use only).
    #[arg(long, env = "SWEEPGATE_GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    /// Token that sends staging requests to the results repository (a
    /// fine-grained token with `contents: write` on that repository only).
    #[arg(long, env = "SWEEPGATE_STAGING_TOKEN", hide_env_values = true)]
    pub staging_token: Option<String>,
    /// GitHub REST API base URL.
    #[arg(long, env = "SWEEPGATE_GITHUB_API_URL")]
    pub github_api_url: Option<String>,
    /// Number of queue workers.
    #[arg(long, env = "SWEEPGATE_WORKERS")]
    pub workers: Option<usize>,
    /// SQLite durability (see docs/operations.md).
    #[arg(long, env = "SWEEPGATE_SQLITE_SYNC", value_enum)]
    pub sqlite_sync: Option<SqliteSync>,
    /// Public base URL of this server (links in comments, dashboard).
    #[arg(long, env = "SWEEPGATE_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Log format.
    #[arg(long, env = "SWEEPGATE_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,
    /// Token the dashboard's actions (retrying a dead job) require; without
    /// one the dashboard is read-only.
    #[arg(long, env = "SWEEPGATE_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// Seconds a worker's claim on a job lasts without a heartbeat: how
    /// soon another worker takes over the jobs of a crashed one.
    #[arg(long, env = "SWEEPGATE_LEASE_SECS")]
    pub lease_secs: Option<u64>,
}

/// The optional TOML file.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
struct FileConfig {
    listen: Option<SocketAddr>,
    database_url: Option<String>,
    webhook_secrets: Vec<Secret>,
    app_id: Option<u64>,
    private_key_path: Option<PathBuf>,
    github_token: Option<Secret>,
    staging_token: Option<Secret>,
    github_api_url: Option<String>,
    workers: Option<usize>,
    sqlite_sync: Option<SqliteSync>,
    public_url: Option<String>,
    log_format: Option<LogFormat>,
    admin_token: Option<Secret>,
    lease_secs: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    pub database_url: String,
    pub webhook_secrets: Vec<Secret>,
    pub app_id: Option<u64>,
    pub private_key_path: Option<PathBuf>,
    pub github_token: Option<Secret>,
    pub staging_token: Option<Secret>,
    pub github_api_url: String,
    pub workers: usize,
    pub sqlite_sync: SqliteSync,
    pub public_url: Option<String>,
    pub log_format: LogFormat,
    pub admin_token: Option<Secret>,
    pub lease: std::time::Duration,
}

pub(crate) const DEFAULT_DATABASE_URL: &str = "sqlite:sweepgate.db";
pub(crate) const DEFAULT_GITHUB_API_URL: &str = "https://api.github.com";

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 3000)),
            database_url: DEFAULT_DATABASE_URL.into(),
            webhook_secrets: Vec::new(),
            app_id: None,
            private_key_path: None,
            github_token: None,
            staging_token: None,
            github_api_url: DEFAULT_GITHUB_API_URL.into(),
            workers: 4,
            sqlite_sync: SqliteSync::Normal,
            public_url: None,
            log_format: LogFormat::Text,
            admin_token: None,
            lease: std::time::Duration::from_secs(60),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServerConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{0}")]
    Missing(String),
}

impl ServerConfig {
    /// Merges flags/environment (already merged by clap) over the file.
    pub fn resolve(args: &ServerArgs) -> Result<Self, ServerConfigError> {
        let file = match &args.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let d = ServerConfig::default();
        let secrets: Vec<Secret> = if args.webhook_secrets.is_empty() {
            file.webhook_secrets
        } else {
            args.webhook_secrets.iter().map(Secret::new).collect()
        };
        let cfg = ServerConfig {
            listen: args.listen.or(file.listen).unwrap_or(d.listen),
            database_url: args
                .database_url
                .clone()
                .or(file.database_url)
                .unwrap_or(d.database_url),
            webhook_secrets: secrets.into_iter().filter(|s| !s.0.is_empty()).collect(),
            app_id: args.app_id.or(file.app_id),
            private_key_path: args.private_key_path.clone().or(file.private_key_path),
            github_token: args
                .github_token
                .clone()
                .map(Secret::new)
                .or(file.github_token),
            staging_token: args
                .staging_token
                .clone()
                .map(Secret::new)
                .or(file.staging_token)
                .filter(|s| !s.0.is_empty()),
            github_api_url: args
                .github_api_url
                .clone()
                .or(file.github_api_url)
                .unwrap_or(d.github_api_url),
            workers: args.workers.or(file.workers).unwrap_or(d.workers).max(1),
            sqlite_sync: args.sqlite_sync.or(file.sqlite_sync).unwrap_or_default(),
            public_url: args.public_url.clone().or(file.public_url),
            log_format: args.log_format.or(file.log_format).unwrap_or_default(),
            admin_token: args
                .admin_token
                .clone()
                .map(Secret::new)
                .or(file.admin_token)
                .filter(|s| !s.0.is_empty()),
            lease: args
                .lease_secs
                .or(file.lease_secs)
                .map_or(d.lease, |s| std::time::Duration::from_secs(s.max(1))),
        };
        Ok(cfg)
    }

    /// GitHub credentials: App id and key, or a personal token.
    pub(crate) fn credentials(&self) -> Result<crate::github::Credentials, ServerConfigError> {
        use crate::github::Credentials;
        match (&self.app_id, &self.private_key_path, &self.github_token) {
            (Some(app_id), Some(path), _) => {
                let pem = std::fs::read_to_string(path).map_err(|source| ServerConfigError::Read {
                    path: path.display().to_string(),
                    source,
                })?;
                Ok(Credentials::App {
                    app_id: *app_id,
                    private_key_pem: Secret::new(pem),
                })
            }
            (None, None, Some(token)) => Ok(Credentials::Token(token.clone())),
            (Some(_), None, _) => Err(ServerConfigError::Missing(
                "--app-id needs --private-key-path".into(),
            )),
            (None, Some(_), _) => Err(ServerConfigError::Missing(
                "--private-key-path needs --app-id".into(),
            )),
            (None, None, None) => Err(ServerConfigError::Missing(
                "no GitHub credentials: pass --app-id and --private-key-path (or --github-token for local use)".into(),
            )),
        }
    }

    /// `serve` refuses to start without a secret: an unsigned webhook
    /// endpoint would accept anyone's deliveries.
    pub fn require_secrets(&self) -> Result<(), ServerConfigError> {
        if self.webhook_secrets.is_empty() {
            return Err(ServerConfigError::Missing(
                "no webhook secret: pass --webhook-secret or set SWEEPGATE_WEBHOOK_SECRETS".into(),
            ));
        }
        Ok(())
    }
}

fn read_file(path: &Path) -> Result<FileConfig, ServerConfigError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ServerConfigError::Read {
        path: shown.clone(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| sweepgate_core::config::repo::line_col(text.as_bytes(), s.start))
            .unwrap_or((1, 1));
        ServerConfigError::Invalid {
            path: shown,
            line,
            column,
            message: e.message().to_owned(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?} {s}"), "Secret(***) ***");
        let cfg = ServerConfig {
            webhook_secrets: vec![s],
            ..ServerConfig::default()
        };
        assert!(!format!("{cfg:?}").contains("hunter2"));
    }

    #[test]
    fn flags_win_over_file_and_file_over_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sg.toml");
        std::fs::write(
            &path,
            "workers = 7\nwebhook-secrets = [\"a\", \"b\"]\ndatabase-url = \"sqlite:x.db\"\n",
        )
        .unwrap();
        let args = ServerArgs {
            config: Some(path),
            database_url: Some("postgres://h/db".into()),
            ..ServerArgs::default()
        };
        let cfg = ServerConfig::resolve(&args).unwrap();
        assert_eq!(cfg.workers, 7);
        assert_eq!(cfg.database_url, "postgres://h/db");
        assert_eq!(cfg.webhook_secrets.len(), 2);
        assert_eq!(cfg.github_api_url, DEFAULT_GITHUB_API_URL);
    }

    #[test]
    fn bad_file_names_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sg.toml");
        std::fs::write(&path, "workers = 2\nlisten = 12\n").unwrap();
        let args = ServerArgs {
            config: Some(path),
            ..ServerArgs::default()
        };
        match ServerConfig::resolve(&args).unwrap_err() {
            ServerConfigError::Invalid { line, .. } => assert_eq!(line, 2),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn no_secret_is_refused() {
        assert!(ServerConfig::default().require_secrets().is_err());
    }
}
