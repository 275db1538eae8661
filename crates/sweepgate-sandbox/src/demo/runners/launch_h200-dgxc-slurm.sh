#!/usr/bin/env bash
# Launcher for the h200-dgxc-slurm runners (demo copy): runs the benchmark script the
# config resolves to inside the pinned image.
set -euo pipefail
bash "benchmarks/single_node/${SCENARIO_DIR:-fixed_seq_len}/${SCRIPT_NAME}"
