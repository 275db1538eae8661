#!/usr/bin/env bash
# Agentic vLLM MTP script modelled on verifier-checks 1.4 (vLLM encoding:
# rejection_sample_method synthetic + synthetic_acceptance_length) and the
# EVAL_ONLY guard every agentic script at 843c6254 uses (L22).
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC RESULT_FILENAME

# Models kimik3_fp4_b300_vllm_mtp.sh: K=0 for CONC>16 while the conc list goes to 64.
NUM_SPEC_TOKENS=2
if [ "$CONC" -gt 16 ]; then
  NUM_SPEC_TOKENS=0
fi
SPECULATIVE_CONFIG="{\"method\":\"mtp\",\"num_speculative_tokens\":${NUM_SPEC_TOKENS}}"

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  --tensor-parallel-size "$TP" \
  --speculative-config "$SPECULATIVE_CONFIG" > "$SERVER_LOG" 2>&1 &

REPLAY_CMD=$(build_replay_cmd --model "$MODEL" --port "$PORT")
run_agentic_replay_and_write_outputs "$REPLAY_CMD"
