#!/usr/bin/env bash
# DeepSeek-V4 FP8 on H200 with vLLM (demo repository for sweepgate).
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN RANDOM_RANGE_RATIO RESULT_FILENAME

PARALLEL_ARGS=(--tensor-parallel-size "$TP")
if [ "${DP_ATTENTION:-false}" = "true" ]; then
  PARALLEL_ARGS=(--tensor-parallel-size 1 --data-parallel-size "$TP" --enable-expert-parallel)
fi

vllm serve "$MODEL" \
  --host 0.0.0.0 --port 8888 \
  "${PARALLEL_ARGS[@]}" \
  --max-model-len "$MAX_MODEL_LEN" \
  --gpu-memory-utilization 0.9 &

wait_for_server_ready
run_benchmark_serving --model "$MODEL" --port 8888 --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" \
  --num-prompts "$((CONC * 10))" --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/
