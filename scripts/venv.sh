#!/usr/bin/env bash
# Create .venv (once) and install the pinned dependencies; reinstall only when a requirements file changes.
#   bash scripts/venv.sh [requirements.txt|requirements-dev.txt]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
REQ="${1:-requirements.txt}"
# A venv is usable only if its pip runs: a failed `python3 -m venv` (no python3-venv on Debian) leaves a bin/python
# behind without pip, which must not be mistaken for a working environment.
if ! "$ROOT/.venv/bin/python" -m pip --version >/dev/null 2>&1; then
  rm -rf "$ROOT/.venv"
  if ! "$PY" -m venv "$ROOT/.venv"; then
    rm -rf "$ROOT/.venv"
    if [ "$(id -u)" -eq 0 ] && [ "${CI:-}" = "true" ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      "$PY" -m venv "$ROOT/.venv"
    else
      echo "error: '$PY -m venv' failed; on Debian install it with: apt-get install python3-venv" >&2
      exit 1
    fi
  fi
fi
STAMP="$ROOT/.venv/.installed-$(cat "$ROOT/requirements.txt" "$ROOT/$REQ" | sha256sum | cut -c1-16)"
if [ ! -f "$STAMP" ]; then
  "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/$REQ"
  touch "$STAMP"
fi
