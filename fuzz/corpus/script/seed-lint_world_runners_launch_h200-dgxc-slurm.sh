#!/usr/bin/env bash
# launcher h200-dgxc-slurm (resolution rules: verifier-checks 1.8)
bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}.sh"
