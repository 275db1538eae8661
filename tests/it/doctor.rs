//! `sweepgate doctor` against the sandbox GitHub: a healthy set-up passes
//! every check, and each check has a test with its own fault, which turns
//! exactly that check into ✘ with its fix and the exit code into 1.
use crate::common;

use common::TestDb;
use common::transcript::{OWNER, REPO, fixture_files};
use sweepgate_sandbox::{Fault, Sandbox, SandboxConfig};

/// A sandbox with the benchmark repository (its fixtures and the sweep
/// workflow), the App installed on it, and what `serve` would be given.
struct Setup {
    sandbox: Sandbox,
    db: TestDb,
    dir: tempfile::TempDir,
    secret: bool,
    database_url: Option<String>,
}

async fn setup_with(files: Vec<(String, Vec<u8>)>, workflow: bool) -> Setup {
    let (sandbox, _) = Sandbox::start_with(SandboxConfig::default()).await.unwrap();
    sandbox.add_org(OWNER);
    sandbox.add_repo(OWNER, REPO, "main", files).unwrap();
    if workflow {
        sandbox
            .add_workflow(OWNER, REPO, "run-sweep.yml", "Run sweep")
            .unwrap();
    }
    sandbox.install_app(OWNER);
    Setup {
        sandbox,
        db: TestDb::sqlite().await,
        dir: tempfile::tempdir().unwrap(),
        secret: true,
        database_url: None,
    }
}

/// The fixtures but `path`.
fn fixtures_without(path: &str) -> Vec<(String, Vec<u8>)> {
    fixture_files()
        .into_iter()
        .filter(|(p, _)| p != path)
        .collect()
}

async fn setup() -> Setup {
    setup_with(fixture_files(), true).await
}

impl Setup {
    /// Runs the doctor: its exit code and report.
    async fn doctor(&self) -> (i32, String) {
        let key = self.dir.path().join("app.pem");
        std::fs::write(&key, sweepgate_sandbox::app_key_pem()).unwrap();
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_sweepgate"));
        cmd.arg("doctor")
            .args(["--app-id", &self.sandbox.app_id().to_string()])
            .arg("--private-key-path")
            .arg(&key)
            .args(["--github-api-url", &self.sandbox.base_url()])
            .args([
                "--database-url",
                self.database_url.as_deref().unwrap_or(&self.db.url),
            ])
            .env_remove("SWEEPGATE_WEBHOOK_SECRETS")
            .env("SWEEPGATE_LOG", "off");
        if self.secret {
            cmd.args(["--webhook-secret", "s3cret"]);
        }
        let out = cmd.output().await.unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    }

    /// The doctor fails with exactly one ✘, which contains `what` and
    /// whose fix contains `fix`.
    async fn fails_once(self, what: &str, fix: &str) {
        let (code, report) = self.doctor().await;
        assert_eq!(code, 1, "{report}");
        let bad: Vec<&str> = report.lines().filter(|l| l.starts_with('✘')).collect();
        assert_eq!(bad.len(), 1, "{report}");
        assert!(bad[0].contains(what), "{report}");
        let fix_line = report
            .lines()
            .skip_while(|l| !l.starts_with('✘'))
            .nth(1)
            .unwrap_or("");
        assert!(
            fix_line.starts_with("    fix: ") && fix_line.contains(fix),
            "{report}"
        );
        assert!(report.ends_with("1 check(s) failed\n"), "{report}");
        self.db.cleanup().await;
    }
}

#[tokio::test]
async fn a_healthy_setup_passes_every_check() {
    let s = setup().await;
    let (code, report) = s.doctor().await;
    assert_eq!(code, 0, "{report}");
    let lines: Vec<&str> = report.lines().collect();
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with('✔') || *l == "all checks passed"),
        "{report}"
    );
    for want in [
        "every migration applied",
        "webhook secret set (1)",
        "the App's JWT is accepted (App `sweepgate`)",
        "the App's permissions and events match the manifest",
        "its token works; repositories: InferenceX/InferenceX",
        "InferenceX/InferenceX: no .github/sweepgate.toml, the defaults apply",
        "InferenceX/InferenceX: CODEOWNERS found at .github/CODEOWNERS",
        "InferenceX/InferenceX: checklist template found at docs/PR_REVIEW_CHECKLIST.md",
        "InferenceX/InferenceX: sweep workflow run-sweep.yml exists",
    ] {
        assert!(report.contains(want), "missing `{want}`:\n{report}");
    }
    s.db.cleanup().await;
}

#[tokio::test]
async fn a_database_without_its_migrations() {
    let mut s = setup().await;
    // A database file nobody migrated.
    s.database_url = Some(format!(
        "sqlite:{}",
        s.dir.path().join("fresh.db").display()
    ));
    s.fails_once(
        "its migrations are not all applied",
        "run `sweepgate migrate`",
    )
    .await;
}

#[tokio::test]
async fn no_webhook_secret() {
    let mut s = setup().await;
    s.secret = false;
    s.fails_once("no webhook secret is set", "--webhook-secret")
        .await;
}

#[tokio::test]
async fn github_refuses_the_apps_jwt() {
    let s = setup().await;
    s.sandbox
        .inject(Fault::status(401).on("GET", "/app").always());
    let (code, report) = s.doctor().await;
    assert_eq!(code, 1, "{report}");
    assert!(
        report.contains("✘ GitHub did not accept the App's JWT"),
        "{report}"
    );
    assert!(report.contains("fix: check --app-id"), "{report}");
    s.db.cleanup().await;
}

#[tokio::test]
async fn an_installation_token_that_does_not_work() {
    let s = setup().await;
    s.sandbox.inject(
        Fault::status(403)
            .on("POST", "/app/installations/*/access_tokens")
            .always(),
    );
    s.fails_once("its token does not work", "reinstall the App")
        .await;
}

#[tokio::test]
async fn permissions_short_of_the_manifest() {
    let s = setup().await;
    let mut perms: Vec<(&str, &str)> = sweepgate::deploy::PERMISSIONS.to_vec();
    for p in &mut perms {
        if p.0 == "issues" {
            p.1 = "read";
        }
    }
    let events: Vec<&str> = sweepgate::deploy::events()
        .into_iter()
        .filter(|e| *e != "push")
        .collect();
    s.sandbox.set_app_grants(&perms, &events);
    s.fails_once(
        "issues: write wanted, read granted; events not subscribed: push",
        "sweepgate app-manifest",
    )
    .await;
}

#[tokio::test]
async fn a_repository_configuration_that_does_not_parse() {
    let mut files = fixture_files();
    files.push((
        ".github/sweepgate.toml".into(),
        b"[sweep]\nmode = \"track\"\nchunk-size = 0\n".to_vec(),
    ));
    let s = setup_with(files, true).await;
    s.fails_once(
        "InferenceX/InferenceX: InferenceX/InferenceX:.github/sweepgate.toml:3:1: sweep.chunk-size must be between 1 and 256",
        "correct .github/sweepgate.toml on main",
    )
    .await;
}

#[tokio::test]
async fn no_codeowners_file() {
    let s = setup_with(fixtures_without(".github/CODEOWNERS"), true).await;
    s.fails_once(
        "no CODEOWNERS at .github/CODEOWNERS on main",
        "name its path in .github/sweepgate.toml",
    )
    .await;
}

#[tokio::test]
async fn no_checklist_template() {
    let s = setup_with(fixtures_without("docs/PR_REVIEW_CHECKLIST.md"), true).await;
    s.fails_once(
        "no checklist template at docs/PR_REVIEW_CHECKLIST.md on main",
        "name its path",
    )
    .await;
}

#[tokio::test]
async fn the_sweep_workflow_is_missing() {
    let s = setup_with(fixture_files(), false).await;
    s.fails_once(
        "the sweep workflow run-sweep.yml named in the configuration does not exist",
        "add .github/workflows/run-sweep.yml",
    )
    .await;
}
