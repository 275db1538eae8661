//! The demo world: a small copy of the benchmark repository and the
//! scripted pull request's facts, shared by `sweepgate demo`, the tests and
//! the reliability runs.
use crate::{Change, Sandbox, SandboxError};

/// The demo repository's owner and name.
pub const OWNER: &str = "InferenceX";
pub const REPO: &str = "InferenceX";

/// The demo repository's default branch: excerpts of the real benchmark
/// repository (Apache-2.0), embedded so the demo needs nothing on disk.
pub(crate) const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("demo/README.md")),
    ("LICENSE", include_str!("demo/LICENSE")),
    ("MODELS.md", include_str!("demo/MODELS.md")),
    (
        ".github/CODEOWNERS",
        include_str!("demo/.github/CODEOWNERS"),
    ),
    (
        ".github/sweepgate.toml",
        include_str!("demo/.github/sweepgate.toml"),
    ),
    (
        ".github/workflows/run-sweep.yml",
        include_str!("demo/.github/workflows/run-sweep.yml"),
    ),
    (
        "configs/nvidia-master.yaml",
        include_str!("demo/configs/nvidia-master.yaml"),
    ),
    (
        "configs/amd-master.yaml",
        include_str!("demo/configs/amd-master.yaml"),
    ),
    (
        "configs/runners.yaml",
        include_str!("demo/configs/runners.yaml"),
    ),
    (
        "perf-changelog.yaml",
        include_str!("demo/perf-changelog.yaml"),
    ),
    (
        "docs/PR_REVIEW_CHECKLIST.md",
        include_str!("demo/docs/PR_REVIEW_CHECKLIST.md"),
    ),
    (
        "runners/launch_h200-cw.sh",
        include_str!("demo/runners/launch_h200-cw.sh"),
    ),
    (
        "runners/launch_h200-nb.sh",
        include_str!("demo/runners/launch_h200-nb.sh"),
    ),
    (
        "runners/launch_h200-dgxc-slurm.sh",
        include_str!("demo/runners/launch_h200-dgxc-slurm.sh"),
    ),
    (
        "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh",
        include_str!("demo/benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh"),
    ),
];

/// Where `/use` stages a run's results.
pub(crate) const RESULTS_OWNER: &str = "SemiAnalysisAI";
pub(crate) const RESULTS_REPO: &str = "InferenceX-app";

/// Seeds the demo world: the benchmark repository (dispatch mode, with a
/// sweep workflow that takes `workflow_dispatch` only and names its runs by
/// sweep id) and the results repository, both with the app installed.
pub fn seed(s: &Sandbox) -> Result<(), SandboxError> {
    s.add_org(OWNER);
    s.add_repo(
        OWNER,
        REPO,
        "main",
        FILES.iter().map(|(p, c)| (*p, c.as_bytes())),
    )?;
    s.add_workflow(OWNER, REPO, "run-sweep.yml", "Run sweep")?;
    s.configure_workflow(
        OWNER,
        REPO,
        "run-sweep.yml",
        Some("Sweep ${{ inputs.sweep-id }}"),
        true,
    )?;
    s.install_app(OWNER);
    s.add_org(RESULTS_OWNER);
    s.add_repo(RESULTS_OWNER, RESULTS_REPO, "main", [("README.md", "app")])?;
    s.install_app(RESULTS_OWNER);
    Ok(())
}

/// The demo PR's change: a TP4 point for dsv4-fp8-h200-vllm and its
/// changelog entry.
pub fn tp4_change() -> Vec<Change> {
    let master = format!(
        "{}\n{}",
        include_str!("demo/configs/nvidia-master.yaml").trim_end(),
        "      - { tp: 4, ep: 1, dp-attn: false, conc-start: 1, conc-end: 64 }\n"
    );
    let changelog = format!(
        "{}\n{}",
        include_str!("demo/perf-changelog.yaml").trim_end(),
        "\n- config-keys:\n    - dsv4-fp8-h200-vllm\n  description:\n    - \"Add a TP4 point\"\n  pr-link: https://github.com/InferenceX/InferenceX/pull/1\n"
    );
    vec![
        Change::write("configs/nvidia-master.yaml", master),
        Change::write("perf-changelog.yaml", changelog),
    ]
}

/// The CODEOWNER who signs in the demo.
pub const SIGNER: &str = "ankur-singh";

/// The checklist template of the demo repository, every box ticked.
pub fn signoff() -> String {
    let doc = include_str!("demo/docs/PR_REVIEW_CHECKLIST.md");
    let template = doc
        .split_once("## Template\n```\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map_or("", |(t, _)| t);
    template
        .replace("- [ ]", "- [x]")
        .replace("FILL_IN_GITHUB_USERNAME", SIGNER)
}

/// The run's `agg_eval_all.json`: gsm8k on the TP8 curve.
pub fn eval_rows() -> String {
    serde_json::json!([{
        "model_prefix": "dsv4",
        "model": "deepseek-ai/DeepSeek-V4-Pro",
        "hw": "h200-cw",
        "framework": "vllm",
        "precision": "fp8",
        "image": "vllm/vllm-openai:v0.25.1",
        "tp": 8,
        "ep": 1,
        "dp_attention": false,
        "conc": 32,
        "task": "gsm8k",
        "em_strict": 0.962,
        "score": 0.962,
        "score_name": "em_strict",
        "n_eff": 1319
    }])
    .to_string()
}

/// The run's `agg_bmk.json`: a TP4 and a TP8 curve over concurrency, so the
/// frontier has dominated points (the format of
/// `fixtures/inferencex/docs/results-and-ingestion.md`).
pub fn bench_rows() -> String {
    let mut rows = Vec::new();
    for (tp, conc, p90, tput) in [
        (4, 1, 9.8, 310.0),
        (4, 8, 12.5, 1480.0),
        (4, 32, 19.0, 2900.0),
        (4, 64, 31.0, 3350.0),
        (8, 1, 7.9, 240.0),
        (8, 8, 10.1, 1210.0),
        (8, 32, 16.2, 2650.0),
        (8, 64, 24.0, 3600.0),
    ] {
        rows.push(serde_json::json!({
            "model": "deepseek-ai/DeepSeek-V4-Pro",
            "model_prefix": "dsv4",
            "framework": "vllm",
            "precision": "fp8",
            "hw": "h200-cw",
            "image": "vllm/vllm-openai:v0.25.1",
            "isl": 8192,
            "osl": 1024,
            "tp": tp,
            "ep": 1,
            "dp_attention": false,
            "conc": conc,
            "p90_e2el": p90,
            "tput_per_gpu": tput,
            "num_requests_successful": 100,
        }));
    }
    serde_json::Value::Array(rows).to_string()
}
