#!/usr/bin/env bash
# Seed 003 lines 97-105, 145-150, 202-214: the dsv4 B200 SGLang launch.
source "$(dirname "$0")/benchmark_lib.sh"

check_env_vars MODEL TP CONC ISL OSL RANDOM_RANGE_RATIO RESULT_FILENAME

echo "TP: $TP, CONC: $CONC"

EVAL_CONTEXT_ARGS=""
if [ "${EVAL_ONLY}" = "true" ]; then
    setup_eval_context
    EVAL_CONTEXT_ARGS="--context-length $EVAL_MAX_MODEL_LEN"
fi

export SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2=1
export SGLANG_OPT_USE_TOPK_V2=1

sglang serve \
  --model-path $MODEL \
  --tp 8 \
  --speculative-algo EAGLE \
  --speculative-num-steps 3 \
  --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 4 \
  --moe-runner-backend flashinfer_mxfp4 \
  --chunked-prefill-size 4096 \
  --disable-flashinfer-autotune \
  --host 0.0.0.0 \
  --port $PORT > $SERVER_LOG 2>&1 &

run_benchmark_serving \
  --model $MODEL --port $PORT --backend vllm --input-len $ISL --output-len $OSL \
  --random-range-ratio $RANDOM_RANGE_RATIO --num-prompts $((CONC * 10)) \
  --max-concurrency $CONC --result-filename $RESULT_FILENAME --result-dir /workspace/ --use-chat-template
