"""The set-up every real-Slurm test shares: the Debian root with Slurm 26.05 (skip when this process cannot run daemons
in it, a failure with ``CI=true``), a fresh munge-less auth key, and a slurmdbd for clusters with accounting, stopped
when the test module is done. Used by ``tests/render/test_fabric_task_env_real.py`` and
``tests/whatif/test_whatif_real_slurm.py``."""
from __future__ import annotations

import os
import secrets
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.slurm.netns import missing_netns_privilege
from tests.support.slurm.real import SlurmDbd
from tests.support.slurm.root import Chroot, ensure_root


def real_slurm_root() -> Path:
    """The root, or skip (outside CI) / fail (``CI=true``) when the daemons' network namespaces cannot be made."""
    root = ensure_root()
    reason = missing_netns_privilege()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true, so this is a failure, not a skip", pytrace=False)
        pytest.skip(reason)
    return root


@dataclass(frozen=True)
class RealSlurm:
    root: Path
    chroot: Chroot
    key: bytes
    """The ``auth/slurm`` key every daemon of the session shares."""
    dbd: SlurmDbd | None


@contextmanager
def real_slurm(dbd_name: str | None) -> Iterator[RealSlurm]:
    """The root, a key and (``dbd_name`` given) a slurmdbd named so, stopped on exit."""
    root = real_slurm_root()
    chroot, key = Chroot(root), secrets.token_bytes(1024)
    dbd = SlurmDbd(chroot, key, name=dbd_name) if dbd_name is not None else None
    try:
        yield RealSlurm(root, chroot, key, dbd)
    finally:
        if dbd is not None:
            dbd.stop()
