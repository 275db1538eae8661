#!/usr/bin/env bash
# L20 modelled on dsv4-fp4-b200-dynamo-vllm-mtp: synthetic acceptance on a fixed-seq-len (8k1k) config.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL RESULT_FILENAME

export SGLANG_SIMULATE_ACC_LEN=2.49

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size "$TP" \
  --gpu-memory-utilization 0.9 > "$SERVER_LOG" 2>&1 &

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio 0.8 \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/
