"""Node storage rules: local-SSD ephemeral storage only where the machine has local SSDs / NVMe instance store."""
from __future__ import annotations

from typing import Iterable

from catalog import Cloud
from catalog.storage import load_local_ssds
from stacks.spec import NodePool
from validation.issues import SpecIssue, path_of


def check_local_ssd(cloud: Cloud, pools: Iterable[tuple[int, NodePool]]) -> list[SpecIssue]:
    issues = []
    ssds = load_local_ssds()
    for i, pool in pools:
        if pool.local_ssd_ephemeral_storage is not True:
            continue
        where = path_of("nodePools", i, "localSsdEphemeralStorage")
        if (cloud, pool.machine_type) not in ssds:
            with_ssds = ", ".join(sorted(m for (c, m) in ssds if c == cloud))
            issues.append(SpecIssue(where, f"{pool.machine_type} comes with no local SSDs to back ephemeral storage",
                                    True, f"machine types with local SSDs: {with_ssds}",
                                    "remove localSsdEphemeralStorage, or pick a machine type with local SSDs"))
    return issues
