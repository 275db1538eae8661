#!/usr/bin/env bash
# Seed 001: DeepSeek-V4-Pro on B300 with vLLM + MTP. SPEC_TOKENS is an env
# knob for sweeps; --dsv4 routes prompts through the DSv4 chat encoder.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE DP_ATTENTION CONC ISL OSL RANDOM_RANGE_RATIO RESULT_FILENAME

SPEC_TOKENS="${SPEC_TOKENS:-1}"
SPECULATIVE_CONFIG="{\"method\":\"mtp\",\"num_speculative_tokens\":${SPEC_TOKENS}}"

if [ "${DP_ATTENTION}" = "true" ]; then
  PARALLEL_ARGS=(--tensor-parallel-size 1 --data-parallel-size "$TP" --enable-expert-parallel)
else
  PARALLEL_ARGS=(--tensor-parallel-size "$TP")
fi

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  "${PARALLEL_ARGS[@]}" \
  --trust-remote-code \
  --kv-cache-dtype fp8 \
  --attention_config.use_fp4_indexer_cache=True \
  --speculative-config "$SPECULATIVE_CONFIG" > "$SERVER_LOG" 2>&1 &

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/ --dsv4
