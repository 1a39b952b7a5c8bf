#!/usr/bin/env bash
# Create .venv (once) and install the pinned dependencies; reinstall only when a requirements file changes.
#   bash scripts/venv.sh [requirements.txt|requirements-dev.txt]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
REQ="${1:-requirements.txt}"
# One builder at a time: a second scripts/test.sh or preview.sh started while the first still builds .venv waits for
# it (then finds the stamp) instead of deleting or installing into the same folder. flock comes with util-linux.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$ROOT/.venv.lock"
  flock 9
fi
# A venv is usable only if its pip runs: a failed `python3 -m venv` (no python3-venv on Debian) leaves a bin/python
# behind without pip, which must not be mistaken for a working environment.
# Progress goes to stderr: a first run is silent for a minute or more otherwise, and stdout stays the command's own
say() { echo "gpu-cluster: $*" >&2; }
if ! "$ROOT/.venv/bin/python" -m pip --version >/dev/null 2>&1; then
  say "creating .venv with $PY (first run)"
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
# uv (from PyPI, pinned here) installs the same pinned requirements several times faster than pip from an empty
# cache (docs/benchmarks.md "First run"); pip stays the fallback when uv cannot be installed or fails
# (GPU_CLUSTER_NO_UV=1 skips it). uv does not read pip's configuration: the index and CA file pip uses are passed on.
UV_VERSION="0.13.9"
install_with_uv() {
  [ -z "${GPU_CLUSTER_NO_UV:-}" ] || return 1
  "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION" >/dev/null 2>&1 \
    || return 1
  local pass_on=()
  if [ -z "${SSL_CERT_FILE:-}" ] && [ -n "${PIP_CERT:-}" ]; then pass_on+=("SSL_CERT_FILE=$PIP_CERT"); fi
  if [ -z "${UV_INDEX_URL:-}" ] && [ -n "${PIP_INDEX_URL:-}" ]; then pass_on+=("UV_INDEX_URL=$PIP_INDEX_URL"); fi
  # --compile-bytecode: uv writes no .pyc by default, and CI (like this project's machines) sets
  # PYTHONDONTWRITEBYTECODE, so every run would compile the provider SDKs from source again (3x a preview's time)
  env "${pass_on[@]}" "$ROOT/.venv/bin/python" -m uv pip install --quiet --compile-bytecode \
    --python "$ROOT/.venv/bin/python" -r "$ROOT/$REQ"
}
# The stamp also names the install mode: a .venv built before installs compiled bytecode installs once more (uv's
# --compile-bytecode then compiles all of site-packages, the packages already there too)
INSTALL_MODE="compile-bytecode"
STAMP="$ROOT/.venv/.installed-$( (cat "$ROOT/requirements.txt" "$ROOT/$REQ"; echo "$INSTALL_MODE") | sha256sum | cut -c1-16)"
if [ ! -f "$STAMP" ]; then
  started=$SECONDS
  say "installing the pinned packages of $REQ into .venv (first run or changed requirements: 1-3 minutes)..."
  if ! install_with_uv; then
    [ -n "${GPU_CLUSTER_NO_UV:-}" ] || echo "note: uv $UV_VERSION unavailable or failed; installing with pip" >&2
    "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check --compile -r "$ROOT/$REQ"
  fi
  touch "$STAMP"
  say ".venv ready ($((SECONDS - started)) s)"
fi
# `.venv/bin/python -m preview` (or whatif, policies.docs, ...) from any folder, not only the project folder: the
# project root goes on the venv's import path (a .pth file; the project is not installed as a package)
for site in "$ROOT"/.venv/lib/python3*/site-packages; do
  [ "$(cat "$site/gpu-cluster-project.pth" 2>/dev/null)" = "$ROOT" ] || echo "$ROOT" > "$site/gpu-cluster-project.pth"
done
