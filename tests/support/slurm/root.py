"""The Debian root ``scripts/slurm-root.sh`` builds for the real-Slurm tests: where it is, whether this process may use
it (root, CAP_SYS_ADMIN to mount /proc, CAP_SYS_CHROOT), which Slurm release it holds, and commands run inside it.

Outside CI a missing root or privilege is a skip with the reason; in CI (``CI=true``) it is a failure.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import pytest

from components.charts import SLURM_RELEASE
from tests.support.peers import refuse_in_quick_loop
from tests.support.slurm.netns import add_namespace, delete_namespace, enter_prefix, missing_netns_privilege

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SCRIPT = PROJECT_ROOT / "scripts" / "slurm-root.sh"


@functools.lru_cache(maxsize=None)
def root_path() -> Path:
    """``$SLURM_ROOT``, else the script's versioned default (``slurm-root-<hash of what it builds>``)."""
    if os.environ.get("SLURM_ROOT"):
        return Path(os.environ["SLURM_ROOT"])
    return Path(
        subprocess.run(
            ["bash", str(SCRIPT), "--path"], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
    )


def missing_privileges() -> str | None:
    """What the build and the tests lack (root, CAP_SYS_ADMIN, CAP_SYS_CHROOT) and how to fix it, or None."""
    out = subprocess.run(["bash", str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60)
    return None if out.returncode == 0 else out.stderr.strip().removeprefix("error: ")


def ensure_root() -> Path:
    """The prepared root, building it when needed; skip (outside CI) or fail (CI) with the reason."""
    refuse_in_quick_loop("real_slurm", "real Slurm (scripts/slurm-root.sh and the Debian root)")
    root = root_path()
    reason = missing_privileges()  # the tests mount /proc and chroot even when the root is built
    if reason is None:
        out = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=1800)
        if out.returncode != 0:  # idempotent: milliseconds when the root is ready
            reason = f"scripts/slurm-root.sh failed: {out.stderr.strip()[-800:]}"
    if reason:
        skip_or_fail(reason)
    return root


def skip_or_fail(reason: str) -> NoReturn:
    """A real-Slurm test that cannot run here: skip with the reason, or fail under ``CI=true`` (in CI a real-peer test
    must never vanish silently)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true, so this is a failure, not a skip", pytrace=False)
    pytest.skip(reason)


def versions(root: Path) -> list[str]:
    """slurmctld -V, slurmdbd and mariadb-server versions, and the Debian suite, as the build recorded them."""
    return (root / ".gpu-cluster-ready").read_text().splitlines()[1:5]


def release_check(version: str, pinned: str = SLURM_RELEASE) -> tuple[str, str]:
    """``slurmctld -V`` output -> ("same" | "newer" | "older", a sentence for the test output).

    Newer is accepted with a notice: it happens when the Debian mirror no longer carries the pinned release (the
    script then builds with the newest), which the project cannot fix. Older is a failure."""
    found = re.search(r"(\d+)\.(\d+)(?:\.\d+)?", version)
    if found is None:
        return "older", f"cannot read a Slurm release from {version!r}"
    have = (int(found.group(1)), int(found.group(2)))
    want = tuple(int(x) for x in pinned.split("."))
    release = f"{have[0]}.{have[1]:02d}"
    if have == want:
        return "same", f"slurmctld {found.group(0)}: the release the pinned Slinky images run ({pinned})"
    if have > want:
        return "newer", (
            f"slurmctld {found.group(0)} is NEWER than the pinned Slinky images' {pinned}: the Debian "
            f"mirror no longer has {pinned}, so the configs were checked by {release}. Options removed "
            f"or changed after {pinned} may show up here first; this is not a failure"
        )
    return "older", (
        f"slurmctld {found.group(0)} is OLDER than the pinned Slinky images' {pinned}: it lacks options "
        "the rendered configs use (rebuild the root: bash scripts/slurm-root.sh)"
    )


def user_ids(root: Path, user: str) -> tuple[int, int]:
    """uid and gid of ``user`` in the root's /etc/passwd (Debian creates slurm and mysql with dynamic ids)."""
    for line in (root / "etc" / "passwd").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == user:
            return int(fields[2]), int(fields[3])
    raise AssertionError(f"no user {user} in {root}/etc/passwd")


_SESSIONS = itertools.count()
RUN_DIRS = ("slurmctld", "slurmdbd", "slurm")
"""Where Slurm 26.05's daemons put their credential socket (``/run/<dir>/sack.socket``), which clients look for."""


@dataclass
class Chroot:
    """Commands in the Debian root, each in this object's own network namespace (``netns``) and with its own
    ``/run/slurmctld``, ``/run/slurmdbd`` and ``/run/slurm`` (``prefix()``): the daemons a test starts through it
    listen there, so another test run's daemons can neither reach them nor take their ports
    (``tests/support/slurm/netns.py``), and its client commands get their auth/slurm credentials from this session's
    daemons only. Slurm's daemons serve credentials on ``/run/<daemon>/sack.socket`` and clients ask whichever socket
    exists there: in a root shared by concurrent runs that was another run's daemon, whose key ours refused
    (``decode_jwt ... failure``, ``REQUEST_PERSIST_INIT has authentication error``). ``close()`` deletes the
    namespace, what still runs in it, and the run directories."""

    root: Path
    mounted_proc: bool = False
    netns: str = field(default_factory=lambda: f"gcs{os.getpid() % 100000}x{next(_SESSIONS)}")

    def __post_init__(self) -> None:
        refuse_in_quick_loop("real_slurm", "real Slurm daemons (a chroot into the Debian root)")
        reason = missing_netns_privilege()
        if reason:
            skip_or_fail(reason)
        add_namespace(self.netns)
        atexit.register(self.close)  # a session that never reached close() leaves nothing
        proc = self.root / "proc"
        if subprocess.run(["mountpoint", "-q", str(proc)]).returncode != 0:
            subprocess.run(["mount", "-t", "proc", "proc", str(proc)], check=True)
            self.mounted_proc = True  # slurmctld 26.05 dies without /proc (readlink of its own binary)
        for run_dir in RUN_DIRS:  # the daemons' run dirs (systemd's RuntimeDirectory=, a pod's own /run elsewhere)
            owner = (0, 0) if run_dir == "slurm" else user_ids(self.root, "slurm")  # slurmd runs as root
            for path in (self.root / "run" / run_dir, self.run_dir / run_dir):  # the mount point, this session's
                path.mkdir(parents=True, exist_ok=True)
                os.chown(path, *owner)

    @property
    def run_dir(self) -> Path:
        """This session's run directories (bound over the root's ``/run/<daemon>`` for its commands)."""
        return self.root / "run" / "gpu-cluster-sessions" / self.netns

    def prefix(self) -> list[str]:
        """What goes before ``chroot ROOT ...`` so a command is this session's: its network namespace, and a private
        mount namespace with the session's run directories bound over the root's."""
        return [*enter_prefix(self.netns), *self.run_prefix()]

    def run_prefix(self) -> list[str]:
        """The private mount namespace alone (a slurmd, already in its node's network namespace, needs only this)."""
        return [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            "src=$1 root=$2; shift 2; for d in " + " ".join(RUN_DIRS) + "; do "
            'mount --bind "$src/$d" "$root/run/$d" || exit 125; done; exec "$@"',
            "sh",
            str(self.run_dir),
            str(self.root),
        ]

    def run(
        self,
        args: list[str],
        conf: str | None = None,
        timeout: float = 60,
        check: bool = False,
        input: str | None = None,
    ) -> subprocess.CompletedProcess:
        env = ["env", f"SLURM_CONF={conf}"] if conf else []
        return subprocess.run(
            [*self.prefix(), "chroot", str(self.root), *env, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
            input=input,
        )

    def popen(self, args: list[str], conf: str | None = None) -> subprocess.Popen:
        env = ["env", f"SLURM_CONF={conf}"] if conf else []
        return subprocess.Popen(
            [*self.prefix(), "chroot", str(self.root), *env, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def close(self) -> None:
        """The namespace goes, with anything still running in it. /proc stays mounted: another test session may be
        using the root right now (scripts/slurm-root.sh unmounts it before a rebuild)."""
        delete_namespace(self.netns)
        shutil.rmtree(self.run_dir, ignore_errors=True)
