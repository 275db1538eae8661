#!/usr/bin/env bash
# Seed 003 (#1145): dsv4 B200 SGLang launch switched to `sglang serve` with
# EAGLE; the two scripts are identical except the client flag of the _mtp one.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC ISL OSL RANDOM_RANGE_RATIO RESULT_FILENAME

echo "TP: $TP, CONC: $CONC, ISL: $ISL, OSL: $OSL"

export SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2=1
export SGLANG_OPT_USE_TOPK_V2=1
# The image bakes in a 4-GPU mask; clear it so TP=8 can bind to all ranks.
unset CUDA_VISIBLE_DEVICES

EVAL_CONTEXT_ARGS=""
if [ "${EVAL_ONLY}" = "true" ]; then
    setup_eval_context
    EVAL_CONTEXT_ARGS="--context-length $EVAL_MAX_MODEL_LEN"
fi

PORT=8888
sglang serve \
  --model-path "$MODEL" \
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

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/

if [ "${RUN_EVAL}" = "true" ]; then
  run_eval --framework lm-eval --port "$PORT"
fi
