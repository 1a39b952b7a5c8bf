#!/usr/bin/env bash
# Create .venv (once) and install the pinned dependencies. Sourced by the other scripts.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
REQ="${1:-requirements.txt}"
if [ ! -x "$ROOT/.venv/bin/python" ]; then
  "$PY" -m venv "$ROOT/.venv" || { echo "error: '$PY -m venv' failed; on Debian: apt-get install python3-venv" >&2; exit 1; }
fi
STAMP="$ROOT/.venv/.installed-$(sha256sum "$ROOT/requirements.txt" "$ROOT/$REQ" | sha256sum | cut -c1-16)"
if [ ! -f "$STAMP" ]; then
  "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/$REQ"
  touch "$STAMP"
fi
