//! `sweepgate doctor`: with the configuration `serve` would use, checks
//! what a first start needs and prints ✔ or ✘ with the fix for each
//! (`docs/operations.md`). Exit 1 on any ✘. It only reads: no migration is
//! applied, nothing is written to GitHub.
use crate::config::server::{Mode, ServerConfig};
use crate::github::{Api, GitHub, GitHubConfig, RetryPolicy};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::ExitCode;
use sweepgate_core::config::RepoConfig;
use sweepgate_core::config::repo::REPO_CONFIG_PATH;
use sweepgate_core::ids::InstallationId;
use sweepgate_core::ids::RepoName;

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub ok: bool,
    pub what: String,
    /// How to fix it (empty when it is fine).
    pub fix: String,
}

impl Finding {
    fn ok(what: impl Into<String>) -> Self {
        Finding {
            ok: true,
            what: what.into(),
            fix: String::new(),
        }
    }

    fn bad(what: impl Into<String>, fix: impl Into<String>) -> Self {
        Finding {
            ok: false,
            what: what.into(),
            fix: fix.into(),
        }
    }
}

pub(crate) fn render(findings: &[Finding]) -> String {
    let mut out = String::new();
    // One line each: an error message may span several.
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    for f in findings {
        if f.ok {
            out.push_str(&format!("✔ {}\n", one_line(&f.what)));
        } else {
            out.push_str(&format!(
                "✘ {}\n    fix: {}\n",
                one_line(&f.what),
                one_line(&f.fix)
            ));
        }
    }
    let bad = findings.iter().filter(|f| !f.ok).count();
    out.push_str(&if bad == 0 {
        "all checks passed\n".to_owned()
    } else {
        format!("{bad} check(s) failed\n")
    });
    out
}

/// The repository configuration, as the server reads it; the one call to
/// the loader (`sweepgate_core::config`).
fn parse_repo_config(repo: &RepoName, bytes: &[u8]) -> Result<RepoConfig, String> {
    RepoConfig::from_toml(&format!("{repo}:{REPO_CONFIG_PATH}"), bytes).map_err(|e| e.to_string())
}

async fn database(cfg: &ServerConfig) -> Finding {
    let url = crate::app::redact_url(&cfg.database_url);
    let store = match crate::store::open(&cfg.database_url, cfg.sqlite_sync).await {
        Ok(s) => s,
        Err(e) => {
            return Finding::bad(
                format!("database {url} is not reachable: {e}"),
                "check --database-url (SWEEPGATE_DATABASE_URL) and that the database server runs",
            );
        }
    };
    match store.ready().await {
        Ok(true) => Finding::ok(format!("database {url} reachable, every migration applied")),
        Ok(false) => Finding::bad(
            format!("database {url} is reachable but its migrations are not all applied"),
            "run `sweepgate migrate` with the same configuration (serve also applies them at start)",
        ),
        Err(e) => Finding::bad(
            format!("database {url} is not reachable: {e}"),
            "check --database-url (SWEEPGATE_DATABASE_URL) and that the database server runs",
        ),
    }
}

fn webhook_secret(cfg: &ServerConfig) -> Finding {
    match cfg.webhook_secrets.len() {
        0 => Finding::bad(
            "no webhook secret is set",
            "pass --webhook-secret (or SWEEPGATE_WEBHOOK_SECRETS) with the secret of the App's webhook",
        ),
        n => Finding::ok(format!("webhook secret set ({n})")),
    }
}

#[derive(Deserialize)]
struct AppInfo {
    #[serde(default)]
    slug: String,
    #[serde(default)]
    permissions: serde_json::Map<String, Value>,
    #[serde(default)]
    events: Vec<String>,
}

#[derive(Deserialize)]
struct Installation {
    id: u64,
    #[serde(default)]
    account: Option<Account>,
}

#[derive(Deserialize)]
struct Account {
    #[serde(default)]
    login: String,
}

#[derive(Deserialize)]
struct Repo {
    full_name: String,
    #[serde(default)]
    default_branch: Option<String>,
}

/// What the manifest asks for against what the App has.
fn permissions_match(app: &AppInfo, mode: Mode) -> Finding {
    let want = crate::deploy::permissions_for(mode == Mode::Shadow);
    let mut problems = Vec::new();
    for (name, access) in want {
        let have = app.permissions.get(*name).and_then(Value::as_str);
        let enough = matches!((have, *access), (Some("write"), _) | (Some("read"), "read"));
        if !enough {
            problems.push(format!(
                "{name}: {access} wanted, {} granted",
                have.unwrap_or("none")
            ));
        }
    }
    let have: BTreeSet<&str> = app.events.iter().map(String::as_str).collect();
    let missing: Vec<&str> = crate::deploy::events()
        .into_iter()
        .filter(|e| !have.contains(e))
        .collect();
    if !missing.is_empty() {
        problems.push(format!("events not subscribed: {}", missing.join(", ")));
    }
    if problems.is_empty() {
        Finding::ok("the App's permissions and events match the manifest")
    } else {
        Finding::bad(
            format!(
                "the App's permissions or events differ from the manifest: {}",
                problems.join("; ")
            ),
            "in the App's settings, grant what `sweepgate app-manifest` lists (then accept the new permissions on each installation)",
        )
    }
}

/// The checks on one repository: its configuration, CODEOWNERS, the
/// checklist template and the sweep workflow.
async fn repository(api: &Api, repo: &Repo) -> Vec<Finding> {
    let name = &repo.full_name;
    let Some((o, r)) = name.split_once('/') else {
        return vec![Finding::bad(format!("`{name}` is not owner/name"), "—")];
    };
    let id = RepoName::new(o, r);
    let branch = repo.default_branch.clone().unwrap_or_else(|| "main".into());
    let mut out = Vec::new();
    let cfg = match api.file_at(&id, REPO_CONFIG_PATH, &branch).await {
        Ok(None) => {
            out.push(Finding::ok(format!(
                "{name}: no {REPO_CONFIG_PATH}, the defaults apply"
            )));
            RepoConfig::default()
        }
        Ok(Some(bytes)) => {
            match parse_repo_config(&id, &bytes) {
                Ok(c) => {
                    out.push(Finding::ok(format!("{name}: {REPO_CONFIG_PATH} parses")));
                    c
                }
                Err(e) => {
                    out.push(Finding::bad(
                    format!("{name}: {e}"),
                    format!("correct {REPO_CONFIG_PATH} on {branch} (docs/operations.md lists its keys)"),
                ));
                    return out;
                }
            }
        }
        Err(e) => {
            out.push(Finding::bad(
                format!("{name}: {REPO_CONFIG_PATH} could not be read: {e}"),
                "give the App `contents: read` on the repository",
            ));
            return out;
        }
    };
    for (what, path) in [
        ("CODEOWNERS", cfg.paths.codeowners.as_str()),
        ("checklist template", cfg.paths.checklist_template.as_str()),
    ] {
        out.push(match api.file_at(&id, path, &branch).await {
            Ok(Some(_)) => Finding::ok(format!("{name}: {what} found at {path}")),
            Ok(None) => Finding::bad(
                format!("{name}: no {what} at {path} on {branch}"),
                format!("add it, or name its path in {REPO_CONFIG_PATH} (paths)"),
            ),
            Err(e) => Finding::bad(
                format!("{name}: {what} at {path} could not be read: {e}"),
                "give the App `contents: read` on the repository",
            ),
        });
    }
    let wf = &cfg.sweep.workflow;
    let path = format!("/repos/{o}/{r}/actions/workflows/{wf}");
    out.push(match api.get_opt::<Value>(&path).await {
        Ok(Some(_)) => Finding::ok(format!("{name}: sweep workflow {wf} exists")),
        Ok(None) => Finding::bad(
            format!("{name}: the sweep workflow {wf} named in the configuration does not exist"),
            format!("add .github/workflows/{wf}, or name the right file in {REPO_CONFIG_PATH} (sweep.workflow)"),
        ),
        Err(e) => Finding::bad(
            format!("{name}: the sweep workflow {wf} could not be read: {e}"),
            "give the App `actions: read` on the repository",
        ),
    });
    out
}

/// Every check, in order.
pub(crate) async fn diagnose(cfg: &ServerConfig) -> Vec<Finding> {
    let mut out = vec![database(cfg).await, webhook_secret(cfg)];
    let credentials = match cfg.credentials() {
        Ok(c) => c,
        Err(e) => {
            out.push(Finding::bad(
                format!("GitHub credentials: {e}"),
                "pass --app-id and --private-key-path of the GitHub App",
            ));
            return out;
        }
    };
    let github = match GitHub::new(GitHubConfig {
        api_url: cfg.github_api_url.clone(),
        credentials,
        policy: RetryPolicy::default(),
    }) {
        Ok(g) => g.with_limits(cfg.limits),
        Err(e) => {
            out.push(Finding::bad(
                format!("GitHub client: {e}"),
                "check --private-key-path (a PEM RSA key) and --github-api-url",
            ));
            return out;
        }
    };
    if !github.is_app() {
        out.push(Finding::bad(
            "the credentials are a token, not a GitHub App",
            "serve runs as a GitHub App: pass --app-id and --private-key-path",
        ));
        return out;
    }
    let app = github.app();
    let info: AppInfo = match app.get("/app").await {
        Ok(i) => i,
        Err(e) => {
            out.push(Finding::bad(
                format!("GitHub did not accept the App's JWT: {e}"),
                "check --app-id and that --private-key-path is a current private key of that App (and the machine's clock)",
            ));
            return out;
        }
    };
    out.push(Finding::ok(format!(
        "the App's JWT is accepted (App `{}`)",
        info.slug
    )));
    out.push(permissions_match(&info, cfg.mode));
    let installs: Vec<Installation> = match app.get_all("/app/installations", None).await {
        Ok(i) => i,
        Err(e) => {
            out.push(Finding::bad(
                format!("the App's installations could not be listed: {e}"),
                "retry; GitHub answered an error",
            ));
            return out;
        }
    };
    if installs.is_empty() {
        out.push(Finding::bad(
            "the App is installed nowhere",
            "install the App on the benchmark repository",
        ));
    }
    for inst in installs {
        let account = inst.account.map(|a| a.login).unwrap_or_default();
        let listed = match github.installation(InstallationId(inst.id)) {
            Ok(api) => api
                .get_all::<Repo>("/installation/repositories", Some("repositories"))
                .await
                .map(|repos| (api, repos))
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match listed {
            Ok((api, repos)) => {
                let names: Vec<&str> = repos.iter().map(|r| r.full_name.as_str()).collect();
                out.push(Finding::ok(format!(
                    "installation {} ({account}): its token works; repositories: {}",
                    inst.id,
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    }
                )));
                for r in &repos {
                    out.extend(repository(&api, r).await);
                }
            }
            Err(e) => out.push(Finding::bad(
                format!(
                    "installation {} ({account}): its token does not work: {e}",
                    inst.id
                ),
                "check that the installation is not suspended, and reinstall the App if needed",
            )),
        }
    }
    out
}

/// `sweepgate doctor`.
pub(crate) async fn run(cfg: &ServerConfig) -> anyhow::Result<ExitCode> {
    let findings = diagnose(cfg).await;
    super::output::print_out(&render(&findings))?;
    Ok(if findings.iter().all(|f| f.ok) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
