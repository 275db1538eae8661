//! Who may see the dashboard (`docs/contracts.md` §4): a login with the
//! admin token (a signed session cookie, or `Authorization: Bearer` for
//! scripts), unless the server was started with `--dashboard-public`.
//! Two kinds of URL need no login: the sweep matrix (its own token) and a
//! Pareto plot linked from a verdict, whose URL is signed and bound to the
//! repository, PR and SHA (`links`).
use super::{DashState, failure, page};
use crate::config::server::Secret;
use crate::store::now_ms;
use askama::Template;
use axum::body::Bytes;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::{Digest, Sha256};

const COOKIE: &str = "sweepgate_session";
/// How long a login lasts.
const SESSION_MS: i64 = 12 * 3600 * 1000;

/// Compares digests, so the comparison's time says nothing about the token.
pub(crate) fn token_matches(expected: &Secret, given: &str) -> bool {
    Sha256::digest(expected.expose().as_bytes()) == Sha256::digest(given.as_bytes())
}

fn mac(key: &[u8], message: &str) -> Hmac<Sha256> {
    let mut m = Hmac::<Sha256>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    m.update(message.as_bytes());
    m
}

/// `<expiry ms>.<hex HMAC of it under the admin token>`: changing the token
/// ends every session.
fn session_value(token: &Secret, expires: i64) -> String {
    let sig = mac(token.expose().as_bytes(), &format!("session:{expires}"));
    format!("{expires}.{}", hex::encode(sig.finalize().into_bytes()))
}

fn session_valid(token: &Secret, value: &str, now: i64) -> bool {
    let Some((expires, sig)) = value.split_once('.') else {
        return false;
    };
    let (Ok(expires), Ok(sig)) = (expires.parse::<i64>(), hex::decode(sig)) else {
        return false;
    };
    expires > now
        && mac(token.expose().as_bytes(), &format!("session:{expires}"))
            .verify_slice(&sig)
            .is_ok()
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

/// Whether the request may read the dashboard's pages.
pub(crate) fn may_read(st: &DashState, headers: &HeaderMap) -> bool {
    if st.public {
        return true;
    }
    let Some(token) = &st.admin_token else {
        return false;
    };
    bearer(headers).is_some_and(|b| token_matches(token, b))
        || cookie(headers, COOKIE).is_some_and(|c| session_valid(token, c, now_ms()))
}

/// What a request that may not read gets: the login page, or a 403 when
/// no login is possible.
pub(crate) fn refuse(st: &DashState, path_and_query: &str) -> Response {
    if st.admin_token.is_none() {
        return failure(
            StatusCode::FORBIDDEN,
            "the dashboard needs a login and this server has no admin token: start it with --admin-token, or with --dashboard-public for public read-only pages",
        );
    }
    let next = url::form_urlencoded::byte_serialize(path_and_query.as_bytes()).collect::<String>();
    Redirect::to(&format!("{}/login?next={next}", st.base)).into_response()
}

/// Middleware of the pages that need a login.
pub(crate) async fn require_login(
    State(st): State<DashState>,
    req: Request,
    next: Next,
) -> Response {
    if may_read(&st, req.headers()) {
        return next.run(req).await;
    }
    let wanted = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    // The path the browser asked for, under the public base.
    refuse(&st, &format!("{}{wanted}", st.base))
}

#[derive(Template)]
#[template(path = "dashboard/login.html")]
struct LoginPage {
    base: String,
    next: String,
    message: String,
}

#[derive(Deserialize, Default)]
pub(crate) struct LoginForm {
    token: Option<String>,
    next: Option<String>,
}

/// Only a path on this server: never another site.
fn safe_next(st: &DashState, next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.to_owned(),
        _ => format!("{}/", st.base),
    }
}

fn login(st: &DashState, form: LoginForm) -> Response {
    let next = safe_next(st, form.next.as_deref());
    let Some(expected) = &st.admin_token else {
        return refuse(st, &next);
    };
    let Some(given) = form.token.filter(|t| !t.is_empty()) else {
        return page(&LoginPage {
            base: st.base.clone(),
            next,
            message: String::new(),
        });
    };
    if !token_matches(expected, &given) {
        tracing::warn!("dashboard login with a wrong admin token");
        let mut resp = page(&LoginPage {
            base: st.base.clone(),
            next,
            message: "Wrong admin token.".into(),
        });
        *resp.status_mut() = StatusCode::FORBIDDEN;
        return resp;
    }
    let value = session_value(expected, now_ms() + SESSION_MS);
    let path = if st.base.is_empty() { "/" } else { &st.base };
    let cookie = format!(
        "{COOKIE}={value}; Path={path}; Max-Age={}; HttpOnly; SameSite=Lax{}",
        SESSION_MS / 1000,
        if st.secure { "; Secure" } else { "" }
    );
    let mut resp = Redirect::to(&next).into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
}

/// `GET /login[?token=…&next=…]`: the form, or (with the token, as the
/// demo prints it) the login itself.
pub(crate) async fn login_get(State(st): State<DashState>, Query(q): Query<LoginForm>) -> Response {
    login(&st, q)
}

/// `POST /login` with the form.
pub(crate) async fn login_post(State(st): State<DashState>, body: Bytes) -> Response {
    let mut form = LoginForm::default();
    for (k, v) in url::form_urlencoded::parse(&body) {
        match k.as_ref() {
            "token" => form.token = Some(v.into_owned()),
            "next" => form.next = Some(v.into_owned()),
            _ => {}
        }
    }
    login(&st, form)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_expire_and_are_bound_to_the_token() {
        let t = Secret::new("s3cret");
        let v = session_value(&t, 2_000);
        assert!(session_valid(&t, &v, 1_000));
        assert!(!session_valid(&t, &v, 2_000), "expired");
        assert!(!session_valid(&Secret::new("other"), &v, 1_000));
        assert!(!session_valid(&t, "3000.00", 1_000));
        assert!(!session_valid(&t, &v.replace("2000.", "9000."), 1_000));
        assert!(!session_valid(&t, "garbage", 1_000));
    }
}
