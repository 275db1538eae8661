//! The typed client over octocrab's raw requests, with the retry policy of
//! `retry.rs` around every call.
use super::GitHubError;
use super::retry::{RetryPolicy, Sleeper, TokioSleeper, Verdict, requested_wait};
use super::shadow::{self, WriteSink};
use crate::config::server::{InputLimits, Secret};
use bytes::Bytes;
use http::{HeaderMap, Method};
use http_body_util::BodyExt;
use octocrab::Octocrab;
use octocrab::service::middleware::retry::RetryConfig;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sweepgate_core::ids::InstallationId;

/// How sweepgate authenticates.
#[derive(Clone)]
pub enum Credentials {
    /// A GitHub App: JWTs signed with the private key, then per-installation
    /// tokens (of whatever length GitHub issues).
    App {
        app_id: u64,
        private_key_pem: Secret,
    },
    /// A personal token, for local use only.
    Token(Secret),
}

#[derive(Clone)]
pub struct GitHubConfig {
    pub api_url: String,
    pub credentials: Credentials,
    pub policy: RetryPolicy,
}

/// The entry point: hands out an [`Api`] per installation.
#[derive(Clone)]
pub struct GitHub {
    root: Arc<Octocrab>,
    origin: String,
    is_app: bool,
    /// Shared, not cloned: a cloned `Octocrab` copies its token cache, so
    /// every clone would fetch a token of its own.
    installs: Arc<Mutex<HashMap<u64, Arc<Octocrab>>>>,
    policy: RetryPolicy,
    sleeper: Arc<dyn Sleeper>,
    /// The login sweepgate writes as, read once (`docs/contracts.md` §4).
    own_login: Arc<tokio::sync::OnceCell<String>>,
    limits: InputLimits,
    /// Shadow mode: writes go here instead of GitHub.
    sink: Option<Arc<dyn WriteSink>>,
}

impl GitHub {
    pub fn new(cfg: GitHubConfig) -> Result<Self, GitHubError> {
        Self::with_sleeper(cfg, Arc::new(TokioSleeper))
    }

    pub fn with_sleeper(cfg: GitHubConfig, sleeper: Arc<dyn Sleeper>) -> Result<Self, GitHubError> {
        let builder = Octocrab::builder()
            .base_uri(cfg.api_url.as_str())
            .map_err(|e| GitHubError::Config(format!("API URL `{}`: {e}", cfg.api_url)))?
            // Our policy retries; octocrab's would retry a second time inside it.
            .add_retry_config(RetryConfig::None)
            .set_connect_timeout(Some(Duration::from_secs(10)))
            .set_read_timeout(Some(cfg.policy.read_timeout));
        let (builder, is_app) = match &cfg.credentials {
            Credentials::App {
                app_id,
                private_key_pem,
            } => {
                let key = octocrab::jsonwebtoken::EncodingKey::from_rsa_pem(
                    private_key_pem.expose().as_bytes(),
                )
                .map_err(|e| GitHubError::Config(format!("App private key: {e}")))?;
                (builder.app(octocrab::models::AppId(*app_id), key), true)
            }
            Credentials::Token(t) => (builder.personal_token(t.expose().to_owned()), false),
        };
        let root = builder
            .build()
            .map_err(|e| GitHubError::Config(e.to_string()))?;
        let origin = url::Url::parse(&cfg.api_url)
            .map_err(|e| GitHubError::Config(format!("API URL `{}`: {e}", cfg.api_url)))?
            .origin()
            .ascii_serialization();
        Ok(Self {
            root: Arc::new(root),
            origin,
            is_app,
            installs: Arc::default(),
            policy: cfg.policy,
            sleeper,
            own_login: Arc::default(),
            limits: InputLimits::default(),
            sink: None,
        })
    }

    /// Shadow mode: every write goes to `sink` instead of GitHub
    /// (`docs/shadow.md`).
    pub fn with_sink(mut self, sink: Arc<dyn WriteSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Whether writes go to a shadow sink.
    pub fn is_shadow(&self) -> bool {
        self.sink.is_some()
    }

    /// With these size caps on file reads and artifacts (the server's
    /// configuration) instead of the defaults.
    pub fn with_limits(mut self, limits: InputLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Whether this client is a GitHub App (not a personal token).
    pub(crate) fn is_app(&self) -> bool {
        self.is_app
    }

    /// Calls as the App itself (JWT): `/app`, installation lookups.
    pub(crate) fn app(&self) -> Api {
        self.api(self.root.clone())
    }

    /// Calls as an installation; its token is fetched on first use, cached,
    /// and refreshed 30 s before it expires or when GitHub answers 401.
    pub fn installation(&self, id: InstallationId) -> Result<Api, GitHubError> {
        if !self.is_app {
            return Ok(self.app());
        }
        let mut map = self.installs.lock().unwrap_or_else(|p| p.into_inner());
        let octo = match map.get(&id.0) {
            Some(o) => o.clone(),
            None => {
                let o = self
                    .root
                    .installation(octocrab::models::InstallationId(id.0))
                    .map_err(|e| GitHubError::Config(e.to_string()))?;
                let o = Arc::new(o);
                map.insert(id.0, o.clone());
                o
            }
        };
        Ok(self.api(octo))
    }

    fn api(&self, octo: Arc<Octocrab>) -> Api {
        Api {
            octo,
            origin: self.origin.clone(),
            policy: self.policy.clone(),
            sleeper: self.sleeper.clone(),
            me: Arc::new(Me {
                root: self.root.clone(),
                is_app: self.is_app,
                login: self.own_login.clone(),
            }),
            limits: self.limits,
            sink: self.sink.clone(),
        }
    }
}

/// A successful answer.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Response {
    pub(crate) fn json<T: DeserializeOwned>(&self, path: &str) -> Result<T, GitHubError> {
        let body = if self.body.is_empty() {
            &b"null"[..]
        } else {
            &self.body[..]
        };
        serde_json::from_slice(body).map_err(|e| GitHubError::Decode {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// The `rel="next"` URL of the `Link` header.
    pub(crate) fn next_link(&self) -> Option<String> {
        let link = self.headers.get("link")?.to_str().ok()?;
        link.split(',').find_map(|part| {
            let (url, params) = part.split_once(';')?;
            params
                .split(';')
                .any(|p| p.trim() == "rel=\"next\"")
                .then(|| {
                    url.trim()
                        .trim_start_matches('<')
                        .trim_end_matches('>')
                        .to_owned()
                })
        })
    }
}

/// Calls with one identity; cheap to clone.
#[derive(Clone)]
pub struct Api {
    octo: Arc<Octocrab>,
    /// `scheme://host[:port]` of the API, to keep pagination on it.
    origin: String,
    policy: RetryPolicy,
    sleeper: Arc<dyn Sleeper>,
    me: Arc<Me>,
    limits: InputLimits,
    sink: Option<Arc<dyn WriteSink>>,
}

/// Who sweepgate is on GitHub, read once and shared by every [`Api`].
struct Me {
    root: Arc<Octocrab>,
    is_app: bool,
    login: Arc<tokio::sync::OnceCell<String>>,
}

impl Api {
    /// The same identity with its writes going to `sink` (a repository in
    /// shadow mode on a live server).
    pub(crate) fn with_sink(mut self, sink: Arc<dyn WriteSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Whether this API's writes go to a shadow sink.
    pub(crate) fn is_shadow(&self) -> bool {
        self.sink.is_some()
    }

    /// The login of the comments sweepgate writes (`docs/contracts.md` §4):
    /// the App's bot account (`<slug>[bot]`, from `GET /app` as the App),
    /// or the token's user (`GET /user`).
    pub(crate) async fn own_login(&self) -> Result<String, GitHubError> {
        #[derive(serde::Deserialize)]
        struct App {
            slug: String,
        }
        let root = Api {
            octo: self.me.root.clone(),
            me: self.me.clone(),
            ..self.clone()
        };
        let is_app = self.me.is_app;
        self.me
            .login
            .get_or_try_init(|| async move {
                if is_app {
                    let app: App = root.get("/app").await?;
                    Ok(format!("{}[bot]", app.slug))
                } else {
                    let me: super::rest::Login = root.get("/user").await?;
                    Ok(me.login)
                }
            })
            .await
            .cloned()
    }

    /// The size caps reads through this client honour.
    pub(crate) fn limits(&self) -> InputLimits {
        self.limits
    }

    /// Sends with the retry policy; a non-success answer is an error. In
    /// shadow mode a write is stored instead and answered as GitHub would,
    /// and a PR's comment list shows the virtual comments too.
    pub(crate) async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Response, GitHubError> {
        let Some(sink) = &self.sink else {
            return self.send_live(method, path, body).await;
        };
        // Boxed: `own_login` sends (a GET) through here.
        if method != Method::GET && method != Method::HEAD {
            let login = Box::pin(self.own_login()).await?;
            let a = shadow::intercept(sink.as_ref(), &login, method.as_str(), path, body).await?;
            return Ok(Response {
                status: a.status,
                headers: HeaderMap::new(),
                body: a
                    .body
                    .map_or_else(Bytes::new, |b| Bytes::from(b.to_string())),
            });
        }
        let mut resp = self.send_live(method, path, body).await?;
        if let Some((repo, pr)) = shadow::listed_comments_of(path)
            && resp.next_link().is_none()
        {
            let login = Box::pin(self.own_login()).await?;
            let extra = shadow::virtual_comments(sink.as_ref(), &login, &repo, pr).await?;
            if !extra.is_empty() {
                let mut list: Vec<serde_json::Value> = resp.json(path)?;
                list.extend(extra);
                resp.body = Bytes::from(serde_json::Value::Array(list).to_string());
            }
        }
        Ok(resp)
    }

    async fn send_live(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Response, GitHubError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = self.once(method.clone(), path, body).await;
            let (verdict, err) = match result {
                Ok(resp) if resp.status < 400 => return Ok(resp),
                Ok(resp) => {
                    let now = chrono::Utc::now().timestamp().max(0) as u64;
                    let wait = requested_wait(resp.status, &resp.headers, now);
                    let message = error_message(&resp.body);
                    let secondary = resp.status == 403
                        && message
                            .to_ascii_lowercase()
                            .contains("secondary rate limit");
                    let verdict = self.policy.decide(attempt, resp.status, wait, secondary);
                    let retry_after = wait.or(secondary.then_some(Duration::from_secs(60)));
                    (
                        verdict,
                        GitHubError::Status {
                            method: method.to_string(),
                            path: path.to_owned(),
                            status: resp.status,
                            message,
                            retry_after,
                        },
                    )
                }
                Err(e) => {
                    // A POST that timed out may have taken effect: posting it
                    // again could duplicate it. The job is retried instead,
                    // and its handler looks for its effect first.
                    let verdict = if attempt < self.policy.attempts && method != Method::POST {
                        Verdict::RetryAfter(self.policy.backoff(attempt))
                    } else {
                        Verdict::Fail
                    };
                    (verdict, e)
                }
            };
            match verdict {
                Verdict::RetryAfter(d) => {
                    tracing::debug!(%path, attempt, wait_ms = d.as_millis() as u64, error = %err, "retrying GitHub call");
                    self.sleeper.sleep(d).await;
                }
                Verdict::Done | Verdict::Fail => return Err(err),
            }
        }
    }

    async fn once(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Response, GitHubError> {
        let transport = |message: String| GitHubError::Transport {
            method: method.to_string(),
            path: path.to_owned(),
            message,
        };
        let builder = http::Request::builder()
            .method(method.clone())
            .uri(path)
            .header("accept", "application/vnd.github+json")
            .header("x-github-api-version", "2022-11-28");
        let request = self
            .octo
            .build_request(builder, body)
            .map_err(|e| transport(e.to_string()))?;
        let resp = self
            .octo
            .execute(request)
            .await
            .map_err(|e| transport(error_chain(&e)))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        crate::telemetry::github_call(method.as_str(), status);
        if let Some(r) = headers
            .get("x-ratelimit-remaining")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
        {
            crate::telemetry::rate_limit_remaining(r);
        }
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| transport(error_chain(&e)))?
            .to_bytes();
        Ok(Response {
            status,
            headers,
            body,
        })
    }

    pub(crate) async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, GitHubError> {
        self.send(Method::GET, path, None).await?.json(path)
    }

    /// GET that maps 404 to `None`.
    pub(crate) async fn get_opt<T: DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<Option<T>, GitHubError> {
        match self.send(Method::GET, path, None).await {
            Ok(r) => r.json(path).map(Some),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub(crate) async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, GitHubError> {
        self.send(Method::POST, path, Some(body)).await?.json(path)
    }

    pub(crate) async fn patch<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, GitHubError> {
        self.send(Method::PATCH, path, Some(body)).await?.json(path)
    }

    /// Every page of a list endpoint (`per_page=100`, following `Link`).
    /// `field` names the array inside an object answer
    /// (`{"total_count":…, "check_runs":[…]}`); `None` for a plain array.
    pub(crate) async fn get_all<T: DeserializeOwned>(
        &self,
        path: &str,
        field: Option<&str>,
    ) -> Result<Vec<T>, GitHubError> {
        self.get_until(path, field, |_| false).await
    }

    /// Like [`Api::get_all`], but stops at the first item for which `stop`
    /// is true (not included), reading no further page.
    pub(crate) async fn get_until<T: DeserializeOwned>(
        &self,
        path: &str,
        field: Option<&str>,
        mut stop: impl FnMut(&T) -> bool + Send,
    ) -> Result<Vec<T>, GitHubError> {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut next = Some(if path.contains("per_page=") {
            path.to_owned()
        } else {
            format!("{path}{sep}per_page=100")
        });
        let mut out = Vec::new();
        // A bound on pages so a looping Link header cannot hang a worker.
        let mut pages = 0;
        while let Some(url) = next.take() {
            pages += 1;
            if pages > 1000 {
                return Err(GitHubError::Decode {
                    path: path.to_owned(),
                    message: "more than 1000 pages".into(),
                });
            }
            let resp = self.send(Method::GET, &url, None).await?;
            let items: Vec<T> = match field {
                None => resp.json(&url)?,
                Some(f) => {
                    let mut v: serde_json::Value = resp.json(&url)?;
                    let arr = v.get_mut(f).map(serde_json::Value::take).ok_or_else(|| {
                        GitHubError::Decode {
                            path: url.clone(),
                            message: format!("no `{f}` field"),
                        }
                    })?;
                    serde_json::from_value(arr).map_err(|e| GitHubError::Decode {
                        path: url.clone(),
                        message: e.to_string(),
                    })?
                }
            };
            for item in items {
                if stop(&item) {
                    return Ok(out);
                }
                out.push(item);
            }
            next = match resp.next_link() {
                // octocrab authenticates only relative URIs (or
                // api.github.com), and a link to another host must not get
                // our token anyway.
                Some(link) => match link.strip_prefix(self.origin.as_str()) {
                    Some(rel) if rel.starts_with('/') => Some(rel.to_owned()),
                    _ => {
                        return Err(GitHubError::Decode {
                            path: url,
                            message: format!("next page `{link}` is not on {}", self.origin),
                        });
                    }
                },
                None => None,
            };
        }
        Ok(out)
    }
}

fn error_message(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(String::from))
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned())
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(sandbox: &sweepgate_sandbox::Sandbox, credentials: Credentials) -> GitHub {
        GitHub::new(GitHubConfig {
            api_url: sandbox.base_url(),
            credentials,
            policy: RetryPolicy::default(),
        })
        .unwrap()
    }

    /// `docs/contracts.md` §4: the App's bot account, or the token's user;
    /// read once and shared by every `Api` of the client.
    #[tokio::test]
    async fn own_login_is_the_apps_bot_or_the_tokens_user() {
        let (sandbox, _) = sweepgate_sandbox::Sandbox::start_with(Default::default())
            .await
            .unwrap();
        sandbox.add_org("o");
        let inst = sandbox.install_app("o");
        let app = client(
            &sandbox,
            Credentials::App {
                app_id: sandbox.app_id(),
                private_key_pem: Secret::new(sweepgate_sandbox::app_key_pem()),
            },
        );
        let api = app.installation(InstallationId(inst)).unwrap();
        assert_eq!(api.own_login().await.unwrap(), "sweepgate[bot]");
        assert_eq!(app.app().own_login().await.unwrap(), "sweepgate[bot]");
        assert_eq!(sandbox.requests_matching("GET", "/app").len(), 1);
        let token = client(
            &sandbox,
            Credentials::Token(Secret::new(sandbox.user_token("ops-bot"))),
        );
        assert_eq!(token.app().own_login().await.unwrap(), "ops-bot");
    }
}
