//! Deployment: the GitHub App manifest (in progress).
