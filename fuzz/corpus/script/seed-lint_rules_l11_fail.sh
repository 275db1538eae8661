#!/usr/bin/env bash
# L11 (E) modelled on fixed_seq_len/deprecated/minimaxm3_fp8_b300.sh lines 72-73: JSON blob plus a dotted key of the same config (#1832/#1835).
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL RESULT_FILENAME

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size "$TP" \
  --attention-config '{"backend":"FLASHINFER"}' \
  --attention_config.indexer_kv_dtype fp8 \
  --gpu-memory-utilization 0.9 > "$SERVER_LOG" 2>&1 &

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio 0.8 \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/
