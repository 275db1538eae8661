#!/usr/bin/env bash
# Seed 004: the MTP port of the H200 STP recipe, added under the
# framework-tagged name that h200-cw / h200-nb never build.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL MAX_MODEL_LEN RESULT_FILENAME

export VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0
SPECULATIVE_CONFIG='{"method":"mtp","num_speculative_tokens":1}'

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size 1 --data-parallel-size "$TP" --enable-expert-parallel \
  --gpu-memory-utilization 0.95 \
  --max-num-seqs 512 \
  --no-enable-flashinfer-autotune \
  --max-model-len "$MAX_MODEL_LEN" \
  --speculative-config "$SPECULATIVE_CONFIG" > "$SERVER_LOG" 2>&1 &

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio 0.8 \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/ --dsv4
