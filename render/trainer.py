"""Pool facts + placements -> Kubeflow Trainer ClusterTrainingRuntimes, and the Trainer chart's Helm values. Pure.

One PyTorch runtime per GPU pool, ``torch-<pool>``: one pod per node with every GPU of the node (Trainer v2.3 starts
one process per requested GPU; its torch policy has no ``numProcPerNode`` any more), the pool's node selector and
tolerations (the GPU taint and the pool's own taints), and, where the pool uses Kueue topology-aware scheduling, the
placement annotation on the pod template; on a fabric pool, what NCCL needs to use the fabric
(``render/fabric_pod.py``). A team submits a TrainJob with ``runtimeRef: torch-<pool>`` and the label
``kueue.x-k8s.io/queue-name: <queue>``; Kueue admits it against the queue's quota in that pool.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from catalog.fabric import FabricKind, load_fabric_catalog
from render.fabric_pod import apply_to_container, apply_to_pod_spec, pod_fabric
from stacks.plan.kueue_topology import Placement, spanning_annotations
from stacks.plan.facts import PoolFacts

API_VERSION = "trainer.kubeflow.org/v1alpha1"
TORCH_IMAGE = "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime"
"""The image Trainer v2's own torch-distributed runtime uses; a TrainJob overrides it with ``spec.trainer.image``."""
TORCH_IMAGE_ARM64 = "nvcr.io/nvidia/pytorch:25.08-py3"
"""arm64 pools (GB200 on Grace): the pytorch/pytorch CUDA images are amd64 only; NGC's PyTorch image has an arm64
(SBSA) variant under the same tag (``catalog/data/image-architectures.csv``)."""
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"


def runtime_name(pool: str) -> str:
    return f"torch-{pool}"


def spanning_runtime_name(pool: str) -> str:
    """The runtime for gangs of whole racks on a GKE pool of several racks (``spanning_annotations``)."""
    return f"torch-{pool}-block"


def runtime_image(pool: PoolFacts) -> str:
    """``fabric.runtimeImage``, else on an EFA pool the catalog's EFA-capable image for the pool's architecture (the
    PyTorch images have no libfabric/aws-ofi-nccl: NCCL would use sockets): the x86 Deep Learning Container in the
    pool's region, on arm64 (GB200) its ARM64 build; else Trainer's PyTorch image (NGC's on arm64)."""
    if pool.fabric is not None and pool.fabric.runtime_image:
        return pool.fabric.runtime_image
    if pool.fabric is not None and pool.fabric.kind == FabricKind.EFA:
        component = "training-image-arm64" if pool.arm64 else "training-image"
        return load_fabric_catalog().image(FabricKind.EFA, component).reference_in(pool.region)
    return TORCH_IMAGE_ARM64 if pool.arm64 else TORCH_IMAGE


def training_runtimes(pools: Sequence[PoolFacts], placements: Mapping[str, Placement]) -> list[dict[str, Any]]:
    """Pools whose GPUs are shared (time-slicing, MPS, MIG) serve inference and notebooks, not distributed
    training, and get no runtime. A GKE pool of several racks whose gangs must stay in one rack also gets
    ``torch-<pool>-block`` for gangs of whole racks (``spanning_annotations``)."""
    out = []
    for p in pools:
        if p.runtime is not None and p.runtime.advertised_per_gpu != 1:
            continue
        out.append(_runtime(p, placements.get(p.name)))
        spanning = spanning_annotations(p, placements.get(p.name))
        if spanning is not None:
            out.append(_runtime(p, None, spanning, spanning_runtime_name(p.name)))
    return out


def _runtime(
    pool: PoolFacts, where: Placement | None, annotations: Mapping[str, str] | None = None, name: str | None = None
) -> dict[str, Any]:
    gpus = pool.gpus_per_node
    pod_meta: dict[str, Any] = {}
    if where is not None and where.annotation is not None:
        key, label = where.annotation
        pod_meta["annotations"] = {key: label}
    if annotations:
        pod_meta["annotations"] = dict(annotations)
    container = {
        "name": "node",
        "image": runtime_image(pool),
        "resources": {"limits": {"nvidia.com/gpu": gpus}, "requests": {"nvidia.com/gpu": gpus}},
    }
    pod_spec: dict[str, Any] = {
        "nodeSelector": dict(pool.pool_label),
        "tolerations": [dict(t) for t in pool.tolerations],
        "containers": [container],
    }
    fabric = pod_fabric(pool)
    if fabric is not None:  # the pool's GPU network: NICs, RxDM sidecar, NCCL env, or EFA devices
        pod_spec = apply_to_pod_spec({**pod_spec, "containers": [apply_to_container(container, fabric)]}, fabric)
        if fabric.annotations:
            pod_meta["annotations"] = {**pod_meta.get("annotations", {}), **fabric.annotations}
    job_template = {
        "metadata": {"labels": {ANCESTOR_LABEL: "trainer"}},
        "spec": {"template": {**({"metadata": pod_meta} if pod_meta else {}), "spec": pod_spec}},
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterTrainingRuntime",
        "metadata": {
            "name": name or runtime_name(pool.name),
            "labels": {FRAMEWORK_LABEL: "torch", "app.kubernetes.io/part-of": "gpu-cluster", **pool.pool_label},
        },
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},  # v2.3: processes per node follow the GPUs the node requests
            "template": {"spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": job_template}]}},
        },
    }


def trainer_values() -> dict[str, Any]:
    """Helm values for the Trainer chart: its CRDs and JobSet come with it; its sample runtimes do not (ours above
    know the pools). Kueue reaches TrainJobs through its ``trainer.kubeflow.org/trainjob`` integration."""
    return {"crds": {"enabled": True}, "jobset": {"install": True}, "runtimes": {"defaultEnabled": False}}
