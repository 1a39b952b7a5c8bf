#!/usr/bin/env bash
# Build the environment (with test dependencies), then run the test suite.
#   bash scripts/test.sh [-q]                    the full suite, every real peer (README, CI); the real-Slurm tests
#                                                run as a second session beside the rest
#   bash scripts/test.sh [pytest args]           the tests those arguments choose, in one session
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
if [ "$#" -gt 1 ] || { [ "$#" -eq 1 ] && [ "$1" != "-q" ]; }; then
  exec .venv/bin/python -m pytest "$@"  # a chosen subset: one session, as asked
fi
# The whole suite. The real-Slurm tests spend most of their time waiting on daemons and sleep jobs, so they run as a
# second pytest session beside the rest: each session starts and owns its own daemons (docs/contributing/real-slurm.md),
# and together they are every test the single session would run, with every assertion. Both must pass.
SLURM_LOG="$(mktemp -t gpu-cluster-real-slurm.XXXXXX)"
echo "real-Slurm tests: a second pytest session beside the others (output at the end; meanwhile in $SLURM_LOG)"
# bash starts a background job with Ctrl-C ignored: the subshell restores it, so pytest (and the daemons it stops on
# the way out) sees the interrupt like the foreground session does
( trap - INT QUIT; exec .venv/bin/python -m pytest "$@" -p no:cacheprovider -m "real_slurm and not fuzz" ) \
  >"$SLURM_LOG" 2>&1 &
SLURM_PID=$!
trap 'rm -f "$SLURM_LOG"' EXIT
trap 'echo "interrupted: stopping the real-Slurm session" >&2; kill -INT "$SLURM_PID" 2>/dev/null; wait "$SLURM_PID"; exit 130' INT TERM
set +e
.venv/bin/python -m pytest "$@" -m "not real_slurm and not fuzz"
REST=$?
echo "waiting for the real-Slurm session to finish (its progress so far: $SLURM_LOG)"
wait "$SLURM_PID"
SLURM=$?
set -e
echo "==================== real-Slurm session (exit $SLURM) ===================="
cat "$SLURM_LOG"
# Exit 5 is "no tests collected": a session with nothing to run (e.g. every real-Slurm test deselected) is not a failure
[ "$REST" -eq 5 ] && REST=0
[ "$SLURM" -eq 5 ] && SLURM=0
if [ "$REST" -ne 0 ] || [ "$SLURM" -ne 0 ]; then
  echo "test suite failed: other tests exit $REST, real-Slurm tests exit $SLURM" >&2
  exit 1
fi
