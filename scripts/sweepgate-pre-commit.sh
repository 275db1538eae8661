#!/usr/bin/env bash
# The pre-commit hook (.pre-commit-hooks.yaml): lints the staged change,
# the index against HEAD, in the repository the hook runs in. Exit 1 when
# the staged change adds a new error.
#
# SWEEPGATE_BIN names the binary (default: `sweepgate` on PATH).
set -euo pipefail
exec "${SWEEPGATE_BIN:-sweepgate}" lint --repo "$(git rev-parse --show-toplevel)" --staged
