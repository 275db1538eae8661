//! App authentication (JWT, installation tokens), installations, rate
//! limit, users, team memberships and collaborator permissions.
use super::{ApiResult, Caller, Req, Sh, created, ok, paged, paginate, parse_body};
use crate::state::{IssuedToken, SandboxError, World, ts};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::{get, post};
use base64::Engine;
use rand::Rng;
use serde_json::{Value, json};

pub(crate) fn routes(r: Router<Sh>) -> Router<Sh> {
    r.route("/app", get(get_app))
        .route("/app/installations", get(list_installations))
        .route(
            "/app/installations/{installation_id}",
            get(get_installation),
        )
        .route(
            "/app/installations/{installation_id}/access_tokens",
            post(create_token),
        )
        .route("/app/hook/deliveries", get(list_hook_deliveries))
        .route(
            "/app/hook/deliveries/{delivery_id}/attempts",
            post(redeliver),
        )
        .route("/repos/{owner}/{repo}/installation", get(repo_installation))
        .route("/orgs/{org}/installation", get(org_installation))
        .route("/installation/repositories", get(installation_repos))
        .route("/rate_limit", get(rate_limit))
        .route("/users/{username}", get(get_user))
        .route("/user", get(get_authenticated_user))
        .route(
            "/orgs/{org}/teams/{team_slug}/memberships/{username}",
            get(team_membership),
        )
        .route(
            "/repos/{owner}/{repo}/collaborators/{username}/permission",
            get(permission),
        )
}

/// Checks what GitHub checks of an app JWT without the public key: three
/// base64url parts, `alg` RS256, `iss` equal to the app id, `iat`/`exp`
/// numeric, not expired, and at most ten minutes long.
pub(crate) fn verify_jwt(token: &str, app_id: u64) -> Result<(), String> {
    let undecodable = || "A JSON web token could not be decoded".to_string();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(undecodable());
    };
    let header: Value = b64
        .decode(h.trim_end_matches('='))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(undecodable)?;
    let claims: Value = b64
        .decode(p.trim_end_matches('='))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(undecodable)?;
    let sig = b64
        .decode(s.trim_end_matches('='))
        .map_err(|_| undecodable())?;
    if header.get("alg").and_then(Value::as_str) != Some("RS256") {
        return Err(undecodable());
    }
    // RSA signatures are as long as the modulus: at least 1024 bits.
    if sig.len() < 128 {
        return Err(undecodable());
    }
    let iss = match claims.get("iss") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    if iss != Some(app_id) {
        return Err("'Issuer' claim ('iss') must be an Integer".into());
    }
    let now = chrono::Utc::now().timestamp();
    let iat = claims
        .get("iat")
        .and_then(Value::as_i64)
        .ok_or("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued")?;
    let exp = claims
        .get("exp")
        .and_then(Value::as_i64)
        .ok_or("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires")?;
    if iat > now + 60 {
        return Err(
            "'Issued at' claim ('iat') must be an Integer representing a time in the past".into(),
        );
    }
    if exp <= now {
        return Err("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires".into());
    }
    if exp - iat > 600 + 60 || exp > now + 600 + 60 {
        return Err("'Expiration time' claim ('exp') is too far in the future".into());
    }
    Ok(())
}

async fn get_app(State(s): State<Sh>, _r: Req) -> ApiResult {
    let w = s.lock_world();
    ok(w.app_json())
}

async fn list_installations(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let items: Vec<Value> = w
        .installations
        .keys()
        .map(|id| w.installation_json(*id))
        .collect();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    paged(page, link)
}

async fn get_installation(State(s): State<Sh>, r: Req) -> ApiResult {
    let id = r.num("installation_id")?;
    let w = s.lock_world();
    if !w.installations.contains_key(&id) {
        return Err(SandboxError::not_found());
    }
    ok(w.installation_json(id))
}

/// The App's delivery log, newest first, paged by `cursor` (the last id of
/// the previous page) as GitHub pages it.
async fn list_hook_deliveries(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let per_page = r
        .q("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .map_or(30, |n| n.min(100));
    let below = r
        .q("cursor")
        .and_then(|c| c.strip_prefix("v1_"))
        .and_then(|c| c.parse::<u64>().ok())
        .unwrap_or(u64::MAX);
    let newer_first: Vec<&crate::deliveries::HookAttempt> = w
        .outbox
        .attempts
        .iter()
        .rev()
        .filter(|a| a.id < below)
        .collect();
    let page: Vec<Value> = newer_first
        .iter()
        .take(per_page)
        .map(|a| w.hook_delivery_json(a))
        .collect();
    let mut resp = super::json_response(axum::http::StatusCode::OK, Value::Array(page));
    if newer_first.len() > per_page
        && let Some(last) = newer_first.get(per_page - 1)
    {
        let link = format!(
            "<{}/app/hook/deliveries?per_page={per_page}&cursor=v1_{}>; rel=\"next\"",
            w.settings.api_base, last.id
        );
        if let Ok(v) = axum::http::HeaderValue::from_str(&link) {
            resp.headers_mut().insert(axum::http::header::LINK, v);
        }
    }
    Ok(resp)
}

/// Queues a delivery of the log again; GitHub answers 202.
async fn redeliver(State(s): State<Sh>, r: Req) -> ApiResult {
    let id = r.num("delivery_id")?;
    let mut w = s.lock_world();
    if !w.outbox.redeliver(id) {
        return Err(SandboxError::not_found());
    }
    w.outbox.next_attempt_at = None;
    Ok(super::json_response(
        axum::http::StatusCode::ACCEPTED,
        json!({}),
    ))
}

fn new_token(rng: &mut impl Rng) -> String {
    // GitHub's newer tokens are longer and vary in length; clients must
    // not assume 40 characters.
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let len = rng.random_range(40..=300);
    let body: String = (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("ghs_{body}")
}

async fn create_token(State(s): State<Sh>, r: Req, body: Bytes) -> ApiResult {
    let id = r.num("installation_id")?;
    let body = parse_body(&body)?;
    let mut w = s.lock_world();
    let inst = w
        .installations
        .get(&id)
        .cloned()
        .ok_or_else(SandboxError::not_found)?;
    let token = new_token(&mut w.rng);
    let lifetime = w.settings.token_lifetime;
    let expires = std::time::SystemTime::now() + lifetime;
    w.tokens.insert(
        token.clone(),
        IssuedToken {
            installation_id: id,
            expires_at: expires,
        },
    );
    let expires_at = chrono::DateTime::<chrono::Utc>::from(expires);
    let repos: Vec<Value> = w
        .repos
        .iter()
        .filter(|(k, repo)| {
            repo.owner.eq_ignore_ascii_case(&inst.account)
                && inst.repos.as_ref().is_none_or(|set| set.contains(*k))
        })
        .map(|(k, _)| k.clone())
        .collect::<Vec<_>>()
        .iter()
        .map(|k| w.repo_json(k))
        .collect();
    let mut resp = json!({
        "token": token,
        "expires_at": ts(expires_at),
        "permissions": body.get("permissions").cloned().unwrap_or_else(|| json!({
            "actions": "write", "checks": "write", "contents": "read", "issues": "write",
            "members": "read", "metadata": "read", "pull_requests": "write", "statuses": "write",
        })),
        "repository_selection": if inst.repos.is_some() { "selected" } else { "all" },
    });
    if inst.repos.is_some()
        && let Some(obj) = resp.as_object_mut()
    {
        obj.insert("repositories".into(), Value::Array(repos));
    }
    created(resp)
}

async fn repo_installation(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    w.repo(&key)?;
    let inst = w
        .installation_for_repo(&key)
        .ok_or_else(SandboxError::not_found)?;
    ok(w.installation_json(inst.id))
}

async fn org_installation(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let org = r.param("org");
    let inst = w
        .installations
        .values()
        .find(|i| i.account.eq_ignore_ascii_case(org))
        .ok_or_else(SandboxError::not_found)?;
    ok(w.installation_json(inst.id))
}

async fn installation_repos(State(s): State<Sh>, r: Req) -> ApiResult {
    let Caller::Installation(id) = r.caller else {
        return Err(SandboxError::new(
            403,
            "Resource not accessible by integration",
        ));
    };
    let w = s.lock_world();
    let keys: Vec<String> = w
        .repos
        .keys()
        .filter(|k| w.installation_for_repo(k).is_some_and(|i| i.id == id))
        .cloned()
        .collect();
    let items: Vec<Value> = keys.iter().map(|k| w.repo_json(k)).collect();
    let total = items.len();
    let (page, link) = paginate(&w.settings.api_base, &r, items, 30, 100);
    super::paged_object("repositories", total, page, link)
}

async fn rate_limit(State(s): State<Sh>, _r: Req) -> ApiResult {
    let used = s.request_count().min(5000);
    let reset = chrono::Utc::now().timestamp() + 3600;
    let core = json!({ "limit": 5000, "used": used, "remaining": 5000 - used, "reset": reset });
    ok(json!({
        "resources": {
            "core": core,
            "search": { "limit": 30, "used": 0, "remaining": 30, "reset": reset },
            "graphql": { "limit": 5000, "used": 0, "remaining": 5000, "reset": reset },
        },
        "rate": core,
    }))
}

async fn get_user(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let login = r.param("username");
    let account = w.find_account(login).ok_or_else(SandboxError::not_found)?;
    ok(w.user_json(&account.login))
}

/// `GET /user`: the user a token belongs to (GitHub answers 403 to an
/// installation token and 401 to an app JWT).
async fn get_authenticated_user(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    match &r.caller {
        Caller::User(login) => ok(w.user_json(login)),
        _ => Err(SandboxError::forbidden_integration()),
    }
}

async fn team_membership(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let org = r.param("org").to_ascii_lowercase();
    let slug = r.param("team_slug").to_ascii_lowercase();
    let user = r.param("username");
    let team = w
        .teams
        .get(&(org, slug))
        .ok_or_else(SandboxError::not_found)?;
    let role = team
        .members
        .get(&user.to_ascii_lowercase())
        .ok_or_else(SandboxError::not_found)?;
    ok(json!({
        "url": format!("{}/organizations/{}/team/{}/memberships/{user}", w.settings.api_base, w.account_or_stub(&team.org).id, team.id),
        "role": role,
        "state": "active",
    }))
}

async fn permission(State(s): State<Sh>, r: Req) -> ApiResult {
    let w = s.lock_world();
    let key = r.repo_key();
    let repo = w.repo(&key)?;
    let user = r.param("username");
    let account = w.find_account(user).ok_or_else(SandboxError::not_found)?;
    let (permission, role) = match repo.permissions.get(&user.to_ascii_lowercase()) {
        Some(p) => (p.permission.clone(), p.role_name.clone()),
        None if repo.owner.eq_ignore_ascii_case(user) => ("admin".into(), "admin".into()),
        // Anyone can read a public repository.
        None if !repo.private => ("read".into(), "read".into()),
        None => ("none".into(), "none".into()),
    };
    let mut user_json = w.user_json(&account.login);
    if let Some(obj) = user_json.as_object_mut() {
        let p = |level: &[&str]| level.contains(&role.as_str());
        obj.insert(
            "permissions".into(),
            json!({
                "admin": p(&["admin"]),
                "maintain": p(&["admin", "maintain"]),
                "push": p(&["admin", "maintain", "write"]),
                "triage": p(&["admin", "maintain", "write", "triage"]),
                "pull": p(&["admin", "maintain", "write", "triage", "read"]),
            }),
        );
        obj.insert("role_name".into(), json!(role));
    }
    let _ = World::repo_key;
    ok(json!({ "permission": permission, "role_name": role, "user": user_json }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: Value, alg: &str) -> String {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.{}",
            b64.encode(json!({ "alg": alg, "typ": "JWT" }).to_string()),
            b64.encode(claims.to_string()),
            b64.encode([7u8; 256])
        )
    }

    #[test]
    fn jwt_rules() {
        let now = chrono::Utc::now().timestamp();
        assert!(
            verify_jwt(
                &jwt(
                    json!({ "iss": 42, "iat": now - 60, "exp": now + 540 }),
                    "RS256"
                ),
                42
            )
            .is_ok()
        );
        assert!(
            verify_jwt(
                &jwt(
                    json!({ "iss": "42", "iat": now - 60, "exp": now + 540 }),
                    "RS256"
                ),
                42
            )
            .is_ok()
        );
        assert!(
            verify_jwt(
                &jwt(
                    json!({ "iss": 43, "iat": now - 60, "exp": now + 540 }),
                    "RS256"
                ),
                42
            )
            .is_err()
        );
        assert!(
            verify_jwt(
                &jwt(
                    json!({ "iss": 42, "iat": now - 60, "exp": now + 540 }),
                    "HS256"
                ),
                42
            )
            .is_err()
        );
        assert!(
            verify_jwt(
                &jwt(
                    json!({ "iss": 42, "iat": now - 700, "exp": now - 10 }),
                    "RS256"
                ),
                42
            )
            .is_err()
        );
        assert!(
            verify_jwt(
                &jwt(json!({ "iss": 42, "iat": now, "exp": now + 3600 }), "RS256"),
                42
            )
            .is_err()
        );
        assert!(verify_jwt("not.a.jwt", 42).is_err());
    }

    #[test]
    fn tokens_vary_in_length() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let lens: std::collections::BTreeSet<usize> =
            (0..10).map(|_| new_token(&mut rng).len()).collect();
        assert!(lens.len() > 1);
        assert!(new_token(&mut rng).starts_with("ghs_"));
    }
}
