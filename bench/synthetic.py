"""Synthetic stacks for benchmarks: many pools, written as a real Pulumi.<stack>.yaml config map."""

from __future__ import annotations

from typing import Any

GKE_TYPES = ["a3-highgpu-8g", "a3-megagpu-8g", "a2-highgpu-8g", "a2-ultragpu-8g", "g2-standard-8", "g2-standard-96"]
ZONES = ["us-central1-a", "us-central1-b", "us-central1-c"]


def synthetic_gke_config(pools: int = 200) -> dict[str, Any]:
    node_pools = []
    for i in range(pools):
        machine = GKE_TYPES[i % len(GKE_TYPES)]
        multi = i % 3 == 0
        node_pools.append(
            {
                "name": f"pool-{i:03d}",
                "machineType": machine,
                "zones": [ZONES[i % 3]] if multi else ZONES[:2],
                "minNodes": 0,
                "maxNodes": 4 + i % 5,
                "multiNode": multi,
                "capacity": {"type": "spot" if i % 4 == 1 else "on-demand"},
            }
        )
    return {
        "gpu-cluster:cloud": "gcp",
        "gpu-cluster:project": "bench-project",
        "gpu-cluster:region": "us-central1",
        "gpu-cluster:cluster": {"name": "bench"},
        "gpu-cluster:nodePools": node_pools,
    }
