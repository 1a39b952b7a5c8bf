#!/usr/bin/env bash
# Build the environment (with test dependencies), then run the whole test suite.
#   bash scripts/test.sh [pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/venv.sh" requirements-dev.txt
if [ "${CI:-}" = "true" ]; then  # the real-Slurm tests must run in CI: build their Debian root first (docs/slurm.md)
  bash "$ROOT/scripts/slurm-root.sh" >/dev/null
fi
cd "$ROOT" && exec .venv/bin/python -m pytest "$@"
