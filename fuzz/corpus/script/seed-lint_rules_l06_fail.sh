#!/usr/bin/env bash
# L06 trip modelled on agentic/dsv4_fp4_mi355x_vllm_mtp.sh: PREFIX_CACHE_ARGS assigned, flag hard-coded instead.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL RESULT_FILENAME

PREFIX_CACHE_ARGS="--enable-prefix-caching"

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size "$TP" \
  --enable-prefix-caching \
  --gpu-memory-utilization 0.9 > "$SERVER_LOG" 2>&1 &

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio 0.8 \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/
