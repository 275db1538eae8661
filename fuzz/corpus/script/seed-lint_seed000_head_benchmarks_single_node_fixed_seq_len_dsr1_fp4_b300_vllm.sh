#!/usr/bin/env bash
# Seed 000: DSR1 FP4 B300 vLLM "TokenSpeed" recipe. The review found an
# unpinned fastokens install loaded into the server (--tokenizer-mode
# fastokens), a backend vLLM does not know (TOKENSPEED_MLA), and the
# hyphenated --attention-config.X spelling.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL RANDOM_RANGE_RATIO RESULT_FILENAME

# Model loading can exceed the default timeout for the large FP4 checkpoint.
export VLLM_ENGINE_READY_TIMEOUT_S=3600

# vLLM v0.21 integrates the pre-v0.2 fastokens patching API.
pip install -q 'fastokens>=0.1.1,<0.2.0'

EP_ARGS=()
if [ "${EP_SIZE}" -gt 1 ]; then
  EP_ARGS=(--enable-expert-parallel)
fi

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size "$TP" \
  "${EP_ARGS[@]}" \
  --trust-remote-code \
  --kv-cache-dtype fp8 \
  --gpu-memory-utilization 0.9 \
  --attention-backend TOKENSPEED_MLA \
  --attention-config.mla_prefill_backend TOKENSPEED_MLA \
  --tokenizer-mode fastokens > "$SERVER_LOG" 2>&1 &

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/
