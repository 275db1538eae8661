#!/usr/bin/env bash
# The entry script of the `sweepgate lint` GitHub Action (action.yml):
# lints a pull request's range, writes SARIF for code scanning, and prints
# every finding as a workflow command (`::error file=…,line=…::…`) so a
# fork's pull request, whose token cannot upload SARIF, still gets its
# annotations. Exit 1 when the PR adds a new error, 2 when the lint could
# not run.
#
#   sweepgate-lint-action.sh BASE HEAD [SARIF_FILE]
#
# SWEEPGATE_BIN names the binary (default: `sweepgate` on PATH);
# SWEEPGATE_REPO the checkout (default: the working directory).
set -uo pipefail

base=${1:?usage: sweepgate-lint-action.sh BASE HEAD [SARIF_FILE]}
head=${2:?usage: sweepgate-lint-action.sh BASE HEAD [SARIF_FILE]}
sarif=${3:-sweepgate-lint.sarif}
bin=${SWEEPGATE_BIN:-sweepgate}
repo=${SWEEPGATE_REPO:-.}

"$bin" lint --repo "$repo" --base "$base" --head "$head" --format sarif >"$sarif"
code=$?
if [ "$code" -ge 2 ]; then
  echo "::error title=sweepgate lint::the lint could not run (exit $code)"
  exit "$code"
fi
# The same findings as annotations (the exit code is the SARIF run's).
"$bin" lint --repo "$repo" --base "$base" --head "$head" --format github || true
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "sarif=$sarif" >>"$GITHUB_OUTPUT"
fi
exit "$code"
