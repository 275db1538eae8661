//! GitHub access: App authentication (RS256 JWT, installation tokens cached
//! and refreshed before expiry by octocrab), one retry policy for every call,
//! pagination, and typed helpers for the endpoints sweepgate uses. Nothing
//! else in sweepgate talks to GitHub; checks never do.
mod client;
mod rest;
mod retry;
pub mod shadow;
mod source;

pub use client::{Api, Credentials, GitHub, GitHubConfig, Response};
pub(crate) use rest::artifacts::Artifact;
pub(crate) use rest::checks::CheckRunReport;
pub(crate) use rest::comments::{CommentAnchor, IssueComment};
pub(crate) use rest::pulls::PullFacts;
pub use retry::{RetryPolicy, Sleeper, TokioSleeper};
pub use source::GitHubSource;

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    #[error("GitHub answered {status} to {method} {path}: {message}")]
    Status {
        method: String,
        path: String,
        status: u16,
        message: String,
        /// When GitHub said to come back (rate limits).
        retry_after: Option<Duration>,
    },
    #[error("could not reach GitHub for {method} {path}: {message}")]
    Transport {
        method: String,
        path: String,
        message: String,
    },
    #[error("unexpected answer to {path}: {message}")]
    Decode { path: String, message: String },
    #[error("GitHub client configuration: {0}")]
    Config(String),
}

impl GitHubError {
    pub fn status(&self) -> Option<u16> {
        match self {
            GitHubError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    pub(crate) fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// Worth trying again later (the queue's retry, after in-process retries
    /// were used up).
    pub fn is_transient(&self) -> bool {
        match self {
            GitHubError::Status {
                status,
                retry_after,
                ..
            } => *status >= 500 || *status == 429 || retry_after.is_some(),
            GitHubError::Transport { .. } => true,
            _ => false,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            GitHubError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

impl From<GitHubError> for crate::events::HandlerError {
    fn from(e: GitHubError) -> Self {
        if e.is_transient() {
            crate::events::HandlerError::Transient {
                retry_after: e.retry_after(),
                message: e.to_string(),
            }
        } else {
            crate::events::HandlerError::Permanent(e.to_string())
        }
    }
}
