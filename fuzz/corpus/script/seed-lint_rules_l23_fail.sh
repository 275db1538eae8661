#!/usr/bin/env bash
# L23 modelled on agentic/qwen3.5_fp8_h200_mtp.sh line 133: sed -i on the installed SGLang sources.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL RESULT_FILENAME

sed -i "s/timeout=30/timeout=300/" /sgl-workspace/sglang/python/sglang/srt/managers/multi_tokenizer_mixin.py

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size "$TP" \
  --gpu-memory-utilization 0.9 > "$SERVER_LOG" 2>&1 &

run_benchmark_serving \
  --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio 0.8 \
  --num-prompts $((CONC * 10)) --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/
