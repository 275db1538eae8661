//! Benchmark-script facts on realistic scripts modelled on the seeds and on
//! the conventions of docs/rules.md §1.9 and §3.

use sweepgate_core::recipe::script::{
    ArmKind, ClientKind, Engine, EnvKind, FlagForm, InstallTool, RequirementKind, RewriteKind,
    exclusive, parse_script,
};

/// Seed 000 (`benchmarks/single_node/dsr1_fp4_b300_vllm.sh`): an unpinned
/// `fastokens` install before serving, the unknown TOKENSPEED_MLA backend and
/// the hyphenated dotted flag `--attention-config.mla_prefill_backend`.
const SEED_000: &str = r#"#!/usr/bin/env bash

source "$(dirname "$0")/../benchmark_lib.sh"

check_env_vars \
    MODEL \
    TP \
    EP_SIZE \
    CONC \
    ISL \
    OSL \
    RANDOM_RANGE_RATIO \
    RESULT_FILENAME

if [[ -n "$SLURM_JOB_ID" ]]; then
  echo "JOB $SLURM_JOB_ID running on $SLURMD_NODENAME"
fi

nvidia-smi

# Model loading can exceed the default timeout for the large FP4 checkpoint.
export VLLM_ENGINE_READY_TIMEOUT_S=3600

hf download "$MODEL"
SERVER_LOG=/workspace/server.log
PORT=${PORT:-8888}

# The pre-v0.2 fastokens patching API integrated by vLLM v0.21.0.
pip install -q 'fastokens>=0.1.1,<0.2.0'

EVAL_CONTEXT_ARGS=""
if [ "${EVAL_ONLY}" = "true" ]; then
    setup_eval_context
    EVAL_CONTEXT_ARGS="--max-model-len $EVAL_MAX_MODEL_LEN"
fi

start_gpu_monitor

set -x
vllm serve $MODEL --host 0.0.0.0 --port $PORT \
--trust-remote-code \
--tensor-parallel-size=$TP \
--kv-cache-dtype fp8 \
--attention-backend TOKENSPEED_MLA \
--attention-config.mla_prefill_backend TOKENSPEED_MLA \
--tokenizer-mode fastokens \
--max-num-seqs 512 \
$EVAL_CONTEXT_ARGS > $SERVER_LOG 2>&1 &

SERVER_PID=$!

wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG" --server-pid "$SERVER_PID"

run_benchmark_serving \
    --model "$MODEL" \
    --port "$PORT" \
    --backend vllm \
    --input-len "$ISL" \
    --output-len "$OSL" \
    --random-range-ratio "$RANDOM_RANGE_RATIO" \
    --num-prompts "$((CONC * 10))" \
    --max-concurrency "$CONC" \
    --result-filename "$RESULT_FILENAME" \
    --result-dir /workspace/ \
    --trust-remote-code

if [ "${RUN_EVAL}" = "true" ]; then
    run_eval --framework lm-eval --port "$PORT"
    append_lm_eval_summary
fi

stop_gpu_monitor
set +x
"#;

#[test]
fn seed_000_install_backend_and_dotted_flag() {
    let f = parse_script(
        "benchmarks/single_node/dsr1_fp4_b300_vllm.sh",
        SEED_000.as_bytes(),
    )
    .unwrap();
    assert!(f.syntax_errors.is_empty(), "{:?}", f.syntax_errors);
    assert!(f.is_recipe());
    assert!(f.is_required("TP") && f.is_required("RESULT_FILENAME"));

    // The unpinned install runs before the server starts (L12 error input).
    assert_eq!(f.installs.len(), 1);
    let inst = &f.installs[0];
    assert_eq!(inst.tool, InstallTool::Pip);
    assert_eq!(inst.line, 29);
    assert_eq!(inst.options[0].name, "-q");
    let req = &inst.requirements[0];
    assert_eq!(req.spec, "fastokens>=0.1.1,<0.2.0");
    assert_eq!(req.name.as_deref(), Some("fastokens"));
    assert_eq!(req.kind, RequirementKind::Unpinned);
    assert!(!req.is_pinned());

    assert_eq!(f.servers.len(), 1);
    let s = &f.servers[0];
    assert_eq!(s.engine, Engine::Vllm);
    assert_eq!(s.entry, "vllm serve");
    assert_eq!((s.line, s.end_line), (40, 48));
    assert!(inst.line < f.first_server_line().unwrap());
    let backend = s.flag("--attention-backend").unwrap();
    assert_eq!(
        (backend.value_text(), backend.line),
        (Some("TOKENSPEED_MLA"), 44)
    );
    let dotted = s.flag("--attention-config.mla_prefill_backend").unwrap();
    assert_eq!(
        dotted.dotted(),
        Some(("attention-config", "mla_prefill_backend"))
    );
    assert_eq!(
        (dotted.value_text(), dotted.line),
        (Some("TOKENSPEED_MLA"), 45)
    );
    assert_eq!(
        s.flag("--tensor-parallel-size").unwrap().form,
        FlagForm::Equals
    );
    // `$EVAL_CONTEXT_ARGS` is spliced, not taken as the value of `--max-num-seqs`.
    assert_eq!(s.flag("--max-num-seqs").unwrap().value_text(), Some("512"));
    assert!(s.splices("EVAL_CONTEXT_ARGS"));
    let resolved = f.resolved_server_flags(s);
    let via = resolved
        .iter()
        .find(|r| r.flag.name == "--max-model-len")
        .unwrap();
    assert_eq!(via.via, vec!["EVAL_CONTEXT_ARGS".to_string()]);
    assert_eq!(via.branch[0].condition, "[ \"${EVAL_ONLY}\" = \"true\" ]");

    let export = f
        .env
        .iter()
        .find(|e| e.name == "VLLM_ENGINE_READY_TIMEOUT_S")
        .unwrap();
    assert_eq!((export.kind.clone(), export.line), (EnvKind::Export, 22));
    assert_eq!(export.value.as_ref().unwrap().text, "3600");

    let bench = f
        .clients
        .iter()
        .find(|c| c.kind == ClientKind::BenchmarkServing)
        .unwrap();
    assert_eq!(bench.line, 54);
    assert_eq!(bench.flag("--backend").unwrap().value_text(), Some("vllm"));
    assert_eq!(
        bench.flag("--result-dir").unwrap().value_text(),
        Some("/workspace/")
    );
    assert!(bench.flag("--trust-remote-code").is_some());
    assert!(bench.flag("--use-chat-template").is_none());
    let setup = f
        .clients
        .iter()
        .find(|c| c.kind == ClientKind::SetupEvalContext)
        .unwrap();
    assert_eq!(setup.branch[0].kind, ArmKind::If);
    assert!(
        f.clients
            .iter()
            .any(|c| c.kind == ClientKind::Eval && c.line == 68)
    );
}

/// Seed 003 (`benchmarks/single_node/dsv4_fp4_b200_mtp.sh`): `sglang serve`
/// with a hard-coded `--tp 8` while `TP` is required, the abbreviated
/// `--speculative-algo`, and `EVAL_CONTEXT_ARGS` computed but never passed.
const SEED_003: &str = r#"#!/usr/bin/env bash

source "$(dirname "$0")/../benchmark_lib.sh"

check_env_vars \
    MODEL \
    TP \
    CONC \
    ISL \
    OSL \
    RANDOM_RANGE_RATIO \
    RESULT_FILENAME

if [[ -n "$SLURM_JOB_ID" ]]; then
  echo "JOB $SLURM_JOB_ID running on $SLURMD_NODENAME"
fi

# The image bakes in a 4-GPU mask; clear it so TP=8 can bind to all ranks.
unset CUDA_VISIBLE_DEVICES

hf download "$MODEL"
SERVER_LOG=/workspace/server.log
PORT=${PORT:-8888}

echo "TP: $TP, CONC: $CONC, ISL: $ISL, OSL: $OSL"

export SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2=1
export SGLANG_OPT_USE_TOPK_V2=1

EVAL_CONTEXT_ARGS=""
if [ "${EVAL_ONLY}" = "true" ]; then
    setup_eval_context
    EVAL_CONTEXT_ARGS="--context-length $EVAL_MAX_MODEL_LEN"
fi

start_gpu_monitor

set -x
sglang serve \
  --model-path $MODEL \
  --trust-remote-code \
  --tp 8 \
  --moe-runner-backend flashinfer_mxfp4 \
  --speculative-algo EAGLE \
  --speculative-num-steps 3 \
  --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 4 \
  --chunked-prefill-size 4096 \
  --disable-flashinfer-autotune \
  --host 0.0.0.0 \
  --port $PORT > $SERVER_LOG 2>&1 &

SERVER_PID=$!

wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG" --server-pid "$SERVER_PID"

run_benchmark_serving \
    --model "$MODEL" \
    --port "$PORT" \
    --backend vllm \
    --input-len "$ISL" \
    --output-len "$OSL" \
    --random-range-ratio "$RANDOM_RANGE_RATIO" \
    --num-prompts "$((CONC * 10))" \
    --max-concurrency "$CONC" \
    --result-filename "$RESULT_FILENAME" \
    --result-dir /workspace/ \
    --use-chat-template

if [ "${RUN_EVAL}" = "true" ]; then
    run_eval --framework lm-eval --port "$PORT"
    append_lm_eval_summary
fi

stop_gpu_monitor
set +x
"#;

#[test]
fn seed_003_sglang_serve_hard_coded_tp_and_unused_eval_args() {
    let f = parse_script(
        "benchmarks/single_node/dsv4_fp4_b200_mtp.sh",
        SEED_003.as_bytes(),
    )
    .unwrap();
    assert!(f.syntax_errors.is_empty());
    let s = &f.servers[0];
    assert_eq!(s.engine, Engine::Sglang);
    assert_eq!(s.entry, "sglang serve");
    let tp = s.flag("--tp").unwrap();
    assert_eq!((tp.value_text(), tp.line), (Some("8"), 42));
    assert!(tp.value.as_ref().unwrap().is_number() && tp.value.as_ref().unwrap().is_literal());
    assert!(f.is_required("TP"));
    let algo = s.flag("--speculative-algo").unwrap();
    assert_eq!((algo.value_text(), algo.line), (Some("EAGLE"), 44));
    assert_eq!(
        s.flag("--speculative-num-steps").unwrap().value_text(),
        Some("3")
    );
    // L07 input: computed under EVAL_ONLY, never reaches the server.
    assert!(!s.splices("EVAL_CONTEXT_ARGS"));
    assert!(!f.is_expanded("EVAL_CONTEXT_ARGS"));
    let unused: Vec<&str> = f
        .unused_assignments()
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert!(unused.contains(&"EVAL_CONTEXT_ARGS"), "{unused:?}");
    assert!(!unused.contains(&"SERVER_LOG"));
    assert_eq!(f.unsets[0].name, "CUDA_VISIBLE_DEVICES");
    let bench = &f
        .clients
        .iter()
        .find(|c| c.kind == ClientKind::BenchmarkServing)
        .unwrap();
    assert!(bench.flag("--use-chat-template").is_some());
}

/// Seed 001 (`benchmarks/single_node/dsv4_fp4_b300_vllm_mtp.sh`): the
/// DP-attention split (`--tensor-parallel-size 1 --data-parallel-size "$TP"`)
/// and `--dsv4` on the client.
const SEED_001: &str = r#"#!/usr/bin/env bash
source "$(dirname "$0")/../benchmark_lib.sh"

check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN RANDOM_RANGE_RATIO RESULT_FILENAME DP_ATTENTION

SPEC_TOKENS=${SPEC_TOKENS:-1}
SPECULATIVE_CONFIG="{\"method\":\"mtp\",\"num_speculative_tokens\":${SPEC_TOKENS}}"

if [ "${DP_ATTENTION}" = "true" ]; then
  PARALLEL_ARGS="--tensor-parallel-size 1 --data-parallel-size $TP --enable-expert-parallel"
else
  PARALLEL_ARGS="--tensor-parallel-size $TP"
fi

SERVER_LOG=/workspace/server.log
PORT=${PORT:-8888}

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  $PARALLEL_ARGS \
  --attention_config.use_fp4_indexer_cache True \
  --speculative-config "$SPECULATIVE_CONFIG" \
  --max-model-len "$MAX_MODEL_LEN" \
  --no-enable-prefix-caching > "$SERVER_LOG" 2>&1 &
SERVER_PID=$!

wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG" --server-pid "$SERVER_PID"

run_benchmark_serving \
    --model "$MODEL" --port "$PORT" --backend vllm \
    --input-len "$ISL" --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" \
    --num-prompts "$((CONC * 10))" --max-concurrency "$CONC" \
    --result-filename "$RESULT_FILENAME" --result-dir /workspace/ \
    --dsv4
"#;

#[test]
fn seed_001_dp_attention_arms_and_speculative_config() {
    let f = parse_script(
        "benchmarks/single_node/dsv4_fp4_b300_vllm_mtp.sh",
        SEED_001.as_bytes(),
    )
    .unwrap();
    let s = &f.servers[0];
    assert!(s.splices("PARALLEL_ARGS"));
    let spec = s.flag("--speculative-config").unwrap();
    assert_eq!(spec.value_text(), Some("$SPECULATIVE_CONFIG"));
    let lit = f.resolve("SPECULATIVE_CONFIG", s.line, &s.branch).unwrap();
    assert!(lit.value_text().contains("num_speculative_tokens"));
    let spec_tokens = f.resolve("SPEC_TOKENS", s.line, &s.branch).unwrap();
    assert_eq!(spec_tokens.literal().as_deref(), Some("1"));
    let underscore = s.flag("--attention_config.use_fp4_indexer_cache").unwrap();
    assert_eq!(
        underscore.dotted(),
        Some(("attention_config", "use_fp4_indexer_cache"))
    );

    // Both arms reach the server; each flag remembers its arm.
    let resolved = f.resolved_server_flags(s);
    let tps: Vec<_> = resolved
        .iter()
        .filter(|r| r.flag.name == "--tensor-parallel-size")
        .collect();
    assert_eq!(tps.len(), 2);
    let dp_arm = tps
        .iter()
        .find(|r| r.flag.value_text() == Some("1"))
        .unwrap();
    assert_eq!(dp_arm.branch[0].kind, ArmKind::If);
    assert!(resolved.iter().any(|r| {
        r.flag.name == "--data-parallel-size"
            && r.flag.value_text() == Some("$TP")
            && exclusive(
                &r.branch,
                &tps.iter()
                    .find(|t| t.flag.value_text() == Some("$TP"))
                    .unwrap()
                    .branch,
            )
    }));
    let ep = resolved
        .iter()
        .find(|r| r.flag.name == "--enable-expert-parallel")
        .unwrap();
    assert!(ep.branch[0].condition.contains("DP_ATTENTION"));
    let bench = &f.clients[0];
    assert!(bench.flag("--dsv4").is_some());
}

/// Agentic arrays, `case` arms and per-branch (K, AL) pairs, as in
/// docs/rules.md §3 L21 (`agentic/kimik3_fp4_b300_vllm_mtp.sh`).
const AGENTIC: &str = r#"#!/usr/bin/env bash
set -eo pipefail
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC KV_OFFLOADING TOTAL_CPU_DRAM_GB RESULT_DIR DURATION

DCP_SIZE="${DCP_SIZE:-8}"
CP_ARGS=()
if [ "$DCP_SIZE" -gt 1 ]; then
    CP_ARGS+=(--decode-context-parallel-size "$DCP_SIZE" --dcp-comm-backend a2a)
fi

OFFLOAD_ARGS=()
case "${KV_OFFLOAD_BACKEND:-}" in
    "")
        require_agentic_kv_offload_none
        ;;
    mooncake)
        agentic_pip_install --quiet --no-deps "mooncake-transfer-engine-cuda13==$MOONCAKE_VERSION"
        OFFLOAD_ARGS=(
            --kv-transfer-config
            '{"kv_connector":"MooncakeStoreConnector","kv_role":"kv_both"}'
        )
        ;;
esac

if [ "$CONC" -le 8 ]; then
    NUM_SPEC_TOKENS=7
    SYNTHETIC_ACCEPT_LEN=3.84
elif [ "$CONC" -le 16 ]; then
    NUM_SPEC_TOKENS=3
    SYNTHETIC_ACCEPT_LEN=3.00
else
    NUM_SPEC_TOKENS=0
fi

SPEC_ARGS=()
if [ "$NUM_SPEC_TOKENS" -gt 0 ]; then
    if [ "${EVAL_ONLY:-false}" = "true" ]; then
        SPEC_CONFIG="{\"method\": \"dspark\", \"num_speculative_tokens\": $NUM_SPEC_TOKENS}"
    else
        SPEC_CONFIG="{\"method\": \"dspark\", \"num_speculative_tokens\": $NUM_SPEC_TOKENS, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\": $SYNTHETIC_ACCEPT_LEN}"
    fi
    SPEC_ARGS=(--speculative-config "$SPEC_CONFIG")
fi
PREFIX_CACHE_ARGS=(--enable-prefix-caching)

VLLM_CMD=(
    vllm serve "$MODEL_PATH" --served-model-name "$MODEL"
    --port "$PORT"
    --tensor-parallel-size "$TP"
    "${CP_ARGS[@]}"
    # the buffer for what is not sized against the budget
    --gpu-memory-utilization 0.92
    --enable-prefix-caching
    "${SPEC_ARGS[@]}"
    "${OFFLOAD_ARGS[@]}"
)
printf '%q ' "${VLLM_CMD[@]}" | tee "$RESULT_DIR/vllm_command.txt"
"${VLLM_CMD[@]}" > "$SERVER_LOG" 2>&1 &
SERVER_PID=$!

wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG" --server-pid "$SERVER_PID"

if [ "${EVAL_ONLY}" = "true" ]; then
    run_eval --port "$PORT"
else
    build_replay_cmd "$RESULT_DIR"
    REPLAY_CMD+=" --apply-chat-template"
    run_agentic_replay_and_write_outputs "$RESULT_DIR"
fi
"#;

#[test]
fn agentic_array_launch_case_arms_and_k_pairs() {
    let f = parse_script(
        "benchmarks/single_node/agentic/kimik3_fp4_b300_vllm_mtp.sh",
        AGENTIC.as_bytes(),
    )
    .unwrap();
    assert!(f.syntax_errors.is_empty());
    assert_eq!(f.servers.len(), 1, "printf of the array is not a launch");
    let s = &f.servers[0];
    assert_eq!(s.via_var.as_deref(), Some("VLLM_CMD"));
    assert_eq!(s.invoked_at, vec![60]);
    assert_eq!((s.line, s.end_line), (48, 58));
    assert_eq!(s.flag("--gpu-memory-utilization").unwrap().line, 54);
    assert!(s.splices("SPEC_ARGS") && s.splices("CP_ARGS") && s.splices("OFFLOAD_ARGS"));

    let resolved = f.resolved_server_flags(s);
    let dcp = resolved
        .iter()
        .find(|r| r.flag.name == "--decode-context-parallel-size")
        .unwrap();
    assert_eq!(dcp.via, vec!["CP_ARGS".to_string()]);
    let spec = resolved
        .iter()
        .find(|r| r.flag.name == "--speculative-config")
        .unwrap();
    assert_eq!(spec.flag.value_text(), Some("$SPEC_CONFIG"));
    let kv = resolved
        .iter()
        .find(|r| r.flag.name == "--kv-transfer-config")
        .unwrap();
    assert_eq!(kv.branch[0].kind, ArmKind::CaseItem);
    assert_eq!(kv.branch[0].patterns, vec!["mooncake".to_string()]);
    assert_eq!(kv.branch[0].condition, "\"${KV_OFFLOAD_BACKEND:-}\"");

    // (K, AL) per arm: pair assignments that are not exclusive.
    let ks: Vec<_> = f
        .assignments
        .iter()
        .filter(|a| a.name == "NUM_SPEC_TOKENS")
        .collect();
    let als: Vec<_> = f
        .assignments
        .iter()
        .filter(|a| a.name == "SYNTHETIC_ACCEPT_LEN")
        .collect();
    let pairs: Vec<(String, String)> = ks
        .iter()
        .flat_map(|k| {
            als.iter()
                .filter(|al| k.branch == al.branch)
                .map(|al| (k.value_text(), al.value_text()))
        })
        .collect();
    assert_eq!(
        pairs,
        vec![("7".into(), "3.84".into()), ("3".into(), "3.00".into())]
    );
    let zero = ks.iter().find(|k| k.value_text() == "0").unwrap();
    assert_eq!(zero.branch[0].kind, ArmKind::Else);

    // L22 input: the synthetic config sits in the else of `EVAL_ONLY == true`.
    let synth = f
        .assignments
        .iter()
        .find(|a| a.name == "SPEC_CONFIG" && a.value_text().contains("synthetic"))
        .unwrap();
    let inner = synth.branch.last().unwrap();
    assert_eq!(inner.kind, ArmKind::Else);
    assert!(inner.preceding[0].contains("EVAL_ONLY"));

    // L06 input: PREFIX_CACHE_ARGS is set but never expanded.
    let unused: Vec<&str> = f
        .unused_assignments()
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert!(unused.contains(&"PREFIX_CACHE_ARGS"), "{unused:?}");
    assert!(!unused.contains(&"SPEC_ARGS"));

    let install = &f.installs[0];
    assert_eq!(install.tool, InstallTool::LibWrapper);
    assert_eq!(install.requirements[0].kind, RequirementKind::Pinned);
    assert_eq!(install.branch[0].kind, ArmKind::CaseItem);

    let kinds: Vec<ClientKind> = f.clients.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        vec![
            ClientKind::Eval,
            ClientKind::BuildReplay,
            ClientKind::AgenticReplay
        ]
    );
    assert!(
        f.assignments
            .iter()
            .any(|a| a.name == "REPLAY_CMD" && a.append)
    );
}

/// docs/rules.md Check 10 trip (`agentic/qwen3.5_fp8_h200_mtp.sh` line 133):
/// `sed -i` on SGLang's installed `multi_tokenizer_mixin.py`, plus a
/// `git apply`, a Python heredoc and a `cp` into site-packages.
const PATCHING: &str = r#"#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC

MIXIN=/sgl-workspace/sglang/python/sglang/srt/managers/multi_tokenizer_mixin.py
sed -i 's/self.tokenizer_worker_num > 1/False/' \
    /sgl-workspace/sglang/python/sglang/srt/managers/multi_tokenizer_mixin.py
sed -e 's/a/b/' input.txt > output.txt
git -C /sgl-workspace/sglang apply /workspace/fix.patch
patch -p1 -d /usr/local/lib/python3.12/dist-packages < fix.diff
VLLM_DIR=$(python3 -c "import vllm, os; print(os.path.dirname(vllm.__file__))")
cp fixed_layer.py "$VLLM_DIR/model_executor/layers/fixed_layer.py"
python3 - <<'PY'
import pathlib
p = pathlib.Path("/usr/local/lib/python3.12/dist-packages/vllm/config.py")
p.write_text(p.read_text().replace("a", "b"))
PY
cat > "$RESULT_DIR/config.yaml" <<EOF
speculative_config:
  decoding_type: MTP
  max_draft_len: $K
EOF
uv pip install --system "sglang[all] @ git+https://github.com/sgl-project/sglang.git@main#subdirectory=python"
python3 -m pip install -r requirements.txt triton==3.7.0
python3 -m sglang.launch_server --model-path "$MODEL" --tp "$TP" &
"#;

#[test]
fn rewrites_heredocs_and_installs() {
    let f = parse_script(
        "benchmarks/single_node/agentic/qwen3.5_fp8_h200_mtp.sh",
        PATCHING.as_bytes(),
    )
    .unwrap();
    assert!(f.syntax_errors.is_empty(), "{:?}", f.syntax_errors);
    let sed: Vec<_> = f
        .rewrites
        .iter()
        .filter(|r| r.kind == RewriteKind::SedInPlace)
        .collect();
    assert_eq!(sed.len(), 1, "sed without -i is not a rewrite");
    assert_eq!(sed[0].line, 6);
    assert_eq!(sed[0].detail, "s/self.tokenizer_worker_num > 1/False/");
    assert!(sed[0].targets[0].text.ends_with("multi_tokenizer_mixin.py"));
    assert!(sed[0].touches_engine_path());

    let git = f
        .rewrites
        .iter()
        .find(|r| r.kind == RewriteKind::GitApply)
        .unwrap();
    assert_eq!((git.line, git.detail.as_str()), (9, "/workspace/fix.patch"));
    let patch = f
        .rewrites
        .iter()
        .find(|r| r.kind == RewriteKind::Patch)
        .unwrap();
    assert_eq!(patch.detail, "fix.diff");
    assert!(patch.touches_engine_path());
    let cp = f
        .rewrites
        .iter()
        .find(|r| r.kind == RewriteKind::Copy)
        .unwrap();
    assert!(cp.targets[0].vars.contains(&"VLLM_DIR".to_string()));
    let vllm_dir = f.resolve("VLLM_DIR", cp.line, &cp.branch).unwrap();
    assert!(vllm_dir.value_text().contains("vllm.__file__"));
    let py = f
        .rewrites
        .iter()
        .find(|r| r.kind == RewriteKind::InlineProgram)
        .unwrap();
    assert_eq!(py.line, 13);
    assert!(py.touches_engine_path());

    let yaml = f.heredocs.iter().find(|h| h.command == "cat").unwrap();
    assert!(!yaml.quoted);
    assert_eq!(yaml.delimiter, "EOF");
    assert_eq!(yaml.body_line, 19);
    assert!(yaml.body.contains("max_draft_len: $K"));
    assert_eq!(
        yaml.target.as_ref().unwrap().text,
        "$RESULT_DIR/config.yaml"
    );
    assert!(f.is_expanded("K"), "heredoc bodies expand variables");
    assert!(
        f.heredocs
            .iter()
            .any(|h| h.command == "python3" && h.quoted)
    );

    let uv = f
        .installs
        .iter()
        .find(|i| i.tool == InstallTool::UvPip)
        .unwrap();
    assert_eq!(uv.requirements[0].kind, RequirementKind::Unpinned);
    assert_eq!(uv.options[0].name, "--system");
    let pyp = f
        .installs
        .iter()
        .find(|i| i.tool == InstallTool::PythonPip)
        .unwrap();
    let kinds: Vec<_> = pyp.requirements.iter().map(|r| r.kind.clone()).collect();
    assert_eq!(
        kinds,
        vec![RequirementKind::RequirementsFile, RequirementKind::Pinned]
    );

    let s = &f.servers[0];
    assert_eq!(
        (s.engine, s.entry.as_str()),
        (Engine::Sglang, "python3 -m sglang.launch_server")
    );
}

/// A TRT-LLM agentic script (`agentic/minimaxm3_fp4_b200_trt_mtp.sh` pattern):
/// the launch sits behind `mpirun`, the force knob is exported only outside
/// `EVAL_ONLY`, and `PYTHONNOUSERSITE=1` prefixes an ATOM launch.
const TRT_ATOM: &str = r#"#!/usr/bin/env bash
check_env_vars MODEL TP CONC PORT EVAL_ONLY
if [ "$EVAL_ONLY" = "true" ]; then
    unset TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS
else
    export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78
fi
TRTLLM_CMD=(
    mpirun -n 1 --oversubscribe --allow-run-as-root
    trtllm-serve "$MODEL_PATH"
    --tp_size "$TP"
    --config ser.yaml
)
"${TRTLLM_CMD[@]}" > "$SERVER_LOG" 2>&1 &
[ -n "$DEBUG" ] && export NCCL_DEBUG=INFO
PYTHONNOUSERSITE=1 python3 -m atom.entrypoints.openai_server --model "$MODEL" \
    --method mtp --num-speculative-tokens 3 --spec-decode-acceptance-rate "$RATE" &
python3 -m dynamo.sglang --model-path "$MODEL" &
"#;

#[test]
fn trt_behind_mpirun_atom_with_prefix_env_and_dynamo() {
    let f = parse_script("t.sh", TRT_ATOM.as_bytes()).unwrap();
    let trt = f
        .servers
        .iter()
        .find(|s| s.engine == Engine::Trtllm)
        .unwrap();
    assert_eq!(trt.wrapper[0], "mpirun");
    assert_eq!(trt.entry, "trtllm-serve");
    assert_eq!(trt.positionals[0].text, "$MODEL_PATH");
    assert_eq!(trt.flag("--config").unwrap().value_text(), Some("ser.yaml"));
    let force = f
        .env
        .iter()
        .find(|e| e.name == "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS")
        .unwrap();
    assert_eq!(force.branch[0].kind, ArmKind::Else);
    assert!(force.branch[0].preceding[0].contains("EVAL_ONLY"));
    assert_eq!(f.unsets[0].branch[0].kind, ArmKind::If);
    let nccl = f.env.iter().find(|e| e.name == "NCCL_DEBUG").unwrap();
    assert_eq!(nccl.branch[0].kind, ArmKind::AndThen);
    assert_eq!(nccl.branch[0].condition, "[ -n \"$DEBUG\" ]");

    let atom = f.servers.iter().find(|s| s.engine == Engine::Atom).unwrap();
    assert_eq!(atom.prefix_env[0].name, "PYTHONNOUSERSITE");
    assert!(matches!(atom.prefix_env[0].kind, EnvKind::Prefix(ref c) if c == "python3"));
    assert_eq!(atom.flag("--method").unwrap().value_text(), Some("mtp"));
    assert_eq!(atom.flag("--spec-decode-acceptance-rate").unwrap().line, 17);
    assert!(
        f.servers
            .iter()
            .any(|s| matches!(s.engine, Engine::Dynamo(_)))
    );
}

#[test]
fn syntax_errors_are_reported_not_fatal() {
    let f = parse_script(
        "broken.sh",
        b"if [ \"$X\" = 1 ]; then\n  vllm serve m --tp 8\n",
    )
    .unwrap();
    assert!(!f.syntax_errors.is_empty());
    assert_eq!(f.loc(2).to_string(), "broken.sh:2:1");
}

/// Check 10 item 3: a heredoc written straight into an installed engine file,
/// and a `tee` into site-packages, are rewrites that touch engine paths.
#[test]
fn heredoc_into_engine_sources() {
    let src = "#!/usr/bin/env bash\n\
cat > /usr/local/lib/python3.12/dist-packages/sglang/srt/layers/fix.py <<'EOF'\n\
PATCHED = True\n\
EOF\n\
tee \"$SITE/site-packages/vllm/envs.py\" <<EOF >/dev/null\n\
X = 1\n\
EOF\n\
cat > notes.txt <<EOF\n\
plain\n\
EOF\n";
    let f = parse_script("p.sh", src.as_bytes()).unwrap();
    let writes: Vec<_> = f
        .rewrites
        .iter()
        .filter(|r| r.kind == RewriteKind::HeredocWrite)
        .collect();
    assert_eq!(writes.len(), 3);
    assert_eq!(writes[0].line, 2);
    assert!(writes[0].touches_engine_path());
    assert_eq!(writes[0].detail, "PATCHED = True\n");
    assert!(writes[1].touches_engine_path());
    assert_eq!(
        writes[1].targets[0].text,
        "$SITE/site-packages/vllm/envs.py"
    );
    assert!(!writes[2].touches_engine_path());
}

#[test]
fn mentions_of_an_engine_are_not_launches() {
    let src = "MSG=\"remember to vllm serve later\"\nlog_line please vllm serve x\nCMD=\"vllm serve $MODEL --tp 8\"\nnumactl --interleave=all vllm serve m --tp 2 &\n";
    let f = parse_script("m.sh", src.as_bytes()).unwrap();
    let lines: Vec<usize> = f.servers.iter().map(|s| s.line).collect();
    assert_eq!(lines, vec![3, 4]);
    assert_eq!(f.servers[0].via_var.as_deref(), Some("CMD"));
    assert_eq!(f.servers[1].wrapper, vec!["numactl", "--interleave=all"]);
}
