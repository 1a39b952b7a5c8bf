#!/usr/bin/env bash
# Build the environment, then run the offline preview of a stack (default: dev). No cloud credentials needed.
#   bash scripts/preview.sh [STACK] [--format text|json|markdown|sarif] [other python -m preview flags]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/venv.sh" requirements.txt
STACK="dev"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then STACK="$1"; shift; fi  # a first argument that is not a flag names the stack
cd "$ROOT" && exec .venv/bin/python -m preview --stack "$STACK" "$@"
