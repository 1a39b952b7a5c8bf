#!/usr/bin/env bash
# Download every pinned upstream file the tests read (CRDs, chart values, the Helm charts at their tags) into a
# cache, for a clone without ../shared; verify each against the sha256 in scripts/upstream-files.txt.
#   bash scripts/fetch-upstream.sh
# into $GPU_CLUSTER_UPSTREAM, default ${XDG_CACHE_HOME:-~/.cache}/gpu-cluster/upstream (where tests/conftest.py looks).
# Files already present with the right checksum are kept. Exits 1 naming every file that failed; without a network
# it stops at the first file that cannot connect (seconds, not the hour that default timeouts and retries took).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIST="${UPSTREAM_LIST:-$ROOT/scripts/upstream-files.txt}"
DEST="${GPU_CLUSTER_UPSTREAM:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cluster/upstream}"
failed=0
count=0
# A short connect timeout and few retries: a missing network is known in seconds; a slow but working mirror still
# has minutes per file (max-time)
CURL=(curl -fsSL --connect-timeout "${FETCH_CONNECT_TIMEOUT:-10}" --max-time 600 --retry 2 --retry-delay 2)
NO_NETWORK_EXITS=" 5 6 7 28 35 "  # curl: proxy/host not resolved, cannot connect, timed out, TLS connect failed
while read -r sum path url edit; do
  [ -n "$sum" ] || continue
  target="$DEST/$path"
  if [ -f "$target" ] && [ "$(sha256sum "$target" | cut -d' ' -f1)" = "$sum" ]; then
    count=$((count + 1))
    continue
  fi
  mkdir -p "$(dirname "$target")"
  tmp="$target.part"
  rc=0
  "${CURL[@]}" -o "$tmp" "$url" || rc=$?
  if [ "$rc" -ne 0 ]; then
    rm -f "$tmp"
    if [[ "$NO_NETWORK_EXITS" == *" $rc "* ]]; then
      host="${url#*://}"; host="${host%%/*}"
      echo "error: $path: cannot reach $host (curl exit $rc): no network or a proxy/firewall in the way." >&2
      echo "  stopped at the first such file ($count verified in $DEST); the others would fail the same way." >&2
      echo "  fix: run it where $host is reachable (https_proxy is honoured), or use a ../shared folder instead" >&2
      exit 1
    fi
    echo "error: $path: download failed (curl exit $rc, $url)" >&2
    failed=$((failed + 1)); continue
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
