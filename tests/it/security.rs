//! Security properties (issue 8, item 7), each in its strongest form on
//! the real handlers against the sandbox GitHub:
//! (a) PR files are parsed, never executed or sourced;
//! (b) secrets, tokens and keys never appear in the logs;
//! (c) a fork PR cannot start a sweep without a maintainer's label, bound
//!     to the head it was applied on;
//! (d) a verdict applies only to the SHA it assessed — in
//!     `tests/transcript_verify.rs` (`a_pass_does_not_carry_over_to_a_new_push`,
//!     `seed_002_sign_off_gets_the_18_row_pass_verdict`,
//!     `a_review_on_a_moved_head_is_assessed_at_its_commit_and_superseded_later`),
//!     which need seed 002's world;
//! (e) the matrix endpoint refuses a wrong, missing or expired token.
use crate::common;

use axum::body::Body;
use axum::http::Request;
use common::transcript::{
    ADMIN_TOKEN, DISPATCH_ONLY, OWNER, REPO, World, app_key_pem, dispatch_world,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use sweepgate_sandbox::{Change, Fault};
use tower::ServiceExt;

const PUBLIC: &str = "https://gate.example.com";
const LABEL: &str = "full-sweep-fail-fast";
const GATE_CHECK: &str = "sweepgate / sweep-gate";

fn changelog_with(entry: &str) -> Change {
    let path = common::data_dir().join("inferencex/perf-changelog.yaml");
    let mut text = std::fs::read_to_string(path).unwrap();
    text.push_str(entry);
    Change::write("perf-changelog.yaml", text)
}

fn changelog_append(description: &str) -> Change {
    changelog_with(&format!(
        "\n- config-keys:\n    - dsv4-fp8-h200-vllm\n  description:\n    - \"{description}\"\n  pr-link: https://github.com/InferenceX/InferenceX/pull/1\n"
    ))
}

async fn dispatched() -> World {
    dispatch_world(DISPATCH_ONLY, PUBLIC).await
}

/// The newest conclusion of the gate's check run on `sha`.
fn gate_on(w: &World, sha: &str) -> Option<(String, String)> {
    w.sandbox
        .check_runs(OWNER, REPO, sha)
        .into_iter()
        .filter(|c| c.name == GATE_CHECK)
        .max_by_key(|c| c.id)
        .map(|c| {
            (
                c.conclusion.unwrap_or_default(),
                c.summary.unwrap_or_default(),
            )
        })
}

// ---- (a) PR content is data ----

fn marker(name: &str) -> PathBuf {
    PathBuf::from(format!("/tmp/pwned-{}-{name}", std::process::id()))
}

#[tokio::test]
async fn pr_files_are_parsed_never_executed_or_sourced() {
    let names = [
        "script-subst",
        "script-backtick",
        "script-source",
        "script-eval",
        "script-bash-c",
        "script-python",
        "yaml-tag",
        "yaml-subst",
        "changelog-subst",
        "changelog-backtick",
        "changelog-tag",
        "signoff-subst",
    ];
    for n in names {
        let _ = std::fs::remove_file(marker(n));
    }
    let m = |n: &str| marker(n).display().to_string();
    let sourced = format!("touch {}\n", m("script-source"));
    let script = format!(
        "#!/usr/bin/env bash\n# $(touch {a})\nexport MODEL=\"$(touch {a})\"\nCONC=`touch {b}`\nsource benchmarks/payload.sh\n. ./benchmarks/payload.sh\neval \"touch {c}\"\nbash -c \"touch {d}\"\npython3 -c \"import os; os.system('touch {e}')\"\nvllm serve $MODEL --tensor-parallel-size 8 --max-num-seqs $CONC\n",
        a = m("script-subst"),
        b = m("script-backtick"),
        c = m("script-eval"),
        d = m("script-bash-c"),
        e = m("script-python"),
    );
    let master_path = common::data_dir().join("inferencex/configs/nvidia-master.yaml");
    let mut master = std::fs::read_to_string(master_path).unwrap();
    master.push_str(&format!(
        "\npwned-yaml: !!python/object/apply:os.system [\"touch {}\"]\npwned-subst:\n  image: \"$(touch {})\"\n",
        m("yaml-tag"),
        m("yaml-subst")
    ));
    let changelog = changelog_with(&format!(
        "\n- config-keys:\n    - dsv4-fp8-h200-vllm\n  description:\n    - \"$(touch {})\"\n    - \"`touch {}`\"\n    - !!python/object/apply:os.system [\"touch {}\"]\n  pr-link: https://github.com/InferenceX/InferenceX/pull/1\n",
        m("changelog-subst"),
        m("changelog-backtick"),
        m("changelog-tag")
    ));
    let mut w = World::new().await;
    let pr = w.open_pr(
        "payloads",
        &[
            Change::write(
                "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_vllm.sh",
                script,
            ),
            Change::write("benchmarks/payload.sh", sourced),
            Change::write("configs/nvidia-master.yaml", master),
            changelog,
        ],
        "vendor-dev",
    );
    pr.add_label(LABEL, "maint").unwrap();
    w.deliver().await;
    w.sandbox
        .set_permission(OWNER, REPO, "nvpohanh", "write", "write")
        .unwrap();
    // A sign-off covers a head that stood a minute before it
    // (`docs/contracts.md` §3).
    w.sandbox.advance_clock(chrono::Duration::minutes(2));
    pr.post_comment(
        "nvpohanh",
        "COLLABORATOR",
        &format!(
            "As a PR reviewer and CODEOWNER, I have reviewed this PR. $(touch {}) `touch {}`\n\nSigned: nvpohanh",
            m("signoff-subst"),
            m("signoff-subst")
        ),
    )
    .unwrap();
    w.deliver().await;
    let said = w.take_comments(pr.number);
    // Lint, gate and verdict all read the payloads.
    for prefix in [
        "<!-- sweepgate:recipe-lint",
        "<!-- sweepgate:sweep-gate -->",
        "<!-- codeowner-signoff-verify",
    ] {
        assert!(
            said.iter().any(|c| c.starts_with(prefix)),
            "no {prefix}: {said:#?}"
        );
    }
    let head = pr.head_sha().unwrap();
    assert!(gate_on(&w, &head).is_some());
    let fired: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| marker(n).exists())
        .collect();
    assert!(fired.is_empty(), "PR content ran: {fired:?}");
    w.finish(&[pr.number]).await;
}

/// Every `.rs` file under `dir`, by path relative to the crate.
fn rust_files(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p
                .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                .unwrap()
                .display()
                .to_string();
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

#[test]
fn only_git_is_ever_spawned_outside_the_harnesses() {
    // The served code: the service and its domain crate. The benchmark and
    // reliability harnesses (`crates/xtask`, which spawn sweepgate,
    // valgrind and `kill`) and the sandbox are not part of the served
    // process and not in the production binary. The demo runs nothing.
    let mut files = Vec::new();
    for dir in ["src", "crates/sweepgate-core/src"] {
        rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir), &mut files);
    }
    assert!(files.len() > 50);
    let served = |_: &str| true;
    let mut spawns = Vec::new();
    for (path, text) in files.iter().filter(|(p, _)| served(p)) {
        for (i, _) in text.match_indices("Command::new(") {
            let arg = &text[i + "Command::new(".len()..];
            let arg = &arg[..arg.find(')').unwrap()];
            spawns.push((path.as_str(), arg.trim()));
        }
        for forbidden in [
            "CommandExt",
            "libc::exec",
            "nix::unistd",
            "process::Command::new(\"sh",
            "process::Command::new(\"bash",
            "Command::new(\"sh\")",
            "Command::new(\"bash\")",
        ] {
            assert!(!text.contains(forbidden), "{path} uses {forbidden}");
        }
    }
    spawns.sort();
    assert_eq!(
        spawns,
        [
            // The local clone for `sweepgate check`, `lint` and `replay`:
            // the git repository source, git with fixed subcommands,
            // revisions that cannot start with `-`, and no shell (the
            // commit list of a local check goes through it too).
            ("src/repo/git.rs", "&self.git"),
        ]
    );
    // The git binary is git unless a caller says otherwise, and no served
    // code says otherwise.
    let overrides: Vec<&str> = files
        .iter()
        .filter(|(p, t)| served(p) && p != "src/repo/git.rs" && t.contains(".with_git("))
        .map(|(p, _)| p.as_str())
        .collect();
    assert!(overrides.is_empty(), "{overrides:?}");
}

// ---- (b) no secret in the logs ----

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The process's logs, in the server's JSON format, at debug level for
/// every crate and trace for sweepgate (more than an operator would run).
fn logs() -> &'static Captured {
    static LOGS: OnceLock<Captured> = OnceLock::new();
    LOGS.get_or_init(|| {
        let c = Captured::default();
        let writer = c.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("debug,sweepgate=trace"))
            .json()
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        c
    })
}

#[tokio::test]
async fn secrets_tokens_and_keys_never_reach_the_logs() {
    let logs = logs();
    let mut w = dispatched().await;
    // A dispatched sweep: a matrix token in a URL sweepgate builds.
    let pr = w.open_pr("dsv4-h200", &[changelog_append("Retune TP8")], "vendor-dev");
    pr.add_label(LABEL, "maint").unwrap();
    w.deliver().await;
    let url = w.sandbox.workflow_dispatches()[0].inputs["matrix-url"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, token) = url.split_once("?token=").unwrap();
    let path = url.strip_prefix(PUBLIC).unwrap();
    assert_eq!(w.page(path).await.0, 200);
    let wrong = format!(
        "{}{}",
        &token[..47],
        if token.ends_with('0') { '1' } else { '0' }
    );
    assert_eq!(w.page(&path.replace(token, &wrong)).await.0, 403);
    // Installation tokens renewed after GitHub revokes them; a failing call
    // retried, its error logged.
    w.sandbox.expire_tokens();
    w.sandbox
        .inject(Fault::status(502).on("POST", "/repos/*/*/issues/*/comments"));
    pr.post_comment("someone", "NONE", "/help").unwrap();
    w.deliver().await;
    // A forged delivery, and the admin action with a wrong and a right token.
    let forged = Request::post("/webhook")
        .header("content-type", "application/json")
        .header("x-github-event", "ping")
        .header("x-github-delivery", "forged-1")
        .header("x-hub-signature-256", format!("sha256={}", "0".repeat(64)))
        .body(Body::from("{}"))
        .unwrap();
    assert_eq!(w.app.clone().oneshot(forged).await.unwrap().status(), 401);
    for t in ["not-the-admin-token", ADMIN_TOKEN] {
        let req = Request::post("/queue/1/retry")
            .header("authorization", format!("Bearer {t}"))
            .body(Body::empty())
            .unwrap();
        let status = w.dashboard.clone().oneshot(req).await.unwrap().status();
        assert!(status == 403 || status == 409, "{status}");
    }
    w.take_comments(pr.number);

    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    // The capture works: the events above were logged.
    for expected in [
        "matrix requested with a wrong token",
        "retrying GitHub call",
        "dashboard retry with a wrong admin token",
    ] {
        assert!(text.contains(expected), "no `{expected}` in the logs");
    }
    let tokens = w.sandbox.issued_tokens();
    assert!(
        tokens.len() >= 2,
        "a token was issued and renewed: {tokens:?}"
    );
    let mut secrets: Vec<(String, String)> = tokens
        .into_iter()
        .map(|t| ("installation token".to_string(), t))
        .collect();
    secrets.push(("webhook secret".into(), w.sandbox.webhook_secret()));
    secrets.push(("matrix token".into(), token.to_owned()));
    secrets.push(("admin token".into(), ADMIN_TOKEN.to_owned()));
    // Any App JWT: base64 of `{"alg":`.
    secrets.push(("App JWT".into(), "eyJhbGciOi".into()));
    for line in app_key_pem().lines().filter(|l| !l.starts_with("-----")) {
        secrets.push(("App private key".into(), line.to_owned()));
    }
    secrets.push(("App private key".into(), "PRIVATE KEY".into()));
    for (what, secret) in &secrets {
        assert!(!text.contains(secret.as_str()), "the {what} is in the logs");
    }
    eprintln!(
        "{} bytes of JSON logs, {} lines, checked for {} secrets",
        text.len(),
        text.lines().count(),
        secrets.len()
    );
    w.finish(&[pr.number]).await;
}

// ---- (c) fork PRs ----

#[tokio::test]
async fn a_fork_pr_sweeps_only_on_a_maintainers_label_bound_to_its_head() {
    let mut w = dispatched().await;
    let s = w.sandbox.clone();
    s.set_permission(OWNER, REPO, "triager", "triage", "triage")
        .unwrap();
    s.set_permission(OWNER, REPO, "maint", "write", "maintain")
        .unwrap();
    let pr = w.open_fork_pr(
        "vendor",
        "retune",
        &[changelog_append("Retune TP8")],
        "vendor-dev",
    );
    w.deliver().await;
    let first = pr.head_sha().unwrap();

    // A user without write access labels it: refused, nothing dispatched.
    pr.add_label(LABEL, "triager").unwrap();
    w.deliver().await;
    let (conclusion, summary) = gate_on(&w, &first).unwrap();
    assert_eq!(conclusion, "failure");
    assert!(
        summary.contains(&format!(
            "on a fork PR the `{LABEL}` label must be applied by a user with write access; @triager has"
        )),
        "{summary}"
    );
    assert!(s.workflow_dispatches().is_empty());

    // A maintainer labels it: one sweep, of the head at that moment.
    pr.remove_label(LABEL, "triager").unwrap();
    pr.add_label(LABEL, "maint").unwrap();
    w.deliver().await;
    let dispatches = s.workflow_dispatches();
    assert_eq!(dispatches.len(), 1);
    assert_eq!(dispatches[0].inputs["head-sha"], first.as_str());
    assert_eq!(gate_on(&w, &first).unwrap().0, "success");

    // The fork's author pushes: the label does not carry over.
    let second = pr
        .push(&[changelog_append("Retune TP8 again")], "retune again")
        .unwrap();
    w.deliver().await;
    let (conclusion, summary) = gate_on(&w, &second).unwrap();
    assert_eq!(conclusion, "failure");
    assert!(
        summary.contains(&format!(
            "on a fork PR the `{LABEL}` label allows a sweep of the commit it was applied on ({}); the head is now {}: a user with write access must apply it again",
            &first[..8],
            &second[..8]
        )),
        "{summary}"
    );
    assert_eq!(s.workflow_dispatches().len(), 1, "no sweep of the new head");
    let sweeps =
        w.db.store
            .pr_sweeps(&format!("{OWNER}/{REPO}"), pr.number as i64)
            .await
            .unwrap();
    assert_eq!(sweeps.len(), 1);
    assert_eq!(
        sweeps[0].state,
        sweepgate::store::SweepState::Cancelled,
        "the old head's sweep stops"
    );

    // A new label by the maintainer sweeps the new head.
    pr.remove_label(LABEL, "maint").unwrap();
    pr.add_label(LABEL, "maint").unwrap();
    w.deliver().await;
    let dispatches = s.workflow_dispatches();
    assert_eq!(dispatches.len(), 2);
    assert_eq!(dispatches[1].inputs["head-sha"], second.as_str());
    w.take_comments(pr.number);
    w.finish(&[pr.number]).await;
}

// ---- (e) the matrix endpoint ----
// `tests/transcript_dispatch.rs` checks a wrong, a missing token and an
// unknown sweep; here also an expired one, an empty one, and one sweep's
// token on another sweep.

#[tokio::test]
async fn the_matrix_endpoint_refuses_wrong_missing_and_expired_tokens() {
    let mut w = dispatched().await;
    let a = w.open_pr("dsv4-h200", &[changelog_append("Retune TP8")], "vendor-dev");
    a.add_label(LABEL, "maint").unwrap();
    w.deliver().await;
    let b = w.open_pr(
        "dsv4-h200-b",
        &[changelog_append("Retune TP4")],
        "vendor-dev",
    );
    b.add_label(LABEL, "maint").unwrap();
    w.deliver().await;
    let urls: Vec<String> = w
        .sandbox
        .workflow_dispatches()
        .iter()
        .map(|d| d.inputs["matrix-url"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(urls.len(), 2);
    let parts = |u: &str| {
        let rest = u.strip_prefix(&format!("{PUBLIC}/api/sweeps/")).unwrap();
        let (id, token) = rest.split_once("/matrix?token=").unwrap();
        (id.to_owned(), token.to_owned())
    };
    let (id_a, token_a) = parts(&urls[0]);
    let (id_b, token_b) = parts(&urls[1]);
    let get = |id: &str, query: &str| format!("/api/sweeps/{id}/matrix{query}");

    assert_eq!(
        w.page(&get(&id_a, &format!("?token={token_a}"))).await.0,
        200
    );
    assert_eq!(
        w.page(&get(&id_b, &format!("?token={token_b}"))).await.0,
        200
    );
    for (query, status, body) in [
        ("".to_string(), 401, "the sweep's token is required\n"),
        (
            "?token=".to_string(),
            401,
            "the sweep's token is required\n",
        ),
        (
            format!("?token={token_b}"),
            403,
            "wrong token for this sweep\n",
        ),
        (
            format!("?token={}", token_a.to_uppercase()),
            403,
            "wrong token for this sweep\n",
        ),
        (
            format!("?token={}", &token_a[..47]),
            403,
            "wrong token for this sweep\n",
        ),
    ] {
        let (got, text) = w.page(&get(&id_a, &query)).await;
        assert_eq!((got.as_u16(), text.as_str()), (status, body), "{query}");
    }

    // A sweep whose token has expired: refused, with the right token too.
    let mut expired = w.db.store.sweep(&id_a).await.unwrap().unwrap();
    let (token_c, digest) = sweepgate_core::sweep::dispatch::new_token(rand::random());
    expired.sweep_id = "sg-expired".into();
    expired.token_sha256 = digest;
    expired.expires_at = sweepgate::store::now_ms() - 1;
    assert!(w.db.store.create_sweep(&expired).await.unwrap());
    let (got, text) = w
        .page(&get("sg-expired", &format!("?token={token_c}")))
        .await;
    assert_eq!(
        (got.as_u16(), text.as_str()),
        (403, "this sweep's token has expired\n")
    );
    let (got, text) = w
        .page(&get("sg-expired", &format!("?token={token_a}")))
        .await;
    assert_eq!(
        (got.as_u16(), text.as_str()),
        (403, "wrong token for this sweep\n")
    );
    w.take_comments(a.number);
    w.take_comments(b.number);
    w.finish(&[a.number, b.number]).await;
}
