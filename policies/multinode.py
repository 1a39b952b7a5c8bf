"""When a pool is multi-node: it says so (compact placement, a placement group, EFA interfaces), or it is an
HGX-class machine with a GPUDirect/EFA fabric that can grow past one node."""

from __future__ import annotations

from catalog import Cloud, GpuDirect, MachineType
from policies.pools import PoolView
from policies.rule import Resource
from policies.values import as_list, dig

HGX_MIN_GPUS = 8
EFA_INTERFACE_TYPES = ("efa", "efa-only")
"""``efa`` (EFA + ENA, with an IP) on card 0, ``efa-only`` (no IP) on the other cards: both are EFA devices."""
MIN_NODES_SCHEMA = {
    "type": "integer",
    "minimum": 2,
    "default": 4,
    "description": (
        "An HGX-class pool (8+ GPUs and a GPUDirect/EFA fabric, GPUs not partitioned) that can reach "
        "this many nodes counts as multi-node even without compact placement."
    ),
}
SHARING_LABELS = ("nvidia.com/mig.config", "nvidia.com/device-plugin.config")
"""Node labels the GPU Operator / device plugin read for MIG layouts and time-slicing configs."""


def fabric_machine(machine: MachineType | None) -> bool:
    return machine is not None and machine.gpus >= HGX_MIN_GPUS and machine.gpudirect != GpuDirect.NONE


def efa_interfaces(template: Resource | None) -> list[dict]:
    if template is None:
        return []
    return [
        n
        for n in as_list(template.props.get("networkInterfaces"))
        if isinstance(n, dict) and n.get("interfaceType") in EFA_INTERFACE_TYPES
    ]


def declared_multi_node(view: PoolView, template: Resource | None) -> bool:
    if view.cloud == Cloud.GCP:
        return dig(view.resource.props, "placementPolicy", "type") == "COMPACT"
    return bool(template is not None and (dig(template.props, "placement", "groupName") or efa_interfaces(template)))


def partitioned(view: PoolView) -> bool:
    """GPUs split into MIG instances or time-sliced: such pools serve slices of a GPU, never multi-node jobs."""
    labels = view.labels
    if any(isinstance(labels.get(k), str) and labels[k] not in ("", "all-disabled") for k in SHARING_LABELS):
        return True
    return any(a.get("gpuPartitionSize") or a.get("gpuSharingConfig") for a in view.accelerators)


def is_multi_node(view: PoolView, machine: MachineType | None, template: Resource | None, min_nodes: int) -> bool:
    if declared_multi_node(view, template):
        return True
    return (
        fabric_machine(machine)
        and not partitioned(view)
        and isinstance(view.max_nodes, int)
        and view.max_nodes >= min_nodes
    )
