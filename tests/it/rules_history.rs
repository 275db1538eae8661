//! The rules judged on the real history (`tests/data/history/
//! inferencex-history.bundle`, SOURCE.md there): each case is a merged pull
//! request replayed as a PR (base = the commit's parent), run through the
//! `sweepgate` binary on a bare clone, and cites the commit and the
//! file:line the finding or row is about (issue 17 item 11). These recipes
//! ran on GPUs and published results: where a rule called them broken, the
//! rule was wrong.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

fn bundle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/history/inferencex-history.bundle")
}

/// One bare clone per test process (a bare clone: the CLI reads objects,
/// never a worktree).
pub(crate) fn repo() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.git");
        let ok = Command::new("git")
            .args(["clone", "-q", "--bare"])
            .arg(bundle())
            .arg(&path)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git clone of the history bundle");
        (dir, path)
    })
    .1
}

fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_sweepgate"))
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "sweepgate {args:?} exited {code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "sweepgate {args:?}: {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Lint findings of the commit replayed as PR `pr`.
fn lint(commit: &str, pr: &str) -> Vec<Value> {
    let repo = repo().to_string_lossy().into_owned();
    let base = format!("{commit}^");
    let v = run(&[
        "lint", "--repo", &repo, "--base", &base, "--head", commit, "--pr", pr, "--format", "json",
    ]);
    v["findings"].as_array().cloned().unwrap_or_default()
}

/// `(outcome, reason)` of check `n` on the commit replayed as a PR.
fn row(commit: &str, n: u64) -> (String, String) {
    let repo = repo().to_string_lossy().into_owned();
    let base = format!("{commit}^");
    let v = run(&[
        "check", "--repo", &repo, "--base", &base, "--head", commit, "--format", "json",
    ]);
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    let r = rows
        .iter()
        .find(|r| r["number"].as_u64() == Some(n))
        .unwrap_or_else(|| panic!("no row {n}: {v}"));
    (
        r["outcome"].as_str().unwrap_or("").to_owned(),
        r["reason"].as_str().unwrap_or("").to_owned(),
    )
}

fn findings<'a>(fs: &'a [Value], rule: &str, file: &str) -> Vec<&'a Value> {
    fs.iter()
        .filter(|f| f["rule"] == rule && f["file"].as_str().is_some_and(|p| p.ends_with(file)))
        .collect()
}

fn errors(fs: &[Value], rule: &str) -> Vec<String> {
    fs.iter()
        .filter(|f| f["rule"] == rule && f["severity"] == "error")
        .map(|f| format!("{}:{} {}", f["file"], f["line"], f["message"]))
        .collect()
}

/// #2663 (`37d84cf`): vLLM recipes with `all2all-backend:
/// flashinfer_nvlink_one_sided` (`vllm/deepseek-v4/8k1k/disagg-gb300-1p6d-
/// dep4-tp4.yaml:104`) and `attention-backend: TOKENSPEED_MLA`
/// (`vllm/kimi-k3/agentic/agg-gb300-dcp8-dspark7-maxseq2-mooncake-agentic.yaml:112`),
/// and SGLang recipes with `moe-a2a-backend: megamoe` on
/// `lmsysorg/sglang:v0.5.14-cu130@sha256:…`
/// (`sglang/deepseek-v4/8k1k/disagg-gb300-10p1d-dep4-dep32-18-c2500.yaml:108`):
/// every value is in the generated table of its release, or the image is a
/// nightly: no L30 error.
#[test]
fn l30_judges_only_against_generated_tables_2663() {
    let fs = lint("37d84cfbde54056285db91b5c08ddcdf30c87fbf", "2663");
    assert_eq!(errors(&fs, "L30"), Vec::<String>::new());
    assert!(findings(&fs, "L30", "disagg-gb300-10p1d-dep4-dep32-18-c2500.yaml").is_empty());
}

/// #2707 (`2fbaba1`): `--moe-backend deep_gemm_amxf4_mega_moe` on the
/// nightly `vllm/vllm-openai:nightly-dev-x86_64-cu13.0.1-426e59f`
/// (`benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh:222`): a dev
/// build's options cannot be checked, so info at most, never "fails at
/// startup".
#[test]
fn l30_unreleased_images_give_info_2707() {
    let fs = lint("2fbaba18b7e6045c1e521ae3046d1f4bbcb59bc7", "2707");
    let l30 = findings(&fs, "L30", "agentic/dsv4_fp4_b200_vllm_mtp.sh");
    assert!(!l30.is_empty(), "{fs:?}");
    for f in l30 {
        assert_eq!(f["severity"], "info", "{f}");
        assert!(!f["message"].as_str().unwrap().contains("fails at startup"));
    }
}

/// #2428 (`26b2ac6`), `perf-changelog.yaml:5514`: "Image bumped from
/// lmsysorg/sglang:v0.5.15.post1-cu130 (the STP entry) to
/// lmsysorg/sglang:v0.5.16-cu130." The full stop is not part of the tag,
/// and the image it replaced is context.
#[test]
fn l17_sentence_full_stop_is_not_part_of_the_tag_2428() {
    let fs = lint("26b2ac6eeb6745fc610b32e333e23fa6f8281c11", "2428");
    let l17: Vec<String> = errors(&fs, "L17")
        .into_iter()
        .filter(|m| m.contains("image"))
        .collect();
    assert_eq!(l17, Vec::<String>::new());
}

/// #2428 (`26b2ac6`): `sed -i … "$SGLANG_MULTI_TOKENIZER"` rewrites the
/// SGLang source `/sgl-workspace/sglang/python/sglang/srt/managers/
/// multi_tokenizer_mixin.py` through a variable
/// (`benchmarks/single_node/agentic/qwen3.5_fp8_h200_mtp.sh:133`). Lint L23
/// and Check 10 use one detection and agree.
#[test]
fn check10_and_l23_agree_on_sed_through_a_variable_2428() {
    let c = "26b2ac6eeb6745fc610b32e333e23fa6f8281c11";
    let fs = lint(c, "2428");
    let l23 = findings(&fs, "L23", "agentic/qwen3.5_fp8_h200_mtp.sh");
    assert!(
        l23.iter()
            .any(|f| f["line"] == 133 && f["severity"] == "error"),
        "{fs:?}"
    );
    let (outcome, reason) = row(c, 10);
    assert_eq!(outcome, "fail", "{reason}");
    assert!(
        reason.starts_with(
            "benchmarks/single_node/agentic/qwen3.5_fp8_h200_mtp.sh:133 patches the serving stack"
        ),
        "{reason}"
    );
}

/// #2621 (`5f3e12f`): `SPEC_CONFIG="{\"method\": \"mtp\", …,
/// \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\":
/// 2.49}"` in one arm of an `if`, passed as `--speculative-config
/// "$SPEC_CONFIG"` (`benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh:258`).
#[test]
fn check11_reads_escaped_json_in_a_shell_variable_2621() {
    let (outcome, reason) = row("5f3e12f49d840398a204224e9e5798dcc498025b", 11);
    assert_eq!(outcome, "pass", "{reason}");
    assert!(
        reason.contains("pins 2.49 = dsv4_mtp.yaml@thinking_on/K=3=2.49"),
        "{reason}"
    );
}

/// #2508 (`a965c94`): a DSpark `--speculative-config` with
/// `"num_speculative_tokens":$SPEC_NUM_TOKENS` (2) and the probabilistic
/// draft sampling (`benchmarks/single_node/agentic/kimik3_fp4_mi355x_mtp.sh:170`).
#[test]
fn check11_reads_the_dspark_draft_length_2508() {
    let (outcome, reason) = row("a965c94b517cd2dfb2d216b127b6e6b249669e68", 11);
    assert_eq!(outcome, "pass", "{reason}");
    assert!(reason.contains("K=2=2.51"), "{reason}");
}

/// #2685 (`ac37c2c`): a TRT-LLM key declared `spec-decoding: mtp` that
/// serves an EAGLE3-GQA head (`decoding_type: Eagle3`, `speculative_model:
/// $DRAFT_MODEL_PATH` → `…/MiniMax-M3-EAGLE3-GQA`,
/// `benchmarks/single_node/agentic/minimaxm3_fp4_b300_trt_mtp.sh:113`): the
/// curve is the one it serves, and no Rust debug text reaches the reason.
#[test]
fn check11_follows_the_served_draft_method_2685() {
    let (outcome, reason) = row("ac37c2cbae09e21b5fdb9b7cd002932d0c025dd6", 11);
    assert_eq!(outcome, "pass", "{reason}");
    assert!(
        reason.contains("minimaxm3_eagle3_gqa.yaml@thinking_on/K=3=2.78"),
        "{reason}"
    );
}

/// No reason of any row carries Rust debug output (`Name { field: … }`),
/// on the commits above and #2659 (`6773a26`), whose TRT key gave
/// "no golden curve (NoMethod { … })".
#[test]
fn no_rust_debug_text_in_reasons() {
    let repo = repo().to_string_lossy().into_owned();
    let debug = regex::Regex::new(r"[A-Z][A-Za-z]+ \{ [a-z_]+: ").unwrap();
    for c in [
        "6773a265ef6e1003e63a997b20c983bc3620d167",
        "ac37c2cbae09e21b5fdb9b7cd002932d0c025dd6",
        "225354debf1f61feca716454745d6e348b0b457d",
    ] {
        let base = format!("{c}^");
        let v = run(&[
            "check", "--repo", &repo, "--base", &base, "--head", c, "--format", "json",
        ]);
        for r in v["rows"].as_array().unwrap() {
            let reason = r["reason"].as_str().unwrap();
            assert!(!debug.is_match(reason), "{c} row {}: {reason}", r["number"]);
        }
    }
}

/// #2647 (`8233dad`), the append-only entry of `dsv4-fp4-b300-vllm-agentic-mtp`:
/// a local run has no GitHub check runs, and sweepgate runs the changelog
/// PR gate itself instead of answering REVIEW for it.
#[test]
fn check12_runs_the_changelog_gate_locally_2647() {
    let (outcome, reason) = row("8233dad6563dcc92228cdcd37db63e4cd4ad74a9", 12);
    assert!(!reason.contains("check runs were not provided"), "{reason}");
    assert_ne!(outcome, "n/a", "{reason}");
}
