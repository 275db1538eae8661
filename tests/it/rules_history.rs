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

/// New errors of `rule` in files ending with `file`.
fn new_errors<'a>(fs: &'a [Value], rule: &str, file: &str) -> Vec<&'a Value> {
    findings(fs, rule, file)
        .into_iter()
        .filter(|f| f["severity"] == "error" && f["baseline"] == "new")
        .collect()
}

/// The replay's record of one commit (`sweepgate replay --sample`): the
/// layout table gives the paths of its era (`.github/configs/` before
/// #1992), which the plain `lint` and `check` commands do not.
fn replayed(commit: &str) -> Value {
    let out = replay_records([commit], 1);
    serde_json::from_str(&out[0]).unwrap()
}

/// The replay's JSON lines for `commits` (the summary line last).
pub(crate) fn replay_records<'a>(
    commits: impl IntoIterator<Item = &'a str>,
    jobs: usize,
) -> Vec<String> {
    use std::io::Write;
    use sweepgate::cli::replay::{Args, Format};
    let mut list = tempfile::NamedTempFile::new().unwrap();
    for c in commits {
        writeln!(list, "{c}").unwrap();
    }
    let mut args = Args::new(repo());
    args.sample = Some(list.path().to_owned());
    args.format = Format::Json;
    args.no_times = true;
    args.jobs = jobs;
    let (lines, done) = crate::replay::replay_lines(&args);
    assert!(done.ok, "a tool crashed: {}", done.summary);
    lines
}

/// `(outcome, reason)` of check `n` in a replayed record.
fn replayed_row(rec: &Value, n: u64) -> (String, String) {
    let r = rec["check"]["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["check"].as_u64() == Some(n))
        .unwrap_or_else(|| panic!("no row {n}: {rec}"));
    (
        r["outcome"].as_str().unwrap_or("").to_owned(),
        r["detail"]["reason"].as_str().unwrap_or("").to_owned(),
    )
}

/// Lint findings of `rule` in a replayed record: `(new, severity)`.
fn replayed_lint<'a>(rec: &'a Value, rule: &str, file: &str) -> Vec<&'a Value> {
    rec["lint"]["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == rule && f["file"].as_str().is_some_and(|p| p.ends_with(file)))
        .collect()
}

/// Adjudicated precision items C06-022/025/034 (`docs/precision.md`):
/// #1568 (`765e11e`) bumps `dsv4-fp4-mi355x-sglang` from one `rocm/sgl-dev`
/// DSv4 build to another (`.github/configs/amd-master.yaml:1816`). The key
/// was off upstream on the default branch already: pre-existing for Check
/// 6 and for its lint L15 alike, and still reported as pre-existing.
#[test]
fn a_non_upstream_image_bumped_to_another_is_pre_existing_1568() {
    let rec = replayed("765e11e0c43df83e615cdc649f5db8fe1344dd45");
    let (outcome, reason) = replayed_row(&rec, 6);
    // A PASS row carries no detail in the replay record.
    assert_eq!(outcome, "pass", "{reason}");
    // The lint reads this era's entries one by one now: L15 runs on the
    // key and finds it pre-existing too.
    let l15 = replayed_lint(&rec, "L15", "amd-master.yaml");
    assert!(
        l15.iter()
            .any(|f| f["subject"] == "dsv4-fp4-mi355x-sglang" && f["new"] == false),
        "{rec}"
    );
    assert!(l15.iter().all(|f| f["new"] == false), "{l15:?}");
}

/// Blind-labelled items L15-015 and L15-018 to L15-024 (third blind
/// pass, adjudicated): #145 (`c028a3a`, "no perf changes") builds
/// `amd-master.yaml` from `dsr1-tmpl.yml` and `gptoss-tmpl.yml`, which ran
/// the same sweeps with the same ROCm images; #251 (`b1107b8`) moves the
/// multinode gb200 sweep from the scheduler workflows, image and all. The
/// images ran on the default branch before: pre-existing for Check 6 and
/// L15 alike.
#[test]
fn sweeps_moved_from_the_workflows_keep_their_images_145_251() {
    for (commit, file, key) in [
        ("c028a3a", "amd-master.yaml", "dsr1-fp8-mi300x-sglang"),
        (
            "b1107b8",
            "nvidia-master.yaml",
            "dsr1-fp8-gb200-dynamo-sglang",
        ),
    ] {
        let rec = replayed(commit);
        let (outcome, reason) = replayed_row(&rec, 6);
        assert_ne!(outcome, "fail", "{commit}: {reason}");
        let l15 = replayed_lint(&rec, "L15", file);
        assert!(
            l15.iter().any(|f| f["subject"] == key && f["new"] == false),
            "{commit}: {l15:?}"
        );
        assert!(
            l15.iter().all(|f| f["new"] == false
                || f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("lands before"))),
            "{commit}: {l15:?}"
        );
    }
}

/// An image moved off upstream is the PR's own: `0513746` (#705) adds
/// `qwen3.5-bf16-mi355x-sglang` with `rocm/sgl-dev:v0.5.8.post1-…`
/// (`.github/configs/amd-master.yaml:140`, precision item C06-002, true).
#[test]
fn an_added_non_upstream_image_stays_a_fail_705() {
    let rec = replayed("0513746");
    let (outcome, reason) = replayed_row(&rec, 6);
    assert_eq!(outcome, "fail", "{reason}");
}

/// Adjudicated item C06-003: #1800 (`4cd3407`) adds
/// `glm5-fp4-gb200-dynamo-trt-mtp` (`configs/nvidia-master.yaml:2985`)
/// beside `glm5-fp4-gb200-dynamo-trt`, which served GLM-5 on gb200 before
/// the PR: the TRT landing is not this PR's.
#[test]
fn an_added_arm_of_a_model_that_already_landed_is_no_landing_1800() {
    let (outcome, reason) = row("4cd340734699d854641427cf9603d795cea52c11", 6);
    assert_eq!(outcome, "pass", "{reason}");
    assert!(
        reason.contains("landed on gb200 before this PR"),
        "{reason}"
    );
}

/// Adjudicated items L23-011, L23-034 and C10-009 (subjects without a PR
/// number): `a694b09` swaps the `cubin_loader.py` `sed -i` for a pinned
/// flashinfer reinstall (`benchmarks/gptoss_fp4_b200_slurm.sh:27`),
/// `3fcf7b8` one flashinfer version for another
/// (`benchmarks/70b_fp4_b200_slurm.sh:28`), `75f9875` the reinstall for the
/// `sed -i` (`benchmarks/70b_fp4_b200_docker.sh:19`). The scripts modified
/// the engine before: pre-existing for L23 and Check 10 alike (Check 10
/// asks a person to confirm the old patch is sanctioned: REVIEW).
#[test]
fn a_swapped_engine_patch_is_pre_existing_a694b09_3fcf7b8_75f9875() {
    for (c, file) in [
        ("a694b09", "benchmarks/gptoss_fp4_b200_slurm.sh"),
        ("3fcf7b8", "benchmarks/70b_fp4_b200_slurm.sh"),
        ("75f9875", "benchmarks/70b_fp4_b200_docker.sh"),
    ] {
        let rec = replayed(c);
        let l23 = replayed_lint(&rec, "L23", file);
        assert!(!l23.is_empty(), "{c}: {rec}");
        assert!(l23.iter().all(|f| f["new"] == false), "{c}: {l23:?}");
        // The row may FAIL for another script of the same commit
        // (`3fcf7b8` also uncomments a reinstall in
        // `70b_fp8_b200_slurm.sh`, a true positive), never for this one.
        let (outcome, reason) = replayed_row(&rec, 10);
        assert!(
            !(outcome == "fail" && reason.starts_with(file)),
            "{c}: {outcome} {reason}"
        );
    }
}

/// A patch beside none at base is the PR's own: `26b2ac6` (#2428) adds a
/// `sed -i` to a script that patched nothing (the case above), and stays an
/// L23 error.
#[test]
fn an_added_engine_patch_stays_new_2428() {
    let fs = lint("26b2ac6eeb6745fc610b32e333e23fa6f8281c11", "2428");
    assert_eq!(
        new_errors(&fs, "L23", "agentic/qwen3.5_fp8_h200_mtp.sh").len(),
        1,
        "{fs:?}"
    );
}

/// Adjudicated item L23-031: #1188 (`fa882f8`) adds a script whose python
/// heredoc rewrites installed distributions' metadata
/// (`benchmarks/single_node/dsv4_fp8_mi355x_vllm.sh:51`): still the PR's
/// engine modification, now named as an inline program instead of the
/// heredoc's whole source.
#[test]
fn an_inline_program_is_named_not_quoted_1188() {
    let fs = lint("fa882f87256f9b02429047990b1c12f2abb2b05d", "1188");
    let l23: Vec<_> = new_errors(&fs, "L23", "dsv4_fp8_mi355x_vllm.sh")
        .into_iter()
        .filter(|f| f["line"] == 51)
        .collect();
    assert_eq!(l23.len(), 1, "{fs:?}");
    assert_eq!(l23[0]["subject"], "inline program");
    assert!(
        l23[0]["message"].as_str().is_some_and(|m| m.len() < 200),
        "{:?}",
        l23[0]["message"]
    );
}

/// Adjudicated item L12-016: #1571 (`61e57fb`) keeps the disabled
/// `lmcache-mp` arm, whose `agentic_pip_install … lmcache`
/// (`benchmarks/single_node/agentic/dsv4_fp4_b200_vllm.sh:152`) follows an
/// unconditional `exit 1` (`:140`): it never runs.
#[test]
fn an_install_after_exit_never_runs_1571() {
    let fs = lint("61e57fbc8b00e3fe27b853318787ad1ab9581205", "1571");
    let l12: Vec<_> = findings(&fs, "L12", "agentic/dsv4_fp4_b200_vllm.sh")
        .into_iter()
        .filter(|f| f["line"] == 152)
        .collect();
    assert!(l12.is_empty(), "{l12:?}");
}

/// Check 7 / L18 (docs/precision.md "Fourth pass"): `e8c02d7` (#2438)
/// changes `kimik2.6-fp4-b200-dynamo-vllm` (`configs/nvidia-master.yaml`),
/// whose prefix `kimik2.6` was unregistered in MODELS.md on main already:
/// `d97170a` (#2360) added the key so (precision item C07-008, true). A PR
/// is judged on what it changes: pre-existing for L18 and Check 7 alike,
/// while the commit that added the key still fails both.
#[test]
fn an_unregistered_prefix_kept_is_pre_existing_e8c02d7() {
    let rec = replayed("e8c02d710d42181c6e14acb3481117405ec83047");
    let (outcome, reason) = replayed_row(&rec, 7);
    assert_ne!(outcome, "fail", "{reason}");
    let l18 = replayed_lint(&rec, "L18", "nvidia-master.yaml");
    assert!(!l18.is_empty(), "{rec}");
    assert!(l18.iter().all(|f| f["new"] == false), "{l18:?}");
    let (outcome, reason) = row("e8c02d710d42181c6e14acb3481117405ec83047", 7);
    assert_eq!(outcome, "pass", "{reason}");
    assert!(
        reason.contains(
            "kimik2.6-fp4-b200-dynamo-vllm keeps prefix kimik2.6, which is not in the MODELS.md support matrix on the default branch either (pre-existing)"
        ),
        "{reason}"
    );
    let rec = replayed("d97170ad4728d4c73cb9eb4f3f26c66e6c408606");
    let (outcome, reason) = replayed_row(&rec, 7);
    assert_eq!(outcome, "fail", "{reason}");
    assert!(
        replayed_lint(&rec, "L18", "nvidia-master.yaml")
            .iter()
            .any(|f| f["new"] == true && f["severity"] == "error"),
        "{rec}"
    );
}

/// Check 15 / L17: `47e7ab0` (#2328) adds `minimaxm3-fp4-b300-vllm-agentic-mtp`
/// with `vllm/vllm-openai:nightly-5e35a6f…` while its changelog entry
/// (`perf-changelog.yaml:5460`) names `nightly-387189c…`. A nightly on
/// either side is at most a warning for L17, as engine knowledge gives
/// nightly and dev images; Check 15 keeps changelog prose REVIEW. Neither
/// blocks, so they agree (the true positive this loses: precision items
/// L17-002 and 2:L17-001).
#[test]
fn a_nightly_named_in_prose_warns_2328() {
    let rec = replayed("47e7ab0d3ec670c36a3481e6bff1c752b309319e");
    let l17 = replayed_lint(&rec, "L17", "perf-changelog.yaml");
    let image: Vec<_> = l17
        .iter()
        .filter(|f| {
            f["message"]
                .as_str()
                .is_some_and(|m| m.contains("nightly-387189c"))
        })
        .collect();
    assert_eq!(image.len(), 1, "{l17:?}");
    assert_eq!(image[0]["severity"], "warning", "{image:?}");
    assert_eq!(image[0]["new"], true, "{image:?}");
    let (outcome, reason) = replayed_row(&rec, 15);
    assert_ne!(outcome, "fail", "{reason}");
}

/// Check 6 / L15 in the `.github/configs/` era: the lint reads each entry on
/// its own, so one entry of an older schema no longer hides the others.
/// `c028a3a` (#145) adds `dsr1-fp4-mi355x-sglang` with a `rocm/` image
/// (`.github/configs/amd-master.yaml:2`); before, the lint could not read
/// that file (`L00`) and L15 never ran on the key. Now L15 reads it, and
/// finds the image pre-existing: the base's `dsr1-tmpl.yml` ran it (the
/// third blind pass, `sweeps_moved_from_the_workflows_keep_their_images_145_251`).
#[test]
fn an_older_schema_entry_does_not_hide_the_others_145() {
    let rec = replayed("c028a3ac13f88671a38ad2dded20595eb6dc6acf");
    let l15 = replayed_lint(&rec, "L15", "amd-master.yaml");
    assert!(
        l15.iter().any(|f| f["new"] == false
            && f["severity"] == "error"
            && f["subject"] == "dsr1-fp4-mi355x-sglang"),
        "{rec}"
    );
}

/// Check 6(b) in L15, through the one function both use
/// (`checks::engine_first`): `1371ca5` (#651) adds `dsr1-fp8-h100-dynamo-trt`
/// (`.github/configs/nvidia-master.yaml:1574`, precision item C06-001, true)
/// with no vLLM/SGLang DeepSeek-R1 key on h100. Both FAIL it as the PR's.
#[test]
fn a_framework_landing_first_fails_check_6_and_l15_651() {
    let rec = replayed("1371ca5bca4f311d7e1a5e29c73941b8a40da6a4");
    let (outcome, reason) = replayed_row(&rec, 6);
    assert_eq!(outcome, "fail", "{reason}");
    assert!(reason.contains("lands before any vLLM/SGLang"), "{reason}");
    let l15 = replayed_lint(&rec, "L15", "nvidia-master.yaml");
    assert!(
        l15.iter().any(|f| f["new"] == true
            && f["severity"] == "error"
            && f["subject"] == "dsr1-fp8-h100-dynamo-trt"),
        "{rec}"
    );
}
