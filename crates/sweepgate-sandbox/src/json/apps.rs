//! Accounts (users and organizations), the app, GitHub Actions' app and
//! installations.
use super::node_id;
use crate::state::{ACTIONS_APP_ID, Account, AccountKind, World, ts};
use serde_json::{Value, json};

impl World {
    pub(crate) fn account_or_stub(&self, login: &str) -> Account {
        self.find_account(login)
            .cloned()
            .unwrap_or_else(|| Account {
                login: login.to_string(),
                id: u64::from_str_radix(&crate::git::sha1_hex(login.as_bytes())[..7], 16)
                    .unwrap_or(1),
                kind: AccountKind::User,
            })
    }

    pub(crate) fn user_json(&self, login: &str) -> Value {
        let a = self.account_or_stub(login);
        let api = self.api();
        let html = self.html();
        // In URLs a bot's login is percent-encoded, and its page is the
        // App's, as on GitHub (`…/users/x%5Bbot%5D`, `…/apps/x`).
        let l = &a.login.replace('[', "%5B").replace(']', "%5D");
        let html_url = match a.login.strip_suffix("[bot]") {
            Some(slug) => format!("{html}/apps/{slug}"),
            None => format!("{html}/{l}"),
        };
        json!({
            "login": a.login,
            "id": a.id,
            "node_id": node_id(if a.kind == AccountKind::Organization { "Organization" } else { "User" }, a.id),
            "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", a.id),
            "gravatar_id": "",
            "url": format!("{api}/users/{l}"),
            "html_url": html_url,
            "followers_url": format!("{api}/users/{l}/followers"),
            "following_url": format!("{api}/users/{l}/following{{/other_user}}"),
            "gists_url": format!("{api}/users/{l}/gists{{/gist_id}}"),
            "starred_url": format!("{api}/users/{l}/starred{{/owner}}{{/repo}}"),
            "subscriptions_url": format!("{api}/users/{l}/subscriptions"),
            "organizations_url": format!("{api}/users/{l}/orgs"),
            "repos_url": format!("{api}/users/{l}/repos"),
            "events_url": format!("{api}/users/{l}/events{{/privacy}}"),
            "received_events_url": format!("{api}/users/{l}/received_events"),
            "type": a.kind.as_str(),
            "user_view_type": "public",
            "site_admin": false
        })
    }

    pub(crate) fn org_json(&self, login: &str) -> Value {
        let a = self.account_or_stub(login);
        let api = self.api();
        let l = &a.login;
        json!({
            "login": l,
            "id": a.id,
            "node_id": node_id("Organization", a.id),
            "url": format!("{api}/orgs/{l}"),
            "repos_url": format!("{api}/orgs/{l}/repos"),
            "events_url": format!("{api}/orgs/{l}/events"),
            "hooks_url": format!("{api}/orgs/{l}/hooks"),
            "issues_url": format!("{api}/orgs/{l}/issues"),
            "members_url": format!("{api}/orgs/{l}/members{{/member}}"),
            "public_members_url": format!("{api}/orgs/{l}/public_members{{/member}}"),
            "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", a.id),
            "description": ""
        })
    }

    pub(crate) fn app_json(&self) -> Value {
        let app = &self.settings.app;
        json!({
            "id": app.id,
            "slug": app.slug,
            "client_id": app.client_id,
            "node_id": node_id("Integration", app.id),
            "owner": self.user_json(&app.owner),
            "name": app.name,
            "description": "Deterministic PR gate (sandbox)",
            "external_url": self.settings.html_base,
            "html_url": format!("{}/apps/{}", self.settings.html_base, app.slug),
            "created_at": "2026-01-05T10:00:00Z",
            "updated_at": "2026-01-05T10:00:00Z",
            "permissions": app.grants.as_ref().map_or_else(app_permissions, |g| g.0.clone()),
            "events": app.grants.as_ref().map_or_else(
                || json!(["check_run", "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment", "push", "repository_dispatch", "workflow_job", "workflow_run"]),
                |g| g.1.clone(),
            ),
        })
    }

    pub(super) fn actions_app_json(&self) -> Value {
        json!({
            "id": ACTIONS_APP_ID,
            "slug": "github-actions",
            "node_id": node_id("Integration", ACTIONS_APP_ID),
            "owner": self.user_json("github"),
            "name": "GitHub Actions",
            "description": "Automate your workflow from idea to production",
            "external_url": "https://help.github.com/en/actions",
            "html_url": "https://github.com/apps/github-actions",
            "created_at": "2018-07-30T09:30:17Z",
            "updated_at": "2019-12-10T19:04:12Z",
            "permissions": app_permissions(),
            "events": [],
        })
    }

    pub(crate) fn installation_json(&self, id: u64) -> Value {
        let Some(i) = self.installations.get(&id) else {
            return Value::Null;
        };
        let target = self.account_or_stub(&i.account);
        json!({
            "id": i.id,
            "client_id": self.settings.app.client_id,
            "account": self.user_json(&i.account),
            "repository_selection": if i.repos.is_some() { "selected" } else { "all" },
            "access_tokens_url": format!("{}/app/installations/{}/access_tokens", self.api(), i.id),
            "repositories_url": format!("{}/installation/repositories", self.api()),
            "html_url": format!("{}/organizations/{}/settings/installations/{}", self.html(), i.account, i.id),
            "app_id": self.settings.app.id,
            "app_slug": self.settings.app.slug,
            "target_id": target.id,
            "target_type": target.kind.as_str(),
            "permissions": app_permissions(),
            "events": ["check_run", "issue_comment", "pull_request", "pull_request_review", "repository_dispatch", "workflow_job", "workflow_run"],
            "created_at": ts(i.created_at),
            "updated_at": ts(i.created_at),
            "single_file_name": null,
            "has_multiple_single_files": false,
            "single_file_paths": [],
            "suspended_at": null,
            "suspended_by": null,
        })
    }
}

fn app_permissions() -> Value {
    json!({
        "actions": "write", "checks": "write", "contents": "read", "issues": "write",
        "members": "read", "metadata": "read", "pull_requests": "write", "statuses": "write",
    })
}

impl World {
    /// One attempt of the App's delivery log (`hook-delivery-item`).
    pub(crate) fn hook_delivery_json(&self, a: &crate::deliveries::HookAttempt) -> Value {
        let d = self.outbox.all.get(a.delivery);
        let field = |k: &str| {
            d.and_then(|d| d.payload.get(k))
                .and_then(|v| v.get("id"))
                .cloned()
                .unwrap_or(Value::Null)
        };
        let status = match a.status_code {
            0 => "timed out".to_string(),
            200..=299 => "OK".to_string(),
            code => format!("Invalid HTTP Response: {code}"),
        };
        json!({
            "id": a.id,
            "guid": d.map(|d| d.id.clone()).unwrap_or_default(),
            "delivered_at": ts(a.delivered_at),
            "redelivery": a.redelivery,
            "duration": a.duration,
            "status": status,
            "status_code": a.status_code,
            "event": d.map(|d| d.event.clone()).unwrap_or_default(),
            "action": d.and_then(|d| d.action.clone()),
            "installation_id": field("installation"),
            "repository_id": field("repository"),
            "throttled_at": null,
        })
    }
}
