//! The app (installations, tokens, JWTs) and people: collaborator
//! permissions and team memberships.
use crate::state::{self, AccountKind};
use crate::{Sandbox, SandboxError, key, sha1_hex};
use std::collections::BTreeSet;

impl Sandbox {
    // ---- the app ----

    /// What `GET /app` reports the App was granted: these permissions
    /// (`name` → `read`/`write`) and events instead of the defaults.
    pub fn set_app_grants(&self, permissions: &[(&str, &str)], events: &[&str]) {
        let perms: serde_json::Map<String, serde_json::Value> = permissions
            .iter()
            .map(|(k, v)| ((*k).to_owned(), serde_json::Value::from(*v)))
            .collect();
        self.world().settings.app.grants = Some((
            serde_json::Value::Object(perms),
            serde_json::Value::from(events.to_vec()),
        ));
    }

    /// Installs the app on every repository of `account`; returns the id.
    pub fn install_app(&self, account: &str) -> u64 {
        self.install_app_on(account, None)
    }

    /// Installs on selected repositories (`None`: all) of `account`.
    pub(crate) fn install_app_on(&self, account: &str, repos: Option<&[&str]>) -> u64 {
        let mut w = self.world();
        if let Some(existing) = w
            .installations
            .values()
            .find(|i| i.account.eq_ignore_ascii_case(account))
        {
            return existing.id;
        }
        let id = 60_000_000 + w.installations.len() as u64 + 1;
        let created_at = w.now();
        w.account(account);
        let repos = repos.map(|names| {
            names
                .iter()
                .map(|n| key(account, n))
                .collect::<BTreeSet<_>>()
        });
        w.installations.insert(
            id,
            state::Installation {
                id,
                account: account.to_string(),
                repos,
                created_at,
            },
        );
        id
    }

    /// An installation token without the JWT dance (for tests that call
    /// the sandbox directly).
    pub fn issue_token(&self, installation_id: u64) -> Result<String, SandboxError> {
        let mut w = self.world();
        if !w.installations.contains_key(&installation_id) {
            return Err(SandboxError::not_found());
        }
        let token = format!(
            "ghs_sandbox{}",
            sha1_hex(&rand::Rng::random::<[u8; 16]>(&mut w.rng))
        );
        let expires_at = std::time::SystemTime::now() + w.settings.token_lifetime;
        w.tokens.insert(
            token.clone(),
            state::IssuedToken {
                installation_id,
                expires_at,
            },
        );
        Ok(token)
    }

    /// A well-formed RS256 JWT for this app with a dummy signature: the
    /// sandbox checks shape and claims, not the signature, so tests can
    /// exercise the token exchange without a private key.
    pub fn forge_app_jwt(&self) -> String {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let now = chrono::Utc::now().timestamp();
        let header = serde_json::json!({ "alg": "RS256", "typ": "JWT" });
        let claims = serde_json::json!({ "iat": now - 60, "exp": now + 540, "iss": self.app_id().to_string() });
        format!(
            "{}.{}.{}",
            b64.encode(header.to_string()),
            b64.encode(claims.to_string()),
            b64.encode([0x5au8; 256])
        )
    }

    /// Every installation token issued so far (to look for them in logs).
    pub fn issued_tokens(&self) -> Vec<String> {
        self.world().tokens.keys().cloned().collect()
    }

    /// Expires every issued installation token (to test renewal).
    pub fn expire_tokens(&self) {
        for t in self.world().tokens.values_mut() {
            t.expires_at = std::time::SystemTime::UNIX_EPOCH;
        }
    }

    /// A personal token acting as `login` (the demo's "act as a user").
    pub fn user_token(&self, login: &str) -> String {
        let mut w = self.world();
        w.account(login);
        let token = format!("ghp_{}", &sha1_hex(login.as_bytes())[..36]);
        w.user_tokens.insert(token.clone(), login.to_string());
        token
    }

    // ---- people and permissions ----

    /// Sets the collaborator permission (`admin|write|read|none`) and role
    /// (`admin|maintain|write|triage|read`).
    pub fn set_permission(
        &self,
        owner: &str,
        repo: &str,
        user: &str,
        permission: &str,
        role_name: &str,
    ) -> Result<(), SandboxError> {
        let mut w = self.world();
        w.account(user);
        w.repo_mut(&key(owner, repo))?.permissions.insert(
            user.to_ascii_lowercase(),
            state::Permission {
                permission: permission.into(),
                role_name: role_name.into(),
            },
        );
        Ok(())
    }

    /// Adds `user` to `org/team` with role `member` or `maintainer`.
    pub fn add_team_member(&self, org: &str, team: &str, user: &str, role: &str) {
        let mut w = self.world();
        w.account_with_kind(org, AccountKind::Organization);
        w.account(user);
        let k = (org.to_ascii_lowercase(), team.to_ascii_lowercase());
        if !w.teams.contains_key(&k) {
            let id = w.ids.next("team");
            w.teams.insert(
                k.clone(),
                state::Team {
                    id,
                    org: org.to_string(),
                    members: Default::default(),
                },
            );
        }
        if let Some(t) = w.teams.get_mut(&k) {
            t.members
                .insert(user.to_ascii_lowercase(), role.to_string());
        }
    }

    pub fn remove_team_member(&self, org: &str, team: &str, user: &str) {
        let mut w = self.world();
        if let Some(t) = w
            .teams
            .get_mut(&(org.to_ascii_lowercase(), team.to_ascii_lowercase()))
        {
            t.members.remove(&user.to_ascii_lowercase());
        }
    }
}
