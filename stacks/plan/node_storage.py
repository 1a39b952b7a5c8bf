"""Derived node storage of a pool: how many of the machine's local SSDs back its ephemeral storage. Pure."""

from __future__ import annotations

from catalog import Cloud
from catalog.storage import load_local_ssds
from stacks.spec.stack import NodePool


def instance_store_raid(cloud: Cloud, pool: NodePool) -> bool:
    """EKS: whether the node's NVMe instance store backs containerd and the kubelet (RAID0 by nodeadm)."""
    return (
        cloud == Cloud.AWS
        and (cloud, pool.machine_type) in load_local_ssds()
        and pool.local_ssd_ephemeral_storage is not False
    )


def ephemeral_local_ssds(cloud: Cloud, pool: NodePool) -> int | None:
    """The local SSD count for GKE's ``ephemeral_storage_local_ssd_config``, or None (boot disk backs it)."""
    ssds = load_local_ssds().get((cloud, pool.machine_type))
    if cloud != Cloud.GCP or ssds is None or pool.local_ssd_ephemeral_storage is False:
        return None
    return ssds.count
