#!/usr/bin/env bash
# Build (once) the Debian unstable root whose real Slurm 26.05 checks every rendered Slurm config.
#   bash scripts/slurm-root.sh            # prints the root's path; idempotent (seconds when it already exists)
# Needs root and network access to deb.debian.org. The root holds slurmctld, slurm-client, slurmdbd and
# mariadb-server (about 400 MB). Path: $SLURM_ROOT, default /var/tmp/gpu-cluster/slurm-root-sid (shared by clones).
set -euo pipefail
SUITE="sid"                      # Debian unstable ships Slurm 26.05, the release the pinned Slinky images run
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES="slurmctld,slurm-client,slurmdbd,mariadb-server"
ROOT="${SLURM_ROOT:-/var/tmp/gpu-cluster/slurm-root-sid}"
STAMP="$ROOT/.gpu-cluster-ready"
WANT="suite=$SUITE packages=$PACKAGES"

if [ -f "$STAMP" ] && [ "$(head -n1 "$STAMP")" = "$WANT" ]; then
  echo "$ROOT"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "error: building the Slurm test root needs root (debootstrap, chroot); run as root or set SLURM_ROOT to a ready root" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

START=$(date +%s)
BUILD="$ROOT.building.$$"
cleanup() { mountpoint -q "$BUILD/proc" 2>/dev/null && umount "$BUILD/proc"; rm -rf "$BUILD"; }
trap cleanup EXIT
mkdir -p "$(dirname "$ROOT")"
# Services must not start inside the root while packages install (mariadb-server's postinst would try).
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$BUILD" "$MIRROR" >"$BUILD.log" 2>&1 || {
  echo "error: debootstrap failed; last lines of $BUILD.log:" >&2; tail -n 20 "$BUILD.log" >&2; exit 1; }
rm -f "$BUILD.log"
grep -q '^127.0.0.1[[:space:]]\+localhost' "$BUILD/etc/hosts" 2>/dev/null || echo "127.0.0.1 localhost" >>"$BUILD/etc/hosts"
mkdir -p "$BUILD/etc/slurm"
mount -t proc proc "$BUILD/proc"
VERSION="$(chroot "$BUILD" slurmctld -V)"
DBD_VERSION="slurmdbd $(chroot "$BUILD" dpkg-query -W -f '${Version}' slurmdbd)"
MARIADB_VERSION="mariadb-server $(chroot "$BUILD" dpkg-query -W -f '${Version}' mariadb-server)"
umount "$BUILD/proc"
{ echo "$WANT"; echo "$VERSION"; echo "$DBD_VERSION"; echo "$MARIADB_VERSION"; echo "built $(date -u +%FT%TZ) in $(( $(date +%s) - START ))s"; } >"$BUILD/.gpu-cluster-ready"
rm -rf "$ROOT"
mv "$BUILD" "$ROOT"
trap - EXIT
echo "slurm root ready: $VERSION, $DBD_VERSION, $MARIADB_VERSION ($(( $(date +%s) - START ))s)" >&2
echo "$ROOT"
