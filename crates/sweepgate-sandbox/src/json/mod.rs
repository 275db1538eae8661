//! Response and payload shapes, field for field as in
//! `fixtures/github/rest/examples.json` and the webhook fixtures, with URLs
//! pointing at the sandbox (API) and at the configured HTML base.
//!
//! The shapes are grouped by GitHub area, as the routes are:
//! repositories and git data, pull requests, issues and their comments
//! and labels, checks and statuses, Actions, and apps and accounts.
mod actions;
mod apps;
mod checks;
mod issues;
mod pulls;
mod repos;

use crate::state::World;
use base64::Engine;

fn node_id(kind: &str, id: u64) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("0{}:{kind}{id}", kind.len()))
}

impl World {
    fn api(&self) -> &str {
        &self.settings.api_base
    }
    pub(crate) fn html(&self) -> &str {
        &self.settings.html_base
    }
}

/// Percent-encodes one path segment (label names have spaces).
pub(crate) fn url_escape(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// Percent-encodes a file path, keeping its slashes.
pub(crate) fn url_escape_path(s: &str) -> String {
    s.split('/').map(url_escape).collect::<Vec<_>>().join("/")
}
