"""IMEX channels for jobs on rack-scale NVLink pools (GB200 NVL72) through the NVIDIA DRA driver's ComputeDomains.
Pure: no Pulumi.

GPUs on different nodes of one NVL72 rack reach each other over NVLink only through IMEX channels. A
``ComputeDomain`` (``resource.nvidia.com/v1beta1``) makes the driver's controller create a ResourceClaimTemplate
(``spec.channel.resourceClaimTemplate.name``) whose claim gives a pod an IMEX channel, and start IMEX daemons on the
nodes the claiming pods land on; every worker pod lists the template in ``resourceClaims`` and its container in
``resources.claims`` (kubernetes-sigs/dra-driver-nvidia-gpu ``api/nvidia.com/resource/v1beta1/computedomain.go``,
``demo/specs/imex``; cluster-toolkit ``examples/gke-a4x/nccl-jobset-example.yaml``; shared facts
fleet-nvl72-podstart-research.md §2.2). ``numNodes: 0`` is the elastic form the driver recommends with its
``IMEXDaemonsWithDNSNames`` gate (default on from v25.8 / 0.2): the domain follows the pods, so one object serves
gangs of any size.

Which ComputeDomain a job gets. The documented practice is one ComputeDomain per job. Kubeflow Trainer v2.3's
TrainJob cannot add pod resource claims (its ``runtimePatches`` allow affinity, nodeSelector, tolerations, volumes,
containers' env/volumeMounts/securityContext, … but no ``resourceClaims`` or container ``resources``: checked against
the v2.3.0 TrainJob CRD), and a ClusterTrainingRuntime's pods look the template up in the TrainJob's namespace. So:

- every namespace whose queue has quota on the pool gets the ComputeDomain ``<pool>-imex`` and the
  ``torch-<pool>`` runtime claims its channel: jobs of one team share that IMEX domain, teams never do;
- a job that needs its own domain uses :func:`job_objects`: a ComputeDomain ``<job>-imex`` and a namespaced
  ``TrainingRuntime`` ``torch-<pool>-<job>`` (the pool's runtime with the claim pointed at the job's channel);
- a Slinky NodeSet's slurmd pods are long-lived, so the pool's NodeSet claims the channel of ``<pool>-imex`` in the
  Slurm namespace once; Slurm jobs share the NodeSet's domain.

Kueue charges every DRA claim of an admitted workload to quota and holds one on an unmapped DeviceClass as
inadmissible (``render/fabric_claim.py``), so the channel DeviceClass maps to ``KUEUE_RESOURCE`` with one channel
per node of quota.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Sequence

from stacks.plan.facts import PoolFacts

API_VERSION = "resource.nvidia.com/v1beta1"
KIND = "ComputeDomain"
CHANNEL_DEVICE_CLASS = "compute-domain-default-channel.nvidia.com"
"""The DeviceClass of the IMEX channel the controller's template requests (the driver's ``docs/install.md``)."""
POD_CLAIM = "imex-channel"
"""The pod's ``resourceClaims[].name``, listed in the job container's ``resources.claims``."""
KUEUE_RESOURCE = "gpu-cluster/imex-channels"
"""The quota resource Kueue charges channel claims as (``resources.deviceClassMappings``): one per pod = per node."""
ALLOCATION_MODE = "Single"
"""One channel per claim (the driver's default; ``All`` hands a pod every channel of the node)."""
PART_OF = {"app.kubernetes.io/part-of": "gpu-cluster"}


def uses_compute_domains(pool: PoolFacts) -> bool:
    return pool.nvlink is not None and pool.nvlink.compute_domains


def compute_domain_name(pool: str) -> str:
    return f"{pool}-imex"


def channel_template_name(domain: str) -> str:
    """The ResourceClaimTemplate the ComputeDomain's controller creates for its channel."""
    return f"{domain}-channel"


def pod_claim(pool: PoolFacts, domain: str | None = None) -> dict[str, str] | None:
    """The pod-level ``resourceClaims`` entry of the pool's jobs (None: the pool needs no IMEX channel)."""
    if not uses_compute_domains(pool):
        return None
    return {
        "name": POD_CLAIM,
        "resourceClaimTemplateName": channel_template_name(domain or compute_domain_name(pool.name)),
    }


def compute_domain(
    pool: PoolFacts, namespace: str, name: str | None = None, labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    if not uses_compute_domains(pool):
        raise ValueError(f"pool {pool.name}: no rack-scale NVLink domain with ComputeDomains")
    name = name or compute_domain_name(pool.name)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name, "namespace": namespace, "labels": {**PART_OF, **pool.pool_label, **(labels or {})}},
        "spec": {
            "numNodes": 0,  # elastic: follows the pods that claim the channel (spec is immutable)
            "channel": {
                "resourceClaimTemplate": {"name": channel_template_name(name)},
                "allocationMode": ALLOCATION_MODE,
            },
        },
    }


def compute_domains(pools: Sequence[PoolFacts], namespaces: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """One ComputeDomain per rack-scale pool and namespace its jobs run in (``namespaces``: pool -> namespaces)."""
    return [
        compute_domain(p, ns)
        for p in pools
        if uses_compute_domains(p)
        for ns in dict.fromkeys(namespaces.get(p.name, ()))
    ]


def channels_for_gpus(pool: PoolFacts, gpus: int) -> int:
    """Channel claims that go with ``gpus`` GPUs of the pool: one per pod, one pod per node."""
    return -(-gpus // pool.gpus_per_node)


def kueue_device_classes(pools: Sequence[PoolFacts]) -> list[str]:
    return [CHANNEL_DEVICE_CLASS] if any(uses_compute_domains(p) for p in pools) else []


def job_objects(pool: PoolFacts, runtime: dict[str, Any], job: str, namespace: str) -> list[dict[str, Any]]:
    """A job's own IMEX domain: a ComputeDomain ``<job>-imex`` and a namespaced TrainingRuntime
    ``<runtime>-<job>`` (``runtime``: the pool's ClusterTrainingRuntime) whose pods claim that domain's channel. The
    TrainJob names it with ``runtimeRef: {kind: TrainingRuntime, name: …}``."""
    domain = compute_domain(pool, namespace, name=compute_domain_name(job), labels={"gpu-cluster/job": job})
    out = copy.deepcopy(runtime)
    out["kind"] = "TrainingRuntime"
    out["metadata"] = {**out["metadata"], "name": f"{runtime['metadata']['name']}-{job}", "namespace": namespace}
    wanted = channel_template_name(domain["metadata"]["name"])
    found = 0
    for rjob in out["spec"]["template"]["spec"]["replicatedJobs"]:
        for claim in rjob["template"]["spec"]["template"]["spec"].get("resourceClaims", []):
            if claim["name"] == POD_CLAIM:
                claim["resourceClaimTemplateName"] = wanted
                found += 1
    if not found:
        raise ValueError(f"runtime {runtime['metadata']['name']} claims no IMEX channel ({POD_CLAIM})")
    return [domain, out]
