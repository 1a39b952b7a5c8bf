"""The default of a pool's ``multiNode``: on for a pool bought for jobs that span nodes, so a minimal stack gets the
compact placement and GPU fabric the policy pack's ``topology-multi-node-placement`` asks of such a pool, instead of
a mandatory violation about a setting the user never wrote."""

from __future__ import annotations

from typing import Any

from catalog import Catalog, Cloud, GpuDirect

HGX_MIN_GPUS = 8
MULTI_NODE_MIN_NODES = 4
"""The pack's ``topology-multi-node-placement.minNodes`` default (``policies/multinode.py``): an HGX-class pool that
can reach this many nodes is a multi-node pool. A test keeps the two equal."""


def _shared(runtime: Any) -> bool:
    sharing = runtime.get("sharing") if isinstance(runtime, dict) else None
    return isinstance(sharing, dict) and sharing.get("mode", "none") != "none"


def defaults_multi_node(pool: Any, cloud: Cloud | None, cat: Catalog, stack_runtime: Any = None) -> bool:
    """True when ``multiNode`` is omitted on a pool of one zone, of an HGX-class machine (8+ GPUs and a
    GPUDirect/EFA fabric) with whole GPUs, that can reach ``MULTI_NODE_MIN_NODES`` nodes. A pool over several zones
    keeps false (compact placement cannot span zones; the pack names the zones the user wrote)."""
    if cloud is None or not isinstance(pool, dict) or "multiNode" in pool:
        return False
    machine_type, zones, max_nodes = pool.get("machineType"), pool.get("zones"), pool.get("maxNodes")
    if not isinstance(machine_type, str) or not isinstance(zones, list) or len(zones) != 1:
        return False
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < MULTI_NODE_MIN_NODES:
        return False
    if _shared(pool.get("gpuRuntime")) or _shared(stack_runtime):
        return False
    machine = cat.resolve(cloud, machine_type, None, None)
    return machine is not None and machine.gpus >= HGX_MIN_GPUS and machine.gpudirect != GpuDirect.NONE


def with_multi_node_defaults(raw: dict[str, Any], cat: Catalog) -> dict[str, Any]:
    """``raw`` with ``multiNode: true`` written into each pool the default makes multi-node (a copy; else ``raw``)."""
    try:
        cloud = Cloud(raw.get("cloud"))
    except ValueError:
        return raw
    pools = raw.get("nodePools")
    if not isinstance(pools, list):
        return raw
    runtime = raw.get("gpuRuntime")
    if not any(defaults_multi_node(p, cloud, cat, runtime) for p in pools):
        return raw
    return {
        **raw,
        "nodePools": [{**p, "multiNode": True} if defaults_multi_node(p, cloud, cat, runtime) else p for p in pools],
    }
