"""Fleet (MultiKueue) objects both sides render the same way: the GPU-model label and the fleet runtimes. Pure.

A job in the fleet names a **fleet runtime**, ``fleet-<gpu model>`` (``fleet-h100-80gb``), and a fleet queue. Every
cluster (manager and workers) installs the same runtime: Kueue on the manager builds the job's Workload from it, the
worker that admits the copy builds its pods from its own copy, and MultiKueue's copy of the Workload must match the
worker's job, so the runtime cannot differ per cluster. It selects nodes by ``gpu-cluster/fleet-gpu=<model>``: each
worker puts that label on its GPU pools' nodes and on their Kueue ResourceFlavors, so the worker's Kueue picks a pool
of that model (and adds the pool's own label), and the manager's flavor per model counts the fleet quota.
"""
from __future__ import annotations

from typing import Any, Mapping

from catalog import GpuModel
from stacks.spec.fleet import FLEET_GPU_LABEL, gpu_slug
from render.trainer import ANCESTOR_LABEL, API_VERSION as TRAINER_API_VERSION, FRAMEWORK_LABEL, TORCH_IMAGE

FLEET_PART_OF = {"app.kubernetes.io/part-of": "gpu-cluster", "gpu-cluster/fleet": "true"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def fleet_runtime_name(model: GpuModel) -> str:
    return f"fleet-{gpu_slug(model)}"


def fleet_runtimes(gpus_per_node: Mapping[GpuModel, int]) -> list[dict[str, Any]]:
    """One ClusterTrainingRuntime per GPU model of the fleet: one pod per node with every GPU of the node, on nodes
    labelled with the model. No fabric settings: NICs and NCCL variables differ per cloud and machine, and the runtime
    must be the same on every cluster (jobs that need GPUDirect or EFA use a worker's own ``torch-<pool>`` runtime)."""
    out = []
    for model, gpus in sorted(gpus_per_node.items(), key=lambda kv: kv[0].value):
        container = {"name": "node", "image": TORCH_IMAGE,
                     "resources": {"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}}}
        pod_spec = {"nodeSelector": {FLEET_GPU_LABEL: gpu_slug(model)}, "tolerations": [dict(GPU_TOLERATION)],
                    "containers": [container]}
        job = {"metadata": {"labels": {ANCESTOR_LABEL: "trainer"}}, "spec": {"template": {"spec": pod_spec}}}
        out.append({
            "apiVersion": TRAINER_API_VERSION, "kind": "ClusterTrainingRuntime",
            "metadata": {"name": fleet_runtime_name(model),
                         "labels": {FRAMEWORK_LABEL: "torch", **FLEET_PART_OF, FLEET_GPU_LABEL: gpu_slug(model)}},
            "spec": {"mlPolicy": {"numNodes": 1, "torch": {}},
                     "template": {"spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": job}]}}},
        })
    return out
