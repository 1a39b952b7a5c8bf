"""Stack outputs: derived facts per pool, for scripts and dashboards."""

from __future__ import annotations

from stacks.plan.facts import PoolFacts


def pool_exports(pools: dict[str, PoolFacts]) -> dict:
    return {
        name: {
            "machineType": f.machine.machine_type,
            "gpuModel": f.machine.gpu_model.value,
            "gpusPerNode": f.gpus_per_node,
            "minNodes": f.min_nodes,
            "maxNodes": f.max_nodes,
            "maxGpus": f.max_gpus,
            "capacity": f.capacity.value,
            "zones": list(f.zones),
            "poolLabel": f.pool_label,
            "tolerations": f.tolerations,
            "usdPerGpuHour": None if f.usd_per_gpu_hour is None else round(f.usd_per_gpu_hour, 4),
            "gpuRuntime": f.resolved_runtime.as_dict(),
        }
        for name, f in pools.items()
    }
