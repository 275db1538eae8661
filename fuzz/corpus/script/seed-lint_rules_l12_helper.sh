#!/usr/bin/env bash
# L12 (W) modelled on agentic/apply_k3_container_patches.sh: a helper (no
# server) installing `tabulate` unpinned.
pip install -q tabulate
