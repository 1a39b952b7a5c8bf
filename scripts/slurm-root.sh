#!/usr/bin/env bash
# Build (once) the Debian unstable root whose real Slurm 26.05 checks every rendered Slurm config.
#   bash scripts/slurm-root.sh            # prints the root's path; idempotent (a second run takes milliseconds)
# Needs root and network access to deb.debian.org. The root holds slurmctld, slurm-client, slurmdbd, the JWT auth
# plugin (Slinky configures AuthAltTypes=auth/jwt) and mariadb-server: about 720 MB, 80 s to build.
# Path: $SLURM_ROOT, default /var/tmp/gpu-cluster/slurm-root-sid (shared by every clone on the machine).
# Concurrent runs wait for each other (flock); the tests leave /proc mounted in the root, which is unmounted here
# before a rebuild.
set -euo pipefail
SUITE="sid"                      # Debian unstable ships Slurm 26.05, the release the pinned Slinky images run
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES="slurmctld,slurm-client,slurmdbd,slurm-wlm-jwt-plugin,mariadb-server"
ROOT="${SLURM_ROOT:-/var/tmp/gpu-cluster/slurm-root-sid}"
STAMP="$ROOT/.gpu-cluster-ready"
WANT="suite=$SUITE packages=$PACKAGES"

ready() { [ -f "$STAMP" ] && [ "$(head -n1 "$STAMP")" = "$WANT" ]; }
if ready; then echo "$ROOT"; exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "error: building the Slurm test root needs root (debootstrap, chroot); run as root or set SLURM_ROOT to a ready root" >&2
  exit 1
fi
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9                          # another run may be building the same root: wait for it, then re-check
if ready; then echo "$ROOT"; exit 0; fi
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

unmount_all() {  # every mount below $1 (e.g. the /proc the tests mount), deepest first
  local m
  for m in $(awk -v r="$1/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do umount "$m"; done
}
START=$(date +%s)
BUILD="$ROOT.building.$$"
cleanup() { unmount_all "$BUILD"; rm -rf --one-file-system "$BUILD" "$BUILD.log"; }
trap cleanup EXIT
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$BUILD" "$MIRROR" >"$BUILD.log" 2>&1 || {
  echo "error: debootstrap failed; last lines of $BUILD.log:" >&2; tail -n 20 "$BUILD.log" >&2; exit 1; }
grep -q '^127.0.0.1[[:space:]]\+localhost' "$BUILD/etc/hosts" 2>/dev/null || echo "127.0.0.1 localhost" >>"$BUILD/etc/hosts"
mkdir -p "$BUILD/etc/slurm"
mount -t proc proc "$BUILD/proc"
VERSION="$(chroot "$BUILD" slurmctld -V)"
DBD_VERSION="slurmdbd $(chroot "$BUILD" dpkg-query -W -f '${Version}' slurmdbd)"
MARIADB_VERSION="mariadb-server $(chroot "$BUILD" dpkg-query -W -f '${Version}' mariadb-server)"
umount "$BUILD/proc"
{ echo "$WANT"; echo "$VERSION"; echo "$DBD_VERSION"; echo "$MARIADB_VERSION"
  echo "built $(date -u +%FT%TZ) in $(( $(date +%s) - START ))s"; } >"$BUILD/.gpu-cluster-ready"
if [ -e "$ROOT" ]; then unmount_all "$ROOT"; rm -rf --one-file-system "$ROOT"; fi
mv "$BUILD" "$ROOT"
trap - EXIT
rm -f "$BUILD.log"
echo "slurm root ready: $VERSION, $DBD_VERSION, $MARIADB_VERSION ($(( $(date +%s) - START ))s)" >&2
echo "$ROOT"
