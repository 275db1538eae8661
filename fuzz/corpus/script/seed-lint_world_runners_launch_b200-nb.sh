#!/usr/bin/env bash
# launcher b200-nb (resolution rules: verifier-checks 1.8)
bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}.sh"
