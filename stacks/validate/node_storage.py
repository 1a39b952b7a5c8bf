"""Node storage rules: local-SSD ephemeral storage only where the machine has local SSDs / NVMe instance store.

Every problem is reported through the pool's scope (``issues.pool(i, name)``), so each message names the pool.
"""

from __future__ import annotations

from typing import Iterable

from catalog import Cloud
from catalog.storage import load_local_ssds
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues


def check_local_ssd(issues: Issues, cloud: Cloud, pools: Iterable[tuple[int, NodePool]]) -> None:
    ssds = load_local_ssds()
    for i, pool in pools:
        if pool.local_ssd_ephemeral_storage is not True or (cloud, pool.machine_type) in ssds:
            continue
        with_ssds = ", ".join(sorted(m for (c, m) in ssds if c == cloud))
        issues.pool(i, pool.name).error(
            "localSsdEphemeralStorage",
            f"{pool.machine_type} comes with no local SSDs to back ephemeral storage",
            True,
            allowed=f"machine types with local SSDs: {with_ssds}",
            fix="remove localSsdEphemeralStorage, or pick a machine type with local SSDs",
        )
