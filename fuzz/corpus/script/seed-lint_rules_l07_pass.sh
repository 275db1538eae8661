#!/usr/bin/env bash
# L06/L07 pass modelled on fixed_seq_len/dsr1_fp4_b200.sh: EVAL_CONTEXT_ARGS set under EVAL_ONLY and expanded on the server.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL RESULT_FILENAME

EVAL_CONTEXT_ARGS=""
if [ "${EVAL_ONLY}" = "true" ]; then
  setup_eval_context
  EVAL_CONTEXT_ARGS="--max-model-len $EVAL_MAX_MODEL_LEN"
fi

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size "$TP" \
  $EVAL_CONTEXT_ARGS \
  --gpu-memory-utilization 0.9 > "$SERVER_LOG" 2>&1 &

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio 0.8 \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/
