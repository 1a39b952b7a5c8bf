"""The DRA ResourceClaimTemplate through which a job on a GKE-managed fabric pool (``fabric.mode: managed``) gets the
node's RDMA NICs. Pure: no Pulumi.

With ``acceleratorNetworkProfile: auto`` GKE attaches the RDMA NICs to the node, and GKE managed DRANET (node label
``cloud.google.com/gke-networking-dra-driver=true``, GKE ≥ 1.34.1-gke.1829001) publishes them as devices of the
DeviceClass the catalog names (``mrdma.google.com``); a pod sees them only through a ResourceClaim on that class, not
through ``networking.gke.io`` annotations. Shape from GKE's guide "Allocate network resources by using GKE managed
DRANET" (docs.cloud.google.com/kubernetes-engine/docs/how-to/allocate-network-resources-dra, "Deploy a workload RDMA
resources", "Request a specific number of network devices"): ``resource.k8s.io/v1``, one request ``exactly:
{deviceClassName: mrdma.google.com, allocationMode: ExactCount, count: 8}`` - every RDMA NIC of the node (the
catalog's NICs per node), each dedicated to the claiming pod - and the pod's ``resourceClaims[]`` + the container's
``resources.claims[]``. cluster-toolkit's ``gke-node-pool/resource-claim-template.yaml.tftpl`` renders the same
request (``All`` or ``ExactCount``). One pod per node (the ``torch-<pool>`` runtime, the Slinky slurmd) claims them.

GKE's guide asks for the NICs with ``allocationMode: All``; gpu-cluster counts them instead because Kueue (≥ 0.18,
``KueueDRAIntegration`` beta and on) charges every claim of an admitted workload to quota: it holds a workload whose
claim asks for ``All``, or names a DeviceClass without a ``deviceClassMappings`` entry, as inadmissible
(kubernetes-sigs/kueue ``pkg/dra/claims.go``). So the Kueue configuration maps the class to ``KUEUE_RESOURCE`` and the
ClusterQueues give it quota next to the pool's GPUs (``render/kueue.py``).

A pod's ``resourceClaimTemplateName`` is looked up in the pod's own namespace, so the template exists once per
namespace where the pool's jobs run: the team namespaces with quota on the pool (Kubeflow) or the NodeSets'
namespace (Slurm).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from stacks.plan.facts import PoolFacts

API_VERSION = "resource.k8s.io/v1"
"""Served since Kubernetes 1.34 (kubernetes-validate ships it for 1.34 and 1.35); GKE's guides use it for GPU node
pools (only TPUs need the v1beta1/v1beta2 kinds)."""
POD_CLAIM = "rdma"
"""The pod's ``resourceClaims[].name``, which the job's container lists in ``resources.claims``."""
REQUEST = "rdma-nics"
ALLOCATION_MODE = "ExactCount"
KUEUE_RESOURCE = "gpu-cluster/rdma-nics"
"""The quota resource Kueue charges the claim's NICs as (``resources.deviceClassMappings`` name)."""
PART_OF = {"app.kubernetes.io/part-of": "gpu-cluster"}


def claim_template_name(pool: str) -> str:
    return f"rdma-{pool}"


def device_class(pool: PoolFacts) -> str | None:
    """The DeviceClass a job on the pool claims its fabric NICs from; None unless GKE manages the pool's fabric."""
    if pool.fabric is None or not pool.fabric.managed:
        return None
    return pool.fabric.machine.gke_dra_device_class or None


def nics_for_gpus(pool: PoolFacts, gpus: int) -> int:
    """Claimed NICs that go with ``gpus`` GPUs of the pool (whole nodes: one claim of every NIC per node)."""
    assert pool.fabric is not None
    return gpus * pool.fabric.gpu_nics // pool.gpus_per_node


def kueue_device_classes(pools: Sequence[PoolFacts]) -> list[str]:
    """DeviceClasses the pools' jobs claim, for Kueue's ``deviceClassMappings`` (sorted, no duplicates)."""
    return sorted({cls for p in pools if (cls := device_class(p)) is not None})


def pod_claim(pool: PoolFacts) -> dict[str, str] | None:
    """The pod-level ``resourceClaims`` entry (None: the pool's pods need no claim)."""
    if device_class(pool) is None:
        return None
    return {"name": POD_CLAIM, "resourceClaimTemplateName": claim_template_name(pool.name)}


def claim_template(pool: PoolFacts, namespace: str) -> dict[str, Any]:
    cls = device_class(pool)
    if cls is None or pool.fabric is None:
        raise ValueError(f"pool {pool.name}: no GKE-managed fabric, so no DRA claim template")
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": claim_template_name(pool.name),
            "namespace": namespace,
            "labels": {**PART_OF, **pool.pool_label},
        },
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": REQUEST,
                            "exactly": {
                                "deviceClassName": cls,
                                "allocationMode": ALLOCATION_MODE,
                                "count": pool.fabric.gpu_nics,
                            },
                        }
                    ]
                }
            }
        },
    }


def claim_templates(pools: Sequence[PoolFacts], namespaces: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """One template per managed pool and namespace its jobs run in (``namespaces``: pool name -> namespaces)."""
    return [
        claim_template(p, ns)
        for p in pools
        if device_class(p) is not None
        for ns in dict.fromkeys(namespaces.get(p.name, ()))
    ]
