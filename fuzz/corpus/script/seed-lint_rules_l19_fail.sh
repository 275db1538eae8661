#!/usr/bin/env bash
# Agentic vLLM MTP script modelled on verifier-checks 1.4 (vLLM encoding:
# rejection_sample_method synthetic + synthetic_acceptance_length) and the
# EVAL_ONLY guard every agentic script at 843c6254 uses (L22).
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC RESULT_FILENAME

if [ "${EVAL_ONLY}" != "true" ]; then
  SPECULATIVE_CONFIG='{"method":"mtp","num_speculative_tokens":2,"rejection_sample_method":"synthetic","synthetic_acceptance_length":2.49}'
else
  SPECULATIVE_CONFIG='{"method":"mtp","num_speculative_tokens":2}'
fi

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size "$TP" \
  --speculative-config "$SPECULATIVE_CONFIG" > "$SERVER_LOG" 2>&1 &

REPLAY_CMD=$(build_replay_cmd --model "$MODEL" --port "$PORT")
run_agentic_replay_and_write_outputs "$REPLAY_CMD"
