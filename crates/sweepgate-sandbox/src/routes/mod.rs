//! The HTTP surface: one axum router with a gate in front of every route
//! that records the request, injects faults, and authenticates like GitHub
//! (JWT for `/app…`, installation tokens elsewhere), then the handlers,
//! grouped by area in the sibling files.
mod actions;
mod apps;
mod checks;
mod issues;
mod pulls;
mod repos;

use super::faults::FaultKind;
use super::state::{SandboxError, World};
use super::{RecordedRequest, Shared};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub(crate) type Sh = Arc<Shared>;
pub(crate) type ApiResult = Result<Response, SandboxError>;

const DOCS: &str = "https://docs.github.com/rest";

impl IntoResponse for SandboxError {
    fn into_response(self) -> Response {
        let mut body = json!({
            "message": self.message,
            "documentation_url": DOCS,
            "status": self.status.to_string(),
        });
        if let (Some(errors), Some(obj)) = (self.errors, body.as_object_mut()) {
            obj.insert("errors".into(), errors);
        }
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(body)).into_response()
    }
}

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Caller {
    /// A valid app JWT.
    App,
    /// An installation access token.
    Installation(u64),
    /// A user token registered with `Sandbox::user_token`.
    User(String),
}

impl Caller {
    /// The login that authored what this caller creates.
    pub(crate) fn login(&self, w: &World) -> String {
        match self {
            Caller::User(l) => l.clone(),
            _ => w.settings.app.bot_login(),
        }
    }
}

/// Everything a handler needs from the request head.
pub(crate) struct Req {
    pub caller: Caller,
    pub params: HashMap<String, String>,
    pub query: HashMap<String, String>,
    pub headers: HeaderMap,
    pub path: String,
}

impl Req {
    pub(crate) fn param(&self, name: &str) -> &str {
        self.params
            .get(name)
            .map(String::as_str)
            .unwrap_or_default()
    }
    /// A numeric path parameter; anything else is a 404, as on GitHub.
    pub(crate) fn num(&self, name: &str) -> Result<u64, SandboxError> {
        self.param(name)
            .parse()
            .map_err(|_| SandboxError::not_found())
    }
    pub(crate) fn repo_key(&self) -> String {
        World::repo_key(self.param("owner"), self.param("repo"))
    }
    pub(crate) fn q(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str)
    }
    pub(crate) fn accept(&self) -> &str {
        self.headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Req {
    type Rejection = SandboxError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let params = Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Path(p)| p)
            .unwrap_or_default();
        let query = parts
            .uri
            .query()
            .map(|q| {
                url::form_urlencoded::parse(q.as_bytes())
                    .into_owned()
                    .collect()
            })
            .unwrap_or_default();
        let caller = parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| SandboxError::new(401, "Requires authentication"))?;
        Ok(Req {
            caller,
            params,
            query,
            headers: parts.headers.clone(),
            path: parts.uri.path().to_string(),
        })
    }
}

/// Parses a JSON request body; GitHub answers 400 to anything else.
pub(crate) fn parse_body(body: &Bytes) -> Result<Value, SandboxError> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body).map_err(|_| SandboxError::new(400, "Problems parsing JSON"))
}

pub(crate) fn json_response(status: StatusCode, v: Value) -> Response {
    (status, axum::Json(v)).into_response()
}

pub(crate) fn ok(v: Value) -> ApiResult {
    Ok(json_response(StatusCode::OK, v))
}

pub(crate) fn created(v: Value) -> ApiResult {
    Ok(json_response(StatusCode::CREATED, v))
}

pub(crate) fn no_content() -> ApiResult {
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `per_page` (default `default`, at most `max`) and 1-based `page`.
pub(crate) fn page_params(req: &Req, default: usize, max: usize) -> (usize, usize) {
    let per_page = req
        .q("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .map(|n| n.min(max))
        .unwrap_or(default);
    let page = req
        .q("page")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    (per_page, page)
}

/// One page of `items` and GitHub's `Link` header for the others.
pub(crate) fn paginate(
    api_base: &str,
    req: &Req,
    items: Vec<Value>,
    default: usize,
    max: usize,
) -> (Vec<Value>, Option<String>) {
    let (per_page, page) = page_params(req, default, max);
    let total = items.len();
    let last = total.div_ceil(per_page).max(1);
    let start = (page - 1).saturating_mul(per_page);
    let slice: Vec<Value> = items.into_iter().skip(start).take(per_page).collect();
    if last == 1 && page == 1 {
        return (slice, None);
    }
    let others: BTreeMap<&String, &String> = req
        .query
        .iter()
        .filter(|(k, _)| k.as_str() != "page" && k.as_str() != "per_page")
        .collect();
    let url = |p: usize| {
        let mut ser = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in &others {
            ser.append_pair(k, v);
        }
        ser.append_pair("per_page", &per_page.to_string());
        ser.append_pair("page", &p.to_string());
        format!("<{api_base}{}?{}>", req.path, ser.finish())
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(format!("{}; rel=\"prev\"", url((page - 1).min(last))));
    }
    if page < last {
        links.push(format!("{}; rel=\"next\"", url(page + 1)));
        links.push(format!("{}; rel=\"last\"", url(last)));
    }
    if page > 1 {
        links.push(format!("{}; rel=\"first\"", url(1)));
    }
    (slice, Some(links.join(", ")))
}

pub(crate) fn paged(items: Vec<Value>, link: Option<String>) -> ApiResult {
    let mut resp = json_response(StatusCode::OK, Value::Array(items));
    if let Some(l) = link.and_then(|l| HeaderValue::from_str(&l).ok()) {
        resp.headers_mut().insert(header::LINK, l);
    }
    Ok(resp)
}

/// `{total_count, <key>: [...]}` lists (check runs, runs, jobs, artifacts).
pub(crate) fn paged_object(
    key: &str,
    total: usize,
    items: Vec<Value>,
    link: Option<String>,
) -> ApiResult {
    let mut resp = json_response(StatusCode::OK, json!({ "total_count": total, key: items }));
    if let Some(l) = link.and_then(|l| HeaderValue::from_str(&l).ok()) {
        resp.headers_mut().insert(header::LINK, l);
    }
    Ok(resp)
}

pub(crate) fn router(shared: Sh) -> Router {
    let r = Router::new();
    let r = apps::routes(r);
    let r = repos::routes(r);
    let r = pulls::routes(r);
    let r = issues::routes(r);
    let r = checks::routes(r);
    let r = actions::routes(r);
    r.fallback(|| async { SandboxError::not_found() })
        .method_not_allowed_fallback(|| async { SandboxError::not_found() })
        .layer(middleware::from_fn_with_state(shared.clone(), gate))
        .with_state(shared)
}

fn is_app_endpoint(path: &str) -> bool {
    path == "/app"
        || path.starts_with("/app/")
        || super::faults::glob_match("/repos/*/*/installation", path)
        || super::faults::glob_match("/orgs/*/installation", path)
        || super::faults::glob_match("/users/*/installation", path)
}

enum AuthFailure {
    Status(u16, String),
}

fn authenticate(
    shared: &Shared,
    headers: &HeaderMap,
    method: &Method,
    path: &str,
) -> Result<Caller, AuthFailure> {
    let raw = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    let Some(raw) = raw else {
        return Err(AuthFailure::Status(401, "Requires authentication".into()));
    };
    let credential = raw
        .strip_prefix("Bearer ")
        .or_else(|| raw.strip_prefix("bearer "))
        .or_else(|| raw.strip_prefix("token "))
        .map(str::trim)
        .ok_or_else(|| AuthFailure::Status(401, "Bad credentials".into()))?;
    let w = shared.lock_world();
    let app_endpoint = is_app_endpoint(path);
    let caller = if let Some(t) = w.tokens.get(credential) {
        if t.expires_at <= std::time::SystemTime::now() {
            return Err(AuthFailure::Status(401, "Bad credentials".into()));
        }
        Caller::Installation(t.installation_id)
    } else if let Some(login) = w.user_tokens.get(credential) {
        Caller::User(login.clone())
    } else if credential.matches('.').count() == 2 {
        apps::verify_jwt(credential, w.settings.app.id).map_err(|m| AuthFailure::Status(401, m))?;
        Caller::App
    } else {
        return Err(AuthFailure::Status(401, "Bad credentials".into()));
    };
    match (&caller, app_endpoint) {
        (Caller::App, false) => {
            return Err(AuthFailure::Status(
                403,
                "Resource not accessible by integration".into(),
            ));
        }
        (Caller::Installation(_) | Caller::User(_), true) => {
            return Err(AuthFailure::Status(
                401,
                "A JSON web token could not be decoded".into(),
            ));
        }
        _ => {}
    }
    // An installation may read public repositories, but writes only where it
    // is installed; private repositories outside it do not exist for it.
    if let Caller::Installation(id) = &caller
        && let Some(rest) = path.strip_prefix("/repos/")
    {
        let mut segs = rest.split('/');
        if let (Some(o), Some(r)) = (segs.next(), segs.next()) {
            let key = World::repo_key(o, r);
            if let Some(repo) = w.repos.get(&key) {
                let covered = w.installation_for_repo(&key).is_some_and(|i| i.id == *id);
                if !covered && repo.private {
                    return Err(AuthFailure::Status(404, "Not Found".into()));
                }
                if !covered && method != Method::GET && method != Method::HEAD {
                    return Err(AuthFailure::Status(
                        403,
                        "Resource not accessible by integration".into(),
                    ));
                }
            }
        }
    }
    Ok(caller)
}

fn fault_response(kind: &FaultKind) -> Response {
    let now = chrono::Utc::now().timestamp();
    let (status, message, doc, mut extra): (u16, String, &str, Vec<(&str, String)>) = match kind {
        FaultKind::Status(code) => (*code, match code {
            502 => "Server Error".to_string(),
            503 => "Service Unavailable".to_string(),
            _ => "Server Error".to_string(),
        }, DOCS, vec![]),
        FaultKind::SecondaryRateLimit { retry_after } => (
            403,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID SANDBOX:0000:0000000:0000000:00000000.".into(),
            "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
            vec![("retry-after", retry_after.to_string())],
        ),
        FaultKind::PrimaryRateLimit { reset_in } => (
            403,
            "API rate limit exceeded for installation. If you reach out to GitHub Support for help, please include the request ID SANDBOX:0000:0000000:0000000:00000000.".into(),
            "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits",
            vec![
                ("x-ratelimit-limit", "5000".into()),
                ("x-ratelimit-remaining", "0".into()),
                ("x-ratelimit-used", "5000".into()),
                ("x-ratelimit-reset", (now + *reset_in as i64).to_string()),
                ("x-ratelimit-resource", "core".into()),
            ],
        ),
        FaultKind::TooManyRequests { retry_after } => (
            429,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.".into(),
            "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
            vec![("retry-after", retry_after.to_string())],
        ),
        FaultKind::Delay(_) => (200, String::new(), DOCS, vec![]),
    };
    extra.push(("x-github-request-id", "SANDBOX:FAULT".into()));
    let body =
        json!({ "message": message, "documentation_url": doc, "status": status.to_string() });
    let mut resp = json_response(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        body,
    );
    for (k, v) in extra {
        if let Ok(v) = HeaderValue::from_str(&v) {
            resp.headers_mut().insert(k, v);
        }
    }
    resp
}

/// Records, injects faults, authenticates, then runs the route.
async fn gate(State(shared): State<Sh>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let method = parts.method.clone();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().map(str::to_string);
    let bytes = match axum::body::to_bytes(body, 64 * 1024 * 1024).await {
        Ok(b) => b,
        Err(_) => return SandboxError::new(413, "Request body too large").into_response(),
    };
    let body_json = if bytes.is_empty() {
        None
    } else {
        Some(
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned())),
        )
    };
    let auth_kind = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            if v.matches('.').count() == 2 {
                "jwt"
            } else {
                "token"
            }
        })
        .unwrap_or("none");
    let seq = shared.next_seq();
    let record = |status: u16, fault: Option<String>, caller: Option<Caller>| RecordedRequest {
        response: None,
        seq,
        method: method.to_string(),
        path: path.clone(),
        query: query.clone(),
        body: body_json.clone(),
        status,
        auth: auth_kind.to_string(),
        caller: caller.map(|c| match c {
            Caller::App => "app".to_string(),
            Caller::Installation(id) => format!("installation:{id}"),
            Caller::User(l) => format!("user:{l}"),
        }),
        fault,
    };

    // The sandbox's own pages (signed blob URLs) need no credentials.
    if path.starts_with("/_sandbox/") {
        let resp = next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
        shared.record(record(resp.status().as_u16(), None, None));
        return resp;
    }

    let fault = shared.lock_faults().take(method.as_str(), &path);
    let mut late_fault = None;
    if let Some(f) = fault {
        match &f.kind {
            FaultKind::Delay(d) => tokio::time::sleep(*d).await,
            _ if f.after_effect => late_fault = Some(f.kind.clone()),
            kind => {
                let resp = fault_response(kind);
                shared.record(record(
                    resp.status().as_u16(),
                    Some(format!("{kind:?}")),
                    None,
                ));
                return resp;
            }
        }
    }

    let caller = match authenticate(&shared, &parts.headers, &method, &path) {
        Ok(c) => c,
        Err(AuthFailure::Status(status, message)) => {
            let resp = SandboxError::new(status, message).into_response();
            shared.record(record(status, None, None));
            return resp;
        }
    };
    parts.extensions.insert(caller.clone());
    let mut resp = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if let Some(kind) = late_fault {
        resp = fault_response(&kind);
        shared.record(record(
            resp.status().as_u16(),
            Some(format!("{kind:?} after effect")),
            Some(caller),
        ));
        return resp;
    }
    // The answer is kept too, to check it against GitHub's description.
    let (head, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let mut entry = record(head.status.as_u16(), None, Some(caller));
    entry.response = serde_json::from_slice(&bytes).ok();
    shared.record(entry);
    let mut resp = Response::from_parts(head, Body::from(bytes));
    let h = resp.headers_mut();
    let used = seq.min(4999);
    for (k, v) in [
        ("x-ratelimit-limit", "5000".to_string()),
        ("x-ratelimit-remaining", (5000 - used).to_string()),
        ("x-ratelimit-used", used.to_string()),
        (
            "x-ratelimit-reset",
            (chrono::Utc::now().timestamp() + 3600).to_string(),
        ),
        ("x-ratelimit-resource", "core".to_string()),
        ("x-github-api-version-selected", "2022-11-28".to_string()),
        ("x-github-request-id", format!("SANDBOX:{seq:08X}")),
    ] {
        if let Ok(v) = HeaderValue::from_str(&v) {
            h.insert(k, v);
        }
    }
    resp
}
