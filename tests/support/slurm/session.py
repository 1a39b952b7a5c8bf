"""The set-up every real-Slurm test module shares: the prepared root (built when needed), the network-namespace
privilege the slurmd cluster needs, one chroot in its own network namespace, one auth/slurm key (this session's
alone: a daemon of another session, even if it reached ours, would fail authentication) and, when asked for, one MariaDB + slurmdbd,
stopped again at the end. Outside CI a missing privilege is a skip with the reason; with ``CI=true`` a failure
(``root.skip_or_fail``)."""

from __future__ import annotations

import secrets
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tests.support.slurm.netns import missing_netns_privilege
from tests.support.slurm.real import SlurmDbd
from tests.support.slurm.root import Chroot, ensure_root, skip_or_fail


@dataclass(frozen=True)
class RealSlurm:
    root: Path
    chroot: Chroot
    key: bytes
    """The auth/slurm key every daemon of the session shares."""
    dbd: SlurmDbd | None
    """MariaDB + slurmdbd, when the session was opened with a ``dbd_name``."""


@contextmanager
def real_slurm(dbd_name: str | None = None) -> Iterator[RealSlurm]:
    """``dbd_name``: start one slurmdbd under that work-directory name (None: no accounting daemon)."""
    root = ensure_root()
    reason = missing_netns_privilege()
    if reason:
        skip_or_fail(reason)
    chroot, key = Chroot(root), secrets.token_bytes(1024)
    try:
        dbd = SlurmDbd(chroot, key, name=dbd_name) if dbd_name is not None else None
    except BaseException:
        chroot.close()
        raise
    try:
        yield RealSlurm(root, chroot, key, dbd)
    finally:
        if dbd is not None:
            dbd.stop()
        chroot.close()
