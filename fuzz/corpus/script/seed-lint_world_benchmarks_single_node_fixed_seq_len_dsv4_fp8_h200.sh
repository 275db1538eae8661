#!/usr/bin/env bash
# Models the H200 vLLM STP recipe of seed 004 (dsv4-fp8-h200-vllm).
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL MAX_MODEL_LEN RESULT_FILENAME

PARALLEL_ARGS=(--tensor-parallel-size "$TP")
if [ "${EP_SIZE}" -gt 1 ]; then
  PARALLEL_ARGS=(--tensor-parallel-size 1 --data-parallel-size "$TP" --enable-expert-parallel)
fi

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  "${PARALLEL_ARGS[@]}" \
  --gpu-memory-utilization 0.95 \
  --max-num-seqs 512 \
  --max-model-len "$MAX_MODEL_LEN" > "$SERVER_LOG" 2>&1 &

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio 0.8 \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/
