"""Fleet (MultiKueue) objects both sides render the same way: the GPU-model label and the fleet runtimes. Pure.

A job in the fleet names a **fleet runtime**, ``fleet-<gpu model>`` (``fleet-h100-80gb``), and a fleet queue. Every
cluster (manager and workers) installs the same runtime: Kueue on the manager builds the job's Workload from it, the
worker that admits the copy builds its pods from its own copy, and MultiKueue's copy of the Workload must match the
worker's job, so the runtime cannot differ per cluster. It selects nodes by ``gpu-cluster/fleet-gpu=<model>``: each
worker puts that label on its GPU pools' nodes and on their Kueue ResourceFlavors, so the worker's Kueue picks a pool
of that model (and adds the pool's own label), and the manager's flavor per model counts the fleet quota.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

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
        container = {
            "name": "node",
            "image": TORCH_IMAGE,
            "resources": {"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}},
        }
        pod_spec = {
            "nodeSelector": {FLEET_GPU_LABEL: gpu_slug(model)},
            "tolerations": [dict(GPU_TOLERATION)],
            "containers": [container],
        }
        job = {"metadata": {"labels": {ANCESTOR_LABEL: "trainer"}}, "spec": {"template": {"spec": pod_spec}}}
        out.append(
            {
                "apiVersion": TRAINER_API_VERSION,
                "kind": "ClusterTrainingRuntime",
                "metadata": {
                    "name": fleet_runtime_name(model),
                    "labels": {FRAMEWORK_LABEL: "torch", **FLEET_PART_OF, FLEET_GPU_LABEL: gpu_slug(model)},
                },
                "spec": {
                    "mlPolicy": {"numNodes": 1, "torch": {}},
                    "template": {"spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": job}]}},
                },
            }
        )
    return out


def runtime_pod_template(runtime: dict[str, Any]) -> dict[str, Any]:
    """The pod template of a fleet runtime's one replicated job (what Kueue builds the job's PodSet from)."""
    job = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]
    return job["spec"]["template"]


def admission_facts(
    sched: Any, pools: Sequence[Any], placements: Mapping[str, Any], gpus_per_node: Mapping[GpuModel, int]
) -> dict[str, Any]:
    """What a worker's Kueue decides admission from, for the manager's checks (``stacks/plan/fleet_admission.py``):
    its ResourceFlavors and Topologies, each ClusterQueue's resource groups, cohort and fungibility, and the PodSet of
    each fleet runtime (count and pod template), as rendered on this worker."""
    from render.kueue import render_kueue  # lazy: the fleet runtimes alone need none of the scheduling layer

    objects = render_kueue(sched, pools, placements, namespaces=False)
    keep = ("resourceGroups", "cohortName", "flavorFungibility")
    return {
        "flavors": [{"metadata": {"name": f["metadata"]["name"]}, "spec": f["spec"]} for f in objects.flavors],
        "flavorPools": {flavor: pool for pool, flavor in objects.flavor_names().items()},
        "topologies": [{"metadata": {"name": t["metadata"]["name"]}, "spec": t["spec"]} for t in objects.topologies],
        "queues": {
            cq["metadata"]["name"]: {
                "metadata": {"name": cq["metadata"]["name"]},
                "spec": {k: v for k, v in cq["spec"].items() if k in keep},
            }
            for cq in objects.cluster_queues
        },
        "runtimes": {
            model.value: {
                "name": rt["metadata"]["name"],
                "count": rt["spec"]["mlPolicy"]["numNodes"],
                "template": runtime_pod_template(rt),
            }
            for model, rt in zip(sorted(gpus_per_node, key=lambda m: m.value), fleet_runtimes(gpus_per_node))
        },
    }
