#!/usr/bin/env bash
# Build the environment, then run the offline preview of a stack (default: dev). No cloud credentials needed.
#   bash scripts/preview.sh [STACK] [--format text|json|markdown]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/venv.sh" requirements.txt
STACK="${1:-dev}"; shift || true
cd "$ROOT" && exec .venv/bin/python -m preview --stack "$STACK" "$@"
