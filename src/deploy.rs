//! Deployment: the GitHub App manifest.
//!
//! [`PERMISSIONS`] and [`events`] (from `events::table`) are the single source of what the App asks
//! GitHub for; `deploy/github-app-manifest.json` is [`app_manifest`] rendered
//! for `https://sweepgate.example.com` and a test keeps the two equal.
//! `deploy/README.md` explains each permission, and why `contents` stays
//! `read` although staging needs `write` on the results repository: the
//! staging request goes out with a separate token scoped to that
//! repository (`--staging-token`, `Services::with_staging_token`).

use serde_json::{Map, Value, json};
use std::fmt;

/// The App's name in the manifest; GitHub lets the operator change it on the
/// registration page (App names are unique on GitHub).
pub(crate) const APP_NAME: &str = "sweepgate";

/// The public URL `deploy/github-app-manifest.json` is rendered for.
pub const EXAMPLE_PUBLIC_URL: &str = "https://sweepgate.example.com";

/// The path of the webhook endpoint under the public URL.
pub(crate) const WEBHOOK_PATH: &str = "/webhook";

/// Least-privilege permissions, as `(permission, access)` in GitHub's
/// manifest spelling, for exactly the calls sweepgate makes:
///
/// - `actions: write`: dispatch the sweep workflow, cancel superseded runs,
///   read runs, jobs and artifacts;
/// - `checks: write`: the `sweepgate / verdict` check run with annotations,
///   and reading the check runs of a commit (Check 1);
/// - `contents: read`: files at a ref, trees, compare;
/// - `issues: write`: create and edit the bot's comments, read comments;
/// - `members: read`: organization team memberships (CODEOWNERS teams);
/// - `metadata: read`: repository metadata and collaborator permission
///   lookups (mandatory for every App);
/// - `pull_requests: write`: read the PR, its files, commits, reviews and
///   review comments; comment on it;
/// - `statuses: write`: the `codeowner-signoff-verify` commit status.
pub const PERMISSIONS: &[(&str, &str)] = &[
    ("actions", "write"),
    ("checks", "write"),
    ("contents", "read"),
    ("issues", "write"),
    ("members", "read"),
    ("metadata", "read"),
    ("pull_requests", "write"),
    ("statuses", "write"),
];

/// The permissions of a shadow installation (`docs/shadow.md`): it reads
/// what the live App reads and writes nothing.
pub const SHADOW_PERMISSIONS: &[(&str, &str)] = &[
    ("actions", "read"),
    ("checks", "read"),
    ("contents", "read"),
    ("issues", "read"),
    ("members", "read"),
    ("metadata", "read"),
    ("pull_requests", "read"),
    ("statuses", "read"),
];

/// The permissions the manifest asks for: live, or read-only for shadow.
pub fn permissions_for(shadow: bool) -> &'static [(&'static str, &'static str)] {
    if shadow {
        SHADOW_PERMISSIONS
    } else {
        PERMISSIONS
    }
}

/// Webhook events the App subscribes to: those some handler acts on
/// (`events::table`). Installation events are always sent and cannot be
/// listed.
pub fn events() -> Vec<&'static str> {
    crate::events::table::handled_events()
}

/// The manifest GitHub's "create a GitHub App from a manifest" flow takes,
/// with the webhook at `<public_url>/webhook`. A trailing `/` of
/// `public_url` is ignored; the URL itself is not checked here (see
/// [`app_manifest_json`]).
pub fn app_manifest(public_url: &str) -> Value {
    let base = public_url.trim_end_matches('/');
    let permissions: Map<String, Value> = PERMISSIONS
        .iter()
        .map(|(name, access)| ((*name).to_owned(), Value::from(*access)))
        .collect();
    json!({
        "name": APP_NAME,
        "url": base,
        "hook_attributes": {
            "url": format!("{base}{WEBHOOK_PATH}"),
            "active": true,
        },
        "redirect_url": base,
        "public": false,
        "default_permissions": permissions,
        "default_events": events(),
    })
}

/// Why a public URL cannot be put into the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PublicUrlError {
    pub url: String,
    pub reason: &'static str,
}

impl fmt::Display for PublicUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid public URL `{}`: {}", self.url, self.reason)
    }
}

impl std::error::Error for PublicUrlError {}

/// Checks that `public_url` can serve as the App's base URL: an absolute
/// `https://` URL (or `http://` on a loopback host, for local trials) with
/// a host and no query, fragment or credentials.
pub(crate) fn check_public_url(public_url: &str) -> Result<(), PublicUrlError> {
    let fail = |reason| PublicUrlError {
        url: public_url.to_owned(),
        reason,
    };
    let url = url::Url::parse(public_url).map_err(|_| fail("not an absolute URL"))?;
    let host = url.host_str().ok_or_else(|| fail("no host"))?;
    let loopback = matches!(host, "localhost" | "127.0.0.1" | "[::1]");
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => return Err(fail("GitHub must reach the webhook over https")),
        _ => return Err(fail("the scheme must be https")),
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(fail("a query or fragment cannot precede `/webhook`"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(fail("credentials do not belong in a public URL"));
    }
    Ok(())
}

/// The manifest for `public_url` as pretty-printed JSON with a final
/// newline, exactly as `deploy/github-app-manifest.json` is written (what
/// `sweepgate app-manifest` prints).
pub(crate) fn app_manifest_json(public_url: &str) -> Result<String, PublicUrlError> {
    check_public_url(public_url)?;
    Ok(format!("{:#}\n", app_manifest(public_url)))
}

/// The manifest of a shadow installation (`docs/shadow.md`): the same
/// events, every permission read-only, its own name.
pub fn shadow_app_manifest(public_url: &str) -> Value {
    let mut m = app_manifest(public_url);
    let permissions: Map<String, Value> = SHADOW_PERMISSIONS
        .iter()
        .map(|(name, access)| ((*name).to_owned(), Value::from(*access)))
        .collect();
    m["name"] = Value::from(format!("{APP_NAME}-shadow"));
    m["default_permissions"] = Value::Object(permissions);
    m
}

/// [`shadow_app_manifest`] as `sweepgate app-manifest --shadow` prints it.
pub(crate) fn shadow_app_manifest_json(public_url: &str) -> Result<String, PublicUrlError> {
    check_public_url(public_url)?;
    Ok(format!("{:#}\n", shadow_app_manifest(public_url)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::Path;

    fn manifest_file() -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/github-app-manifest.json");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn the_committed_manifest_is_the_rendered_one() {
        let file: Value = serde_json::from_str(&manifest_file()).unwrap();
        assert_eq!(file, app_manifest(EXAMPLE_PUBLIC_URL));
        // Byte for byte too, so `sweepgate app-manifest > …` reproduces it.
        assert_eq!(
            manifest_file(),
            app_manifest_json(EXAMPLE_PUBLIC_URL).unwrap()
        );
    }

    #[test]
    fn hook_url_is_the_webhook_route() {
        for base in ["https://gate.example.org", "https://gate.example.org/"] {
            let m = app_manifest(base);
            assert_eq!(
                m["hook_attributes"]["url"],
                "https://gate.example.org/webhook"
            );
            assert_eq!(m["hook_attributes"]["active"], true);
            assert_eq!(m["url"], "https://gate.example.org");
            assert_eq!(m["public"], false);
        }
        let m = app_manifest("https://example.org/gh/sweepgate");
        assert_eq!(
            m["hook_attributes"]["url"],
            "https://example.org/gh/sweepgate/webhook"
        );
    }

    #[test]
    fn permissions_and_events_have_no_duplicates_and_valid_access() {
        let names: BTreeSet<_> = PERMISSIONS.iter().map(|(n, _)| n).collect();
        assert_eq!(names.len(), PERMISSIONS.len());
        assert!(
            PERMISSIONS
                .iter()
                .all(|(_, a)| matches!(*a, "read" | "write"))
        );
        let listed = events();
        let unique: BTreeSet<_> = listed.iter().collect();
        assert_eq!(unique.len(), listed.len());
        // GitHub rejects a subscription to an event whose permission the App
        // lacks; these are the permissions each event needs.
        let needs = |event: &str| match event {
            "pull_request" | "pull_request_review" | "pull_request_review_comment" => {
                "pull_requests"
            }
            "issue_comment" => "issues",
            "check_run" => "checks",
            "workflow_run" | "workflow_job" => "actions",
            "repository_dispatch" | "push" => "contents",
            other => panic!("no permission known for event {other}"),
        };
        for event in listed {
            assert!(
                names.contains(&needs(event)),
                "{event} needs {}",
                needs(event)
            );
        }
    }

    #[test]
    fn public_urls_are_checked() {
        assert!(app_manifest_json("https://gate.example.org").is_ok());
        assert!(app_manifest_json("http://localhost:3000").is_ok());
        for bad in [
            "gate.example.org",
            "http://gate.example.org",
            "ftp://gate.example.org",
            "https://gate.example.org/?x=1",
            "https://gate.example.org/#a",
            "https://user:pw@gate.example.org",
            "",
        ] {
            let err = app_manifest_json(bad).unwrap_err();
            assert_eq!(err.url, bad);
            assert!(err.to_string().contains(bad));
        }
    }
}
