//! Server configuration: flags, then environment, then an optional TOML
//! file, then defaults. Secrets are wrapped so they never reach a log.
use crate::store::SqliteSync;
use serde::Deserialize;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// Whether sweepgate writes to GitHub (`docs/shadow.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Comments, statuses, check runs, labels, dispatches and cancels go
    /// to GitHub.
    #[default]
    Live,
    /// Everything is done but nothing is written to GitHub: each write is
    /// stored, in full, and shown on the dashboard as "would post".
    Shadow,
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
    /// `live`, or `shadow`: do all the work, write nothing to GitHub.
    #[arg(long, env = "SWEEPGATE_MODE", value_enum)]
    pub mode: Option<Mode>,
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
    #[arg(long, env = "SWEEPGATE_SQLITE_SYNC", value_parser = sqlite_sync_parser())]
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
    /// Serve the dashboard's pages to anyone, read-only, without a login.
    #[arg(
        long,
        env = "SWEEPGATE_DASHBOARD_PUBLIC",
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub dashboard_public: Option<bool>,
    /// Seconds a request may take before it is answered 408.
    #[arg(long, env = "SWEEPGATE_REQUEST_TIMEOUT_SECS")]
    pub request_timeout_secs: Option<u64>,
    /// Seconds a request body may take to arrive, in total.
    #[arg(long, env = "SWEEPGATE_BODY_TIMEOUT_SECS")]
    pub body_timeout_secs: Option<u64>,
    /// Webhook deliveries handled at once; more are answered 503.
    #[arg(long, env = "SWEEPGATE_INTAKE_CONCURRENCY")]
    pub intake_concurrency: Option<usize>,
    /// Bytes of webhook bodies held in memory at once, across deliveries.
    #[arg(long, env = "SWEEPGATE_INTAKE_BUFFER_BYTES")]
    pub intake_buffer_bytes: Option<u64>,
    /// Largest file read from a repository, in bytes.
    #[arg(long, env = "SWEEPGATE_MAX_BLOB_BYTES")]
    pub max_blob_bytes: Option<u64>,
    /// Largest shell script (`*.sh`) read from a repository, in bytes.
    #[arg(long, env = "SWEEPGATE_MAX_SCRIPT_BYTES")]
    pub max_script_bytes: Option<u64>,
    /// Largest YAML file (`*.yaml`, `*.yml`) read from a repository, in bytes.
    #[arg(long, env = "SWEEPGATE_MAX_YAML_BYTES")]
    pub max_yaml_bytes: Option<u64>,
    /// Largest run artifact downloaded (its zip archive), in bytes.
    #[arg(long, env = "SWEEPGATE_MAX_ARTIFACT_BYTES")]
    pub max_artifact_bytes: Option<u64>,
    /// Largest total of an artifact's unpacked files, in bytes.
    #[arg(long, env = "SWEEPGATE_MAX_ARTIFACT_UNPACKED_BYTES")]
    pub max_artifact_unpacked_bytes: Option<u64>,
    /// Most entries an artifact's archive may hold.
    #[arg(long, env = "SWEEPGATE_MAX_ARTIFACT_ENTRIES")]
    pub max_artifact_entries: Option<u64>,
    /// Seconds between passes that ask GitHub to redeliver failed webhook
    /// deliveries (0: never).
    #[arg(long, env = "SWEEPGATE_REDELIVER_INTERVAL_SECS")]
    pub redeliver_interval_secs: Option<u64>,
    /// Failed deliveries older than this many hours are left alone.
    #[arg(long, env = "SWEEPGATE_REDELIVER_MAX_AGE_HOURS")]
    pub redeliver_max_age_hours: Option<u64>,
    /// Redeliveries asked for in one pass, at most.
    #[arg(long, env = "SWEEPGATE_REDELIVER_MAX")]
    pub redeliver_max: Option<usize>,
}

/// The optional TOML file.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
struct FileConfig {
    listen: Option<SocketAddr>,
    mode: Option<Mode>,
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
    dashboard_public: Option<bool>,
    request_timeout_secs: Option<u64>,
    body_timeout_secs: Option<u64>,
    intake_concurrency: Option<usize>,
    intake_buffer_bytes: Option<u64>,
    max_blob_bytes: Option<u64>,
    max_script_bytes: Option<u64>,
    max_yaml_bytes: Option<u64>,
    max_artifact_bytes: Option<u64>,
    max_artifact_unpacked_bytes: Option<u64>,
    max_artifact_entries: Option<u64>,
    redeliver_interval_secs: Option<u64>,
    redeliver_max_age_hours: Option<u64>,
    redeliver_max: Option<usize>,
}

/// What the HTTP intake allows one request, and all of them at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntakeLimits {
    pub request_timeout: Duration,
    /// The whole body must have arrived by then (a slow sender is cut off).
    pub body_timeout: Duration,
    pub concurrency: usize,
    /// Bytes of webhook bodies buffered at once: forged large bodies cost
    /// at most this much memory.
    pub buffer_bytes: u64,
}

impl Default for IntakeLimits {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_secs(30),
            // GitHub gives up on a delivery after 10 s.
            body_timeout: Duration::from_secs(10),
            concurrency: 32,
            buffer_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Size caps on what sweepgate reads from repositories and runs; a read
/// over a cap is refused with the file's name and the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// Any file read from a repository (`max-blob-bytes`, the same
    /// setting and meaning as for local git reads).
    pub max_blob_bytes: u64,
    pub max_script_bytes: u64,
    pub max_yaml_bytes: u64,
    /// A run artifact's zip archive as downloaded.
    pub max_artifact_bytes: u64,
    /// The sum of an artifact's unpacked files (a zip bomb is refused).
    pub max_artifact_unpacked_bytes: u64,
    pub max_artifact_entries: u64,
}

impl Default for InputLimits {
    fn default() -> Self {
        const MIB: u64 = 1024 * 1024;
        Self {
            max_blob_bytes: 8 * MIB,
            max_script_bytes: MIB,
            max_yaml_bytes: 4 * MIB,
            max_artifact_bytes: 64 * MIB,
            max_artifact_unpacked_bytes: 256 * MIB,
            max_artifact_entries: 10_000,
        }
    }
}

impl InputLimits {
    /// The cap for a file at `path`, and the setting that sets it.
    pub fn for_path(&self, path: &str) -> (u64, &'static str) {
        let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        let cap = if name.ends_with(".sh") {
            (self.max_script_bytes, "max-script-bytes")
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            (self.max_yaml_bytes, "max-yaml-bytes")
        } else {
            (self.max_blob_bytes, "max-blob-bytes")
        };
        // No kind is allowed more than any file.
        if cap.0 > self.max_blob_bytes {
            (self.max_blob_bytes, "max-blob-bytes")
        } else {
            cap
        }
    }
}

/// Asking GitHub to redeliver the App's failed webhook deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedeliveryConfig {
    /// `None`: never.
    pub interval: Option<Duration>,
    pub max_age: Duration,
    pub max_per_pass: usize,
}

impl Default for RedeliveryConfig {
    fn default() -> Self {
        Self {
            interval: Some(Duration::from_secs(300)),
            // GitHub keeps deliveries for three days.
            max_age: Duration::from_secs(24 * 3600),
            max_per_pass: 100,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    pub mode: Mode,
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
    pub dashboard_public: bool,
    pub intake: IntakeLimits,
    pub limits: InputLimits,
    pub redelivery: RedeliveryConfig,
}

pub(crate) const DEFAULT_DATABASE_URL: &str = "sqlite:sweepgate.db";
pub(crate) const DEFAULT_GITHUB_API_URL: &str = "https://api.github.com";

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 3000)),
            mode: Mode::Live,
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
            dashboard_public: false,
            intake: IntakeLimits::default(),
            limits: InputLimits::default(),
            redelivery: RedeliveryConfig::default(),
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
            mode: args.mode.or(file.mode).unwrap_or_default(),
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
            dashboard_public: args
                .dashboard_public
                .or(file.dashboard_public)
                .unwrap_or(false),
            intake: IntakeLimits {
                request_timeout: secs(
                    args.request_timeout_secs.or(file.request_timeout_secs),
                    d.intake.request_timeout,
                ),
                body_timeout: secs(
                    args.body_timeout_secs.or(file.body_timeout_secs),
                    d.intake.body_timeout,
                ),
                concurrency: args
                    .intake_concurrency
                    .or(file.intake_concurrency)
                    .unwrap_or(d.intake.concurrency)
                    .max(1),
                buffer_bytes: args
                    .intake_buffer_bytes
                    .or(file.intake_buffer_bytes)
                    .unwrap_or(d.intake.buffer_bytes),
            },
            limits: InputLimits {
                max_blob_bytes: args
                    .max_blob_bytes
                    .or(file.max_blob_bytes)
                    .unwrap_or(d.limits.max_blob_bytes),
                max_script_bytes: args
                    .max_script_bytes
                    .or(file.max_script_bytes)
                    .unwrap_or(d.limits.max_script_bytes),
                max_yaml_bytes: args
                    .max_yaml_bytes
                    .or(file.max_yaml_bytes)
                    .unwrap_or(d.limits.max_yaml_bytes),
                max_artifact_bytes: args
                    .max_artifact_bytes
                    .or(file.max_artifact_bytes)
                    .unwrap_or(d.limits.max_artifact_bytes),
                max_artifact_unpacked_bytes: args
                    .max_artifact_unpacked_bytes
                    .or(file.max_artifact_unpacked_bytes)
                    .unwrap_or(d.limits.max_artifact_unpacked_bytes),
                max_artifact_entries: args
                    .max_artifact_entries
                    .or(file.max_artifact_entries)
                    .unwrap_or(d.limits.max_artifact_entries),
            },
            redelivery: RedeliveryConfig {
                interval: match args
                    .redeliver_interval_secs
                    .or(file.redeliver_interval_secs)
                {
                    Some(0) => None,
                    Some(s) => Some(Duration::from_secs(s)),
                    None => d.redelivery.interval,
                },
                max_age: args
                    .redeliver_max_age_hours
                    .or(file.redeliver_max_age_hours)
                    .map_or(d.redelivery.max_age, |h| Duration::from_secs(h * 3600)),
                max_per_pass: args
                    .redeliver_max
                    .or(file.redeliver_max)
                    .unwrap_or(d.redelivery.max_per_pass),
            },
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

/// Whole seconds, at least one; `default` when not given.
fn secs(given: Option<u64>, default: Duration) -> Duration {
    given.map_or(default, |s| Duration::from_secs(s.max(1)))
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

/// `--sqlite-sync`: the store's names, listed in `--help` (the store itself
/// knows no command line).
fn sqlite_sync_parser() -> impl clap::builder::TypedValueParser<Value = SqliteSync> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(SqliteSync::BY_NAME.map(|(name, _)| name))
        .try_map(|s| s.parse::<SqliteSync>())
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
            "workers = 7\nwebhook-secrets = [\"a\", \"b\"]\ndatabase-url = \"sqlite:x.db\"\nmode = \"shadow\"\n",
        )
        .unwrap();
        let args = ServerArgs {
            config: Some(path),
            database_url: Some("postgres://h/db".into()),
            ..ServerArgs::default()
        };
        let cfg = ServerConfig::resolve(&args).unwrap();
        assert_eq!(cfg.workers, 7);
        assert_eq!(cfg.mode, Mode::Shadow);
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
    fn limits_come_from_flags_and_file_and_scripts_get_their_own_cap() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: ServerArgs,
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sg.toml");
        std::fs::write(
            &path,
            "max-script-bytes = 1000\nredeliver-interval-secs = 0\nintake-concurrency = 4\n",
        )
        .unwrap();
        let cli = Cli::parse_from([
            "t",
            "--config",
            path.to_str().unwrap(),
            "--dashboard-public",
            "--max-blob-bytes",
            "500",
            "--body-timeout-secs",
            "3",
        ]);
        let cfg = ServerConfig::resolve(&cli.args).unwrap();
        assert!(cfg.dashboard_public);
        assert_eq!(cfg.intake.concurrency, 4);
        assert_eq!(cfg.intake.body_timeout, Duration::from_secs(3));
        assert_eq!(cfg.redelivery.interval, None);
        // No kind of file is allowed more than any file.
        assert_eq!(cfg.limits.for_path("b/x.sh"), (500, "max-blob-bytes"));
        assert_eq!(cfg.limits.for_path("docs/a.md"), (500, "max-blob-bytes"));
        let d = InputLimits::default();
        assert_eq!(d.for_path("b/X.SH"), (1024 * 1024, "max-script-bytes"));
        assert_eq!(d.for_path("c/m.yml"), (4 * 1024 * 1024, "max-yaml-bytes"));
        assert!(!ServerConfig::default().dashboard_public);
    }

    #[test]
    fn no_secret_is_refused() {
        assert!(ServerConfig::default().require_secrets().is_err());
    }
}
