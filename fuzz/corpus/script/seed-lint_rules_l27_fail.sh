#!/usr/bin/env bash
# verifier-checks 1.3 step 3 and L27: thinking switched off through
# --default-chat-template-kwargs, but the pinned AL 2.49 is dsv4 thinking_on K=3.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC RESULT_FILENAME

if [ "${EVAL_ONLY}" != "true" ]; then
  SPECULATIVE_CONFIG='{"method":"mtp","num_speculative_tokens":3,"rejection_sample_method":"synthetic","synthetic_acceptance_length":2.49}'
else
  SPECULATIVE_CONFIG='{"method":"mtp","num_speculative_tokens":3}'
fi

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size "$TP" \
  --default-chat-template-kwargs '{"thinking": false}' \
  --speculative-config "$SPECULATIVE_CONFIG" > "$SERVER_LOG" 2>&1 &

REPLAY_CMD=$(build_replay_cmd --model "$MODEL" --port "$PORT")
run_agentic_replay_and_write_outputs "$REPLAY_CMD"
