#!/usr/bin/env bash
# Download every pinned upstream file the tests read (CRDs, chart values, the Helm charts at their tags) into a
# cache, for a clone without ../shared; verify each against the sha256 in scripts/upstream-files.txt.
#   bash scripts/fetch-upstream.sh
# into $GPU_CLUSTER_UPSTREAM, default ${XDG_CACHE_HOME:-~/.cache}/gpu-cluster/upstream (where tests/conftest.py looks).
# Files already present with the right checksum are kept. Exits 1 naming every file that failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIST="${UPSTREAM_LIST:-$ROOT/scripts/upstream-files.txt}"
DEST="${GPU_CLUSTER_UPSTREAM:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cluster/upstream}"
failed=0
count=0
while read -r sum path url edit; do
  [ -n "$sum" ] || continue
  target="$DEST/$path"
  if [ -f "$target" ] && [ "$(sha256sum "$target" | cut -d' ' -f1)" = "$sum" ]; then
    count=$((count + 1))
    continue
  fi
  mkdir -p "$(dirname "$target")"
  tmp="$target.part"
  if ! curl -fsSL --retry 3 -o "$tmp" "$url"; then
    echo "error: $path: download failed ($url)" >&2
    rm -f "$tmp"; failed=$((failed + 1)); continue
  fi
  if [ -n "$edit" ]; then  # the packaging edit the upstream release makes (charts/PROVENANCE.md in ../shared)
    sed -i -e "$edit" "$tmp"
  fi
  got="$(sha256sum "$tmp" | cut -d' ' -f1)"
  if [ "$got" != "$sum" ]; then
    echo "error: $path: sha256 $got, expected $sum ($url)" >&2
    rm -f "$tmp"; failed=$((failed + 1)); continue
  fi
  mv "$tmp" "$target"
  count=$((count + 1))
done < "$LIST"
if [ "$failed" -gt 0 ]; then
  echo "fetch-upstream: $failed file(s) failed, $count verified in $DEST" >&2
  exit 1
fi
echo "fetch-upstream: $count files verified in $DEST"
