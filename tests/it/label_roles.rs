//! Label roles (`[labels.roles]`, issue 22): sweepgate asks what a label
//! means, never what it is called. The same dispatch-mode transcript, once
//! with the default label names and once with every label renamed in the
//! repository's configuration, makes the same requests to GitHub, up to the
//! names themselves.
use crate::common;

use common::transcript::{DISPATCH_ONLY, changelog_append, dispatch_world_with};

/// (default name, renamed) for every label of the configuration.
const RENAMES: &[(&str, &str)] = &[
    ("non-canary-full-sweep-enabled", "gpu-run-direct"),
    ("full-sweep-fail-fast", "gpu-run-strict"),
    ("full-sweep-enabled", "gpu-run-complete"),
    ("all-evals", "with-every-eval"),
    ("evals-only", "only-the-evals"),
    ("agentx-fast", "agentic-quick"),
];

const RENAMED_CONFIG: &str = r#"[sweep]
mode = "dispatch"

[labels]
primary = ["gpu-run-strict", "gpu-run-complete", "gpu-run-direct"]
modifiers = ["with-every-eval", "only-the-evals", "agentic-quick"]

[labels.roles]
fail-fast = "gpu-run-strict"
full = "gpu-run-complete"
non-canary = "gpu-run-direct"
all-evals = "with-every-eval"
evals-only = "only-the-evals"
agentx-fast = "agentic-quick"
"#;

/// A label's name in the world: the default, or its rename.
fn name(renamed: bool, default: &str) -> String {
    if !renamed {
        return default.to_owned();
    }
    RENAMES
        .iter()
        .find(|(d, _)| *d == default)
        .map_or(default, |(_, r)| r)
        .to_owned()
}

/// Back to the default names, and without what legitimately differs
/// between the runs: sweep ids hash the label, matrix tokens are random.
fn normalize(text: &str) -> String {
    let mut out = text.to_owned();
    for (default, renamed) in RENAMES {
        out = out.replace(renamed, default);
    }
    let ids = regex::Regex::new(r"sg-\d+-[0-9a-f]+-[0-9a-f]{8}").unwrap();
    let tokens = regex::Regex::new(r"token=[0-9a-f]+").unwrap();
    let out = ids.replace_all(&out, "SWEEP");
    tokens.replace_all(&out, "token=TOKEN").into_owned()
}

/// Commits by order of appearance: the configuration file is part of the
/// default branch, so every commit id differs between the runs.
fn number_commits(writes: &mut [String]) {
    let full = regex::Regex::new(r"\b[0-9a-f]{40}\b").unwrap();
    let mut seen: Vec<String> = Vec::new();
    for w in writes.iter() {
        for m in full.find_iter(w) {
            if !seen.iter().any(|s| s == m.as_str()) {
                seen.push(m.as_str().to_owned());
            }
        }
    }
    for w in writes.iter_mut() {
        for (n, sha) in seen.iter().enumerate() {
            // The full id first, then the short forms comments use.
            for len in [40, 12, 10, 8, 7] {
                *w = w.replace(&sha[..len], &format!("COMMIT{n}"));
            }
        }
    }
}

/// Runs the transcript; every write request sweepgate sent to GitHub.
async fn transcript(renamed: bool) -> Vec<String> {
    let config = if renamed {
        RENAMED_CONFIG
    } else {
        "[sweep]\nmode = \"dispatch\"\n"
    };
    let mut w = dispatch_world_with(DISPATCH_ONLY, "https://gate.example.com", config).await;
    let label = |d: &str| name(renamed, d);
    let pr = w.open_pr("dsv4-h200", &[changelog_append("Retune TP8")], "vendor-dev");
    w.deliver().await;
    // Fail-fast with the canary; then no canary; then evals only; then a
    // modifier without a primary label.
    pr.add_label(&label("full-sweep-fail-fast"), "maint")
        .unwrap();
    w.deliver().await;
    pr.remove_label(&label("full-sweep-fail-fast"), "maint")
        .unwrap();
    pr.add_label(&label("non-canary-full-sweep-enabled"), "maint")
        .unwrap();
    w.deliver().await;
    pr.add_label(&label("evals-only"), "maint").unwrap();
    w.deliver().await;
    pr.remove_label(&label("non-canary-full-sweep-enabled"), "maint")
        .unwrap();
    w.deliver().await;
    let dispatches = w.sandbox.workflow_dispatches();
    assert_eq!(dispatches.len(), 3, "renamed: {renamed}");
    let mut writes: Vec<String> = w
        .sandbox
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .map(|r| {
            let body = r.body.map(|b| b.to_string()).unwrap_or_default();
            normalize(&format!("{} {} {body}", r.method, r.path))
        })
        .collect();
    number_commits(&mut writes);
    w.take_comments(pr.number);
    w.finish(&[pr.number]).await;
    writes
}

#[tokio::test]
async fn renaming_every_label_in_the_config_changes_no_behaviour() {
    let default = transcript(false).await;
    let renamed = transcript(true).await;
    // The run says what each role asked for.
    let inputs: Vec<&String> = default
        .iter()
        .filter(|w| w.contains("/dispatches"))
        .collect();
    assert_eq!(inputs.len(), 3, "{inputs:#?}");
    assert!(
        inputs[0].contains(r#""canary":"true""#) && inputs[0].contains(r#""fail-fast":"true""#)
    );
    assert!(
        inputs[1].contains(r#""canary":"false""#) && inputs[1].contains(r#""fail-fast":"false""#)
    );
    assert!(
        inputs[2].contains(r#""modifiers":"evals-only""#),
        "{}",
        inputs[2]
    );
    assert_eq!(default.len(), renamed.len());
    for (d, r) in default.iter().zip(&renamed) {
        assert_eq!(d, r);
    }
}
