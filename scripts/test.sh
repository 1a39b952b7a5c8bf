#!/usr/bin/env bash
# Build the environment (with test dependencies), then run the test suite.
#   bash scripts/test.sh [pytest args]           the full suite, every real peer (README, CI)
#   bash scripts/test.sh --quick [pytest args]   the unit tests only: no real Slurm, no real Helm, nothing marked
#                                                slow; on every core (pytest-xdist). The loop to run while working.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
QUICK=""
if [ "${1:-}" = "--quick" ]; then QUICK=1; shift; fi
bash "$ROOT/scripts/venv.sh" requirements-dev.txt
if [ -z "$QUICK" ] && [ "${CI:-}" = "true" ]; then  # the real-Slurm tests must run in CI: build their Debian root first (docs/slurm.md)
  bash "$ROOT/scripts/slurm-root.sh" >/dev/null
fi
cd "$ROOT"
if [ -n "$QUICK" ]; then
  # A test that reaches a real peer without its marker fails here and names the marker (tests/support/peers.py)
  export GPU_CLUSTER_NO_REAL_PEERS=1
  # A loop that runs again and again keeps its bytecode: with PYTHONDONTWRITEBYTECODE (set on this project's machines
  # and in many CI images) each run compiled every project and test module again, and pytest rewrote every test's
  # asserts again: a third of the loop's CPU. __pycache__ is ignored by git.
  unset PYTHONDONTWRITEBYTECODE
  exec .venv/bin/python -m pytest -q -p no:cacheprovider -n "${GPU_CLUSTER_TEST_WORKERS:-auto}" \
    -m "not real_slurm and not real_helm and not slow and not fuzz" "$@"
fi
exec .venv/bin/python -m pytest "$@"
