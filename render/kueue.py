"""Scheduling spec + pool facts -> Kueue objects (plain dicts, exactly as applied to the API server). Pure: no Pulumi.

One ResourceFlavor per GPU pool selects the pool by its ``gpu-cluster/pool`` label and tolerates the pool's taints
(the GPU taint and every extra one); fixed-size pools also reference a Topology. One ClusterQueue per queue holds its
GPU quota per pool (in quota order, which is Kueue's flavor preference order); one LocalQueue in the team's namespace
points at it; the Cohort and the WorkloadPriorityClasses come straight from the spec. Only ``nvidia.com/gpu`` is a covered resource: the manager
configuration tells Kueue to ignore CPU and memory (see ``render/kueue_config.py``). Quotas are physical GPUs;
on pools that share GPUs they are multiplied by the slices each GPU advertises.

ResourceFlavors and Topologies are named ``<pool or topology>-<hash>``, the hash taken over the fields Kueue will not
let change (``REPLACED_FIELDS``). Kueue keeps the ``kueue.x-k8s.io/resource-in-use`` finalizer on a flavor while a
ClusterQueue names it (and on a Topology while a flavor names it), so deleting the old object first and recreating it
under the same name would wait forever. With a new name, Pulumi's default replacement creates the new object, updates
the ClusterQueues (or flavors) to point at it, and deletes the old one last, once nothing references it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from render.compute_domain import KUEUE_RESOURCE as CHANNEL_RESOURCE, channels_for_gpus, uses_compute_domains
from render.fabric_claim import KUEUE_RESOURCE, device_class, nics_for_gpus
from render.kueue_provisioning import admission_checks_strategy, provisioning_objects
from stacks.plan.kueue_topology import Placement, namespace_of, pool_placements
from stacks.plan.facts import PoolFacts
from stacks.spec.scheduling import PoolQuota, Queue, SchedulingSpec

API_VERSION = "kueue.x-k8s.io/v1beta2"
GPU_RESOURCE = "nvidia.com/gpu"
PART_OF = {"app.kubernetes.io/part-of": "gpu-cluster"}
TEAM_NAMESPACE_PSS = {
    "pod-security.kubernetes.io/enforce": "baseline",
    "pod-security.kubernetes.io/warn": "restricted",
    "pod-security.kubernetes.io/audit": "restricted",
}
"""Team namespaces run user code: baseline enforced (no privileged pods), restricted reported."""
FABRIC_NAMESPACE_PSS = {**TEAM_NAMESPACE_PSS, "pod-security.kubernetes.io/enforce": "privileged"}
"""A team with quota on a GKE GPUDirect pool: its jobs mount the fabric's host paths (NCCL plugin, aperture devices)
and TCPX/TCPXO's RxDM sidecar adds NET_ADMIN, which Pod Security baseline refuses and cannot make an exception for.
So Pod Security admission is told ``privileged`` and baseline is enforced by the ValidatingAdmissionPolicy the
annotation names (``render/admission.py``), which admits exactly the fabric's needs on top; the policy pack
refuses such a namespace without that policy bound to it."""
ADMISSION_ANNOTATION = "gpu-cluster/admission-policy"
REPLACED_FIELDS: dict[str, tuple[str, ...]] = {
    "ResourceFlavor": ("spec.nodeLabels", "spec.nodeTaints", "spec.tolerations", "spec.topologyName"),
    "Topology": ("spec.levels",),
}
"""Per kind, the fields whose change replaces the object (Kueue's CRDs make them immutable) and that its name hashes."""
NAME_HASH_LENGTH = 8


@dataclass
class KueueObjects:
    namespaces: list[dict[str, Any]] = field(default_factory=list)
    """Core v1 Namespaces of the teams (LocalQueues live there)."""
    topologies: list[dict[str, Any]] = field(default_factory=list)
    flavors: list[dict[str, Any]] = field(default_factory=list)
    cohort: dict[str, Any] | None = None
    priority_classes: list[dict[str, Any]] = field(default_factory=list)
    provisioning_configs: list[dict[str, Any]] = field(default_factory=list)
    """ProvisioningRequestConfig per queued pool (``render/kueue_provisioning.py``)."""
    admission_checks: list[dict[str, Any]] = field(default_factory=list)
    """ProvisioningRequest AdmissionCheck per queued pool; the ClusterQueues with quota there name it."""
    cluster_queues: list[dict[str, Any]] = field(default_factory=list)
    local_queues: list[dict[str, Any]] = field(default_factory=list)
    placements: dict[str, Placement] = field(default_factory=dict)
    """Pool name -> how its gangs are placed (also read by the Trainer runtimes and the preview)."""

    def custom_resources(self) -> list[dict[str, Any]]:
        """Kueue objects in an order that satisfies their references (topology before flavor, config before check,
        both before queue)."""
        return [
            *self.topologies,
            *self.flavors,
            *self.provisioning_configs,
            *self.admission_checks,
            *([self.cohort] if self.cohort else []),
            *self.priority_classes,
            *self.cluster_queues,
            *self.local_queues,
        ]

    def flavor_names(self) -> dict[str, str]:
        """Pool name -> name of its ResourceFlavor object."""
        return {base_name(f): f["metadata"]["name"] for f in self.flavors}


def slices_per_gpu(pool: PoolFacts) -> int:
    """``nvidia.com/gpu`` units per physical GPU: 1, or the time-slicing/MPS replicas or MIG instances of a shared
    pool. Quotas are written in physical GPUs; Kueue counts what the device plugin advertises."""
    return pool.runtime.advertised_per_gpu if pool.runtime is not None else 1


def content_name(base: str, kind: str, body: dict[str, Any]) -> str:
    """``<base>-<hash>``: the hash covers exactly the fields of ``REPLACED_FIELDS[kind]`` (absent ones as null), so
    changing one of them renames the object and anything else keeps the name."""
    picked = {}
    for path in REPLACED_FIELDS[kind]:
        value: Any = body
        for step in path.split("."):
            value = value.get(step) if isinstance(value, dict) else None
        picked[path] = value
    digest = hashlib.sha256(json.dumps(picked, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return f"{base}-{digest[:NAME_HASH_LENGTH]}"


def base_name(obj: dict[str, Any]) -> str:
    """The stable part of an object's name: the pool or topology of a content-named object, else the name itself."""
    name = obj["metadata"]["name"]
    return name.rsplit("-", 1)[0] if obj["kind"] in REPLACED_FIELDS else name


def render_kueue(
    spec: SchedulingSpec,
    pools: Sequence[PoolFacts],
    placements: Mapping[str, Placement] | None = None,
    namespaces: bool = True,
) -> KueueObjects:
    """``placements``: the plan's (``StackPlan.kueue.placements``); computed here only when a caller has none.
    ``namespaces=False``: no team Namespaces (the what-if reads the queues and flavors only, and skips the pods'
    fabric and the admission policy modules the Namespaces need)."""
    out = KueueObjects()
    by_name = {p.name: p for p in pools}
    out.placements = dict(placements) if placements is not None else pool_placements(spec, pools)
    out.topologies = _topologies(out.placements.values())
    topology_names = {base_name(t): t["metadata"]["name"] for t in out.topologies}
    out.flavors = [_flavor(p, out.placements[p.name], topology_names) for p in pools]
    flavor_names = out.flavor_names()
    if spec.cohort:
        out.cohort = _obj("Cohort", spec.cohort, spec={})
    out.priority_classes = [
        _obj(
            "WorkloadPriorityClass",
            pc.name,
            value=pc.value,
            **({"description": pc.description} if pc.description else {}),
        )
        for pc in spec.priority_classes
    ]
    out.provisioning_configs, out.admission_checks = provisioning_objects(pools, _obj)
    out.cluster_queues = [_cluster_queue(spec, q, by_name, flavor_names) for q in spec.queues]
    out.local_queues = [
        _obj("LocalQueue", q.name, namespace=namespace_of(q), spec={"clusterQueue": q.name}) for q in spec.queues
    ]
    if not namespaces:
        return out
    from render.admission import FABRIC_POLICY  # lazy: see ``namespaces``

    fabric_ns = set(host_fabric_namespaces(spec, pools))
    for ns in dict.fromkeys(namespace_of(q) for q in spec.queues):
        meta: dict[str, Any] = {
            "name": ns,
            "labels": {**PART_OF, **(FABRIC_NAMESPACE_PSS if ns in fabric_ns else TEAM_NAMESPACE_PSS)},
        }
        if ns in fabric_ns:
            meta["annotations"] = {ADMISSION_ANNOTATION: FABRIC_POLICY}
        out.namespaces.append({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
    return out


def host_fabric_namespaces(spec: SchedulingSpec, pools: Sequence[PoolFacts]) -> list[str]:
    """Team namespaces whose queues have quota on a pool whose fabric needs host access (GKE GPUDirect), in order."""
    from render.fabric_pod import pod_fabric  # lazy: only the Namespaces need the pods' fabric

    host_fabric = {p.name for p in pools if (f := pod_fabric(p)) is not None and f.host_access}
    return [
        ns
        for ns in dict.fromkeys(namespace_of(q) for q in spec.queues)
        if any(qt.pool in host_fabric for q in spec.queues if namespace_of(q) == ns for qt in q.quotas)
    ]


def _obj(kind: str, name: str, namespace: str | None = None, **body: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(PART_OF)}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": meta, **body}


def _topologies(placements: Iterable[Any]) -> list[dict[str, Any]]:
    seen: dict[str, tuple[str, ...]] = {}
    for p in placements:
        if p.topology:
            seen.setdefault(p.topology, p.levels)
    out = []
    for name, levels in sorted(seen.items()):
        body: dict[str, Any] = {"spec": {"levels": [{"nodeLabel": label} for label in levels]}}
        out.append(_obj("Topology", content_name(name, "Topology", body), **body))
    return out


def _flavor(pool: PoolFacts, where: Placement, topology_names: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeLabels": dict(pool.pool_label), "tolerations": [dict(t) for t in pool.tolerations]}
    if where.topology:
        spec["topologyName"] = topology_names[where.topology]
    return _obj("ResourceFlavor", content_name(pool.name, "ResourceFlavor", {"spec": spec}), spec=spec)


def _cluster_queue(
    spec: SchedulingSpec, queue: Queue, pools: dict[str, PoolFacts], flavor_names: dict[str, str]
) -> dict[str, Any]:
    flavors: list[dict[str, Any]] = []
    for quota in queue.quotas:
        if quota.pool not in pools:
            raise KeyError(f"queue {queue.name}: pool {quota.pool} is not a GPU pool (spec not validated?)")
        per_gpu = slices_per_gpu(pools[quota.pool])
        res: dict[str, Any] = {"name": GPU_RESOURCE, "nominalQuota": quota.gpus * per_gpu}
        if quota.borrowing_limit is not None:
            res["borrowingLimit"] = quota.borrowing_limit * per_gpu
        if quota.lending_limit is not None:
            res["lendingLimit"] = quota.lending_limit * per_gpu
        flavors.append({"name": flavor_names[quota.pool], "resources": [res]})
    covered = [GPU_RESOURCE]
    if any(device_class(pools[q.pool]) is not None for q in queue.quotas):
        covered.append(KUEUE_RESOURCE)  # every flavor of the group lists it: 0 on pools that claim no NICs
        for quota, flavor in zip(queue.quotas, flavors):
            flavor["resources"].append(_nic_quota(pools[quota.pool], quota))
    if any(uses_compute_domains(pools[q.pool]) for q in queue.quotas):
        covered.append(CHANNEL_RESOURCE)  # IMEX channel claims: one per node the GPU quota buys, 0 elsewhere
        for quota, flavor in zip(queue.quotas, flavors):
            flavor["resources"].append(_channel_quota(pools[quota.pool], quota))
    body: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace_of(queue)}},
        "queueingStrategy": spec.queueing_strategy.value,
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
        "preemption": {"withinClusterQueue": spec.preemption.within_queue.value},
    }
    if spec.flavor_fungibility.model_fields_set:  # Kueue's defaults otherwise (the CRD's)
        fung = spec.flavor_fungibility
        body["flavorFungibility"] = {
            "whenCanBorrow": fung.when_can_borrow.value,
            "whenCanPreempt": fung.when_can_preempt.value,
        }
    checks = admission_checks_strategy(queue, pools, flavor_names)
    if checks is not None:
        body["admissionChecksStrategy"] = checks
    if spec.cohort:
        body["cohortName"] = spec.cohort
        body["preemption"]["reclaimWithinCohort"] = spec.preemption.reclaim_within_cohort.value
        borrow = spec.preemption.borrow_within_cohort
        if borrow is not None:
            body["preemption"]["borrowWithinCohort"] = borrow.model_dump(by_alias=True, exclude_none=True, mode="json")
        if spec.fair_sharing:
            body["fairSharing"] = {"weight": queue.fair_share_weight}
    return _obj("ClusterQueue", queue.name, spec=body)


def _channel_quota(pool: PoolFacts, quota: PoolQuota) -> dict[str, Any]:
    """Quota for the IMEX channel claims of a rack-scale pool's jobs: one per node of the GPU quota (one pod per
    node), with the same borrowing and lending limits; 0 on other pools."""
    if not uses_compute_domains(pool):
        return {"name": CHANNEL_RESOURCE, "nominalQuota": 0}
    res: dict[str, Any] = {"name": CHANNEL_RESOURCE, "nominalQuota": channels_for_gpus(pool, quota.gpus)}
    if quota.borrowing_limit is not None:
        res["borrowingLimit"] = channels_for_gpus(pool, quota.borrowing_limit)
    if quota.lending_limit is not None:
        res["lendingLimit"] = channels_for_gpus(pool, quota.lending_limit)
    return res


def _nic_quota(pool: PoolFacts, quota: PoolQuota) -> dict[str, Any]:
    """Quota for the RDMA NICs a GKE-managed pool's jobs claim (Kueue charges DRA claims): the NICs of the nodes the
    GPU quota buys, with the same borrowing and lending limits; 0 on other pools."""
    if device_class(pool) is None:
        return {"name": KUEUE_RESOURCE, "nominalQuota": 0}
    res: dict[str, Any] = {"name": KUEUE_RESOURCE, "nominalQuota": nics_for_gpus(pool, quota.gpus)}
    if quota.borrowing_limit is not None:
        res["borrowingLimit"] = nics_for_gpus(pool, quota.borrowing_limit)
    if quota.lending_limit is not None:
        res["lendingLimit"] = nics_for_gpus(pool, quota.lending_limit)
    return res
