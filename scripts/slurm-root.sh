#!/usr/bin/env bash
# Build (once) the Debian root whose real Slurm checks every rendered Slurm config (tests/render/test_slurm_real.py).
#   bash scripts/slurm-root.sh                 build when needed, then print the root's path (idempotent: a second
#                                              run takes milliseconds)
#   bash scripts/slurm-root.sh --path          print the root's path only (no build, no privileges needed)
#   bash scripts/slurm-root.sh --want          print WANT: what a root must have been built for (its stamp's line 1)
#   bash scripts/slurm-root.sh --check         check the privileges the build and the tests need, and say what is
#                                              missing (root, CAP_SYS_ADMIN for mount, CAP_SYS_CHROOT for chroot)
#   bash scripts/slurm-root.sh --choose-suite  print "<suite> <slurmctld version>" the build would use, and why
#
# Which Debian: the first suite of $SUITES whose slurmctld is the Slurm release the pinned Slinky images run
# (SLURM_RELEASE in components/charts.py, 26.05), so a fresh machine still gets 26.05 after sid moves on. When no
# suite has that release any more, the newest suite's newer Slurm is used and the test reports it (the project
# cannot pin what the mirror no longer has; snapshot.debian.org is not reachable from CI). Older than the pinned
# release: refused here, and a failure in the test.
#
# Where: $SLURM_ROOT, or $SLURM_ROOT_BASE (default /var/tmp/gpu-cluster)/slurm-root-<hash of WANT>, shared by every
# clone on the machine. A change of WANT (release, suites, packages) builds a NEW directory; a root another clone's
# tests may be using is never deleted (remove old slurm-root-* directories yourself when no test runs: umount
# ROOT/proc, then rm -rf --one-file-system ROOT). Concurrent runs wait for each other (flock).
# Needs root with CAP_SYS_ADMIN and CAP_SYS_CHROOT (a --privileged container), and deb.debian.org. The root holds
# slurmctld, slurm-client, slurmdbd, the JWT auth plugin (Slinky configures AuthAltTypes=auth/jwt),
# mariadb-server and socat: about 720 MB, 80-130 s to build.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RELEASE="$(sed -n 's/^SLURM_RELEASE = "\([0-9][0-9]*\.[0-9][0-9]*\)".*/\1/p' "$HERE/../components/charts.py")"
[ -n "$RELEASE" ] || { echo "error: no SLURM_RELEASE = \"NN.NN\" in components/charts.py" >&2; exit 1; }
SUITES="${SLURM_ROOT_SUITES:-sid testing}"   # preference order; both have carried Slurm 26.05
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# socat: the rendered Resume/SuspendProgram make their HTTPS requests with it, as in the slurmctld image (no curl)
PACKAGES="slurmctld,slurmd,slurm-client,slurmdbd,slurm-wlm-jwt-plugin,mariadb-server,socat"
WANT="release=$RELEASE suites=${SUITES// /,} packages=$PACKAGES"
BASE="${SLURM_ROOT_BASE:-/var/tmp/gpu-cluster}"
ROOT="${SLURM_ROOT:-$BASE/slurm-root-$(printf '%s' "$WANT" | sha256sum | cut -c1-12)}"
STAMP="$ROOT/.gpu-cluster-ready"

ready() { [ -f "$STAMP" ] && [ "$(head -n1 "$STAMP")" = "$WANT" ]; }

check_privileges() {  # what mount -t proc and chroot need, tried for real on a scratch directory
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: the Slurm test root needs root (debootstrap, mount -t proc, chroot); you are uid $(id -u)." \
      "Fix: sudo bash scripts/slurm-root.sh (CI runs as root), or point SLURM_ROOT at a built root and run the" \
      "tests as root" >&2
    return 1
  fi
  local dir probe err
  dir="$(dirname "$ROOT")"
  mkdir -p "$dir"
  probe="$(mktemp -d "$dir/.privilege-probe.XXXXXX")"
  if ! err="$(mount -t proc proc "$probe" 2>&1)"; then
    rmdir "$probe"
    err="$(tr -s '\n ' '  ' <<<"$err")"
    echo "error: mount -t proc failed ($err): building the root and running slurmctld in it mount /proc, which" \
      "needs CAP_SYS_ADMIN. Fix: run as root on the host, or in a container started with --privileged (docker/podman" \
      "run --privileged; at least --cap-add SYS_ADMIN --security-opt apparmor=unconfined --security-opt" \
      "seccomp=unconfined)" >&2
    return 1
  fi
  umount "$probe"
  rmdir "$probe"
  if ! err="$(chroot / /bin/true 2>&1)"; then
    echo "error: chroot failed ($err): the tests run the daemons with chroot, which needs CAP_SYS_CHROOT. Fix: run" \
      "as root on the host, or in a container started with --privileged (or without --cap-drop SYS_CHROOT)" >&2
    return 1
  fi
}

slurm_version() {  # slurmctld's version in suite $1 on the mirror, or nothing
  wget -qO- "$MIRROR/dists/$1/main/binary-$(dpkg --print-architecture)/Packages.xz" 2>/dev/null | xz -dc 2>/dev/null \
    | awk '/^Package: /{p=$2} /^Version: / && p=="slurmctld"{print $2}' || true
}

release_of() { sed -E 's/^([0-9]+:)?([0-9]+\.[0-9]+).*/\2/' <<<"$1"; }

choose_suite() {  # prints "<suite> <version>"; the pinned release first, else the newest; never older
  local suite version newest="" newest_suite="" seen=""
  for suite in $SUITES; do
    version="$(slurm_version "$suite")"
    seen="$seen $suite=${version:-none}"
    [ -n "$version" ] || continue
    if [ "$(release_of "$version")" = "$RELEASE" ]; then echo "$suite $version"; return 0; fi
    if [ -z "$newest" ] || dpkg --compare-versions "$version" gt "$newest"; then newest="$version"; newest_suite="$suite"; fi
  done
  if [ -z "$newest" ]; then
    echo "error: no slurmctld found on $MIRROR for suites:$seen (network? mirror?)" >&2; return 1
  fi
  if dpkg --compare-versions "$(release_of "$newest")" lt "$RELEASE"; then
    echo "error: no suite on $MIRROR has Slurm $RELEASE or newer (${seen# }); the pinned Slinky images run" \
      "$RELEASE" >&2
    return 1
  fi
  echo "note: no suite on $MIRROR has Slurm $RELEASE any more (${seen# }); using $newest_suite's $newest, NEWER" \
    "than the pinned Slinky images' $RELEASE (the version test reports it)" >&2
  echo "$newest_suite $newest"
}

case "${1:-}" in
  --path) echo "$ROOT"; exit 0 ;;
  --want) echo "$WANT"; exit 0 ;;
  --check) check_privileges; exit $? ;;
  --choose-suite) choose_suite; exit $? ;;
  "") ;;
  *) echo "usage: bash scripts/slurm-root.sh [--path|--want|--check|--choose-suite]" >&2; exit 2 ;;
esac

if ready; then echo "$ROOT"; exit 0; fi
check_privileges
exec 9>"$ROOT.lock"
flock 9                          # another run may be building the same root: wait for it, then re-check
if ready; then echo "$ROOT"; exit 0; fi
if [ -e "$ROOT" ]; then
  # Never delete a root: another clone's tests may be using it. A WANT change gets a new path (hash above).
  echo "error: $ROOT exists but was not built for: $WANT (stamp: $(head -n1 "$STAMP" 2>/dev/null || echo none))." \
    "Remove it when no test uses it (umount $ROOT/proc; rm -rf --one-file-system $ROOT), or set SLURM_ROOT" \
    "elsewhere" >&2
  exit 1
fi
for tool in debootstrap wget xz; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap wget xz-utils >/dev/null
    break
  fi
done

read -r SUITE CHOSEN < <(choose_suite) || exit 1
[ -n "${SUITE:-}" ] || exit 1
unmount_all() {  # every mount below $1, deepest first
  local m
  for m in $(awk -v r="$1/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do umount "$m"; done
}
START=$(date +%s)
BUILD="$ROOT.building.$$"
cleanup() { unmount_all "$BUILD"; rm -rf --one-file-system "$BUILD" "$BUILD.log"; }
trap cleanup EXIT
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$BUILD" "$MIRROR" >"$BUILD.log" 2>&1 || {
  echo "error: debootstrap $SUITE failed; last lines of $BUILD.log:" >&2; tail -n 20 "$BUILD.log" >&2; exit 1; }
grep -q '^127.0.0.1[[:space:]]\+localhost' "$BUILD/etc/hosts" 2>/dev/null || echo "127.0.0.1 localhost" >>"$BUILD/etc/hosts"
mkdir -p "$BUILD/etc/slurm"
mount -t proc proc "$BUILD/proc"
VERSION="$(chroot "$BUILD" slurmctld -V)"
DBD_VERSION="slurmdbd $(chroot "$BUILD" dpkg-query -W -f '${Version}' slurmdbd)"
MARIADB_VERSION="mariadb-server $(chroot "$BUILD" dpkg-query -W -f '${Version}' mariadb-server)"
INSTALLED="$(chroot "$BUILD" dpkg-query -W -f '${Version}' slurmctld)"
umount "$BUILD/proc"
if [ "$INSTALLED" != "$CHOSEN" ]; then  # the mirror moved between the index read and debootstrap: still usable
  echo "note: $SUITE's index said slurmctld $CHOSEN, debootstrap installed $INSTALLED" >&2
fi
# Stamp: WANT, then what was installed (tests/conftest.py and tests/support/slurm/root.py read lines 2-5).
{ echo "$WANT"; echo "$VERSION"; echo "$DBD_VERSION"; echo "$MARIADB_VERSION"; echo "suite $SUITE"
  echo "built $(date -u +%FT%TZ) in $(( $(date +%s) - START ))s"; } >"$BUILD/.gpu-cluster-ready"
mv "$BUILD" "$ROOT"
trap - EXIT
rm -f "$BUILD.log"
echo "slurm root ready: $VERSION ($SUITE), $DBD_VERSION, $MARIADB_VERSION ($(( $(date +%s) - START ))s)" >&2
echo "$ROOT"
