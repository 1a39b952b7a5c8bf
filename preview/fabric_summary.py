"""The fabric section of the preview (JSON key ``fabric``): per pool its GPU fabric, the networks (Kubernetes names,
count, the VPCs behind them), NICs per node, the NCCL transport a job uses and its nominal bandwidth (catalog data
with its source), and what was wired: the installer/injector DaemonSets, training runtimes and Slurm NodeSets the
program registered with the fabric on them, and on GKE-managed pools the DRA claim their jobs get the NICs through. Read from the pool facts and the recorded resources."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Sequence

from catalog import Cloud
from catalog.fabric import load_fabric_catalog
from catalog.gke_version import FloorCheck, check_floor
from catalog.image_digests import DEPLOY_DIGEST, digest_row
from catalog.network_cards import network_cards
from preview.engine import Registered
from render.fabric_claim import ALLOCATION_MODE, POD_CLAIM, claim_template_name, device_class
from stacks.plan.fabric_contract import check as check_contract
from stacks.plan.process_view import ProcessView, workload_views
from render.fabric_pod import pod_fabric
from render.trainer import runtime_name
from stacks.plan.efa_layout import efa_layout, efa_summary
from stacks.plan.fabric import FabricPlan
from stacks.spec.fabric import FabricMode
from stacks.plan.facts import PoolFacts
from stacks.spec.stack import POOL_LABEL_KEY, NodePool, StackSpec
from stacks.validate.issues import SpecIssue

DAEMONSET = "kubernetes:apps/v1:DaemonSet"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
RELEASE = "kubernetes:helm.sh/v3:Release"
CLAIM_TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
COST_NOTES = {
    "gcp": "the GPU fabric's extra VPC networks, subnets and firewall rules cost nothing per hour (traffic between "
    "nodes in one zone is not billed), so they add nothing to the table",
    "aws": "EFA interfaces cost nothing per hour (traffic between nodes in one AZ is not billed), so they add nothing "
    "to the table",
}


class _Wiring:
    """The recorded resources the fabric section reads, each kind sorted out once, when first asked for (a pass over
    every resource per pool made the section grow with pools x resources: 200 pools, 1,240 resources)."""

    def __init__(self, resources: Sequence[Registered]):
        self.resources = resources

    def _of_type(self, *types: str) -> list[Registered]:
        return [r for r in self.resources if r.type in types]

    @cached_property
    def daemonsets(self) -> list[Registered]:
        return self._of_type(DAEMONSET)

    @cached_property
    def runtime_names(self) -> set[Any]:
        return {r.inputs.get("metadata", {}).get("name") for r in self._of_type(RUNTIME)}

    @cached_property
    def releases(self) -> list[Registered]:
        return self._of_type(RELEASE)

    @cached_property
    def claim_namespaces(self) -> dict[Any, list[str]]:
        """ResourceClaimTemplate name -> the namespaces it was registered in, in registration order."""
        out: dict[Any, list[str]] = {}
        for r in self._of_type(CLAIM_TEMPLATE):
            meta = r.inputs.get("metadata", {})
            out.setdefault(meta.get("name"), []).append(meta.get("namespace", ""))
        return out

    @cached_property
    def compute_domains(self) -> list[Registered]:
        return [r for r in self.resources if r.type.endswith(":ComputeDomain")]

    @cached_property
    def views(self) -> list[ProcessView]:
        return workload_views((r.type, r.inputs) for r in self.resources)


def _daemonsets_on(pool: str, wiring: _Wiring) -> list[str]:
    out = []
    for r in wiring.daemonsets:
        terms = (
            r.inputs.get("spec", {})
            .get("template", {})
            .get("spec", {})
            .get("affinity", {})
            .get("nodeAffinity", {})
            .get("requiredDuringSchedulingIgnoredDuringExecution", {})
            .get("nodeSelectorTerms", [])
        )
        if any(
            e.get("key") == POOL_LABEL_KEY and pool in e.get("values", [])
            for t in terms
            for e in t.get("matchExpressions", [])
        ):
            out.append(r.inputs["metadata"]["name"])
    return sorted(out)


def _wired(pool: PoolFacts, wiring: _Wiring) -> list[str]:
    if pod_fabric(pool) is None:
        return []
    out = []
    if runtime_name(pool.name) in wiring.runtime_names:
        out.append(f"ClusterTrainingRuntime {runtime_name(pool.name)}")
    if any(pool.name in (r.inputs.get("values") or {}).get("nodesets", {}) for r in wiring.releases):
        out.append(f"Slinky NodeSet {pool.name}")
    claim = dra_claim(pool, wiring)
    if claim is not None and out:
        where = ", ".join(claim["namespaces"]) or "no namespace (no queue or NodeSet runs jobs there)"
        out.append(
            f"DRA claim {claim['podClaim']}: ResourceClaimTemplate {claim['template']} "
            f"({claim['count']} × {claim['deviceClass']}) in {where}"
        )
    return out


def dra_claim(pool: PoolFacts, wiring: _Wiring) -> dict[str, Any] | None:
    """How a job on a GKE-managed pool gets the RDMA NICs: the pod's claim, its template and the namespaces the
    program registered it in (None: the pool's jobs claim nothing)."""
    cls = device_class(pool)
    if cls is None:
        return None
    name = claim_template_name(pool.name)
    namespaces = sorted(wiring.claim_namespaces.get(name, []))
    assert pool.fabric is not None
    return {
        "podClaim": POD_CLAIM,
        "template": name,
        "deviceClass": cls,
        "allocationMode": ALLOCATION_MODE,
        "count": pool.fabric.gpu_nics,
        "namespaces": namespaces,
    }


def _status(node_pool: NodePool, pool: PoolFacts) -> str:
    if pool.fabric is not None:
        return pool.fabric.mode.value
    if load_fabric_catalog().for_machine(pool.cloud, pool.machine.machine_type) is None:
        return "not available"
    if node_pool.fabric is not None and node_pool.fabric.mode == FabricMode.OFF:
        return "off"
    return "single-node"


def _networking(plan: FabricPlan) -> str | None:
    if plan.managed:
        return f"GKE-managed (acceleratorNetworkProfile {plan.machine.gke_managed_profile})"
    return "explicit networks" if plan.networks else ("EFA interfaces" if plan.gpu_nics else None)


def version_floor(spec: StackSpec, plan: FabricPlan) -> tuple[str | None, str | None]:
    """The fabric's GKE version floor (oldest sourced minor, and the newest minor's where they differ) and whether
    the cluster's version was checked against it. Channel defaults are not catalog data: never claimed to pass."""
    if spec.cloud != Cloud.GCP:
        return None, None
    floors = load_fabric_catalog().version_floors(plan.kind, plan.managed)
    if not floors:
        return None, "no sourced GKE version floor for this fabric"
    shown = (
        floors[0].min_version
        if len(floors) == 1
        else f"{floors[0].min_version} (GKE {floors[-1].minor}: {floors[-1].min_version})"
    )
    pinned = spec.cluster.min_master_version
    if pinned is None:
        return shown, (
            f"not checked: cluster.minMasterVersion is unset, so release channel "
            f"{spec.cluster.release_channel.value} picks the version"
        )
    verdict = check_floor(pinned, floors)
    if verdict.check == FloorCheck.MEETS:
        return shown, f"minMasterVersion {pinned} meets it"
    if verdict.check == FloorCheck.UNKNOWN:
        return shown, f"not checked: minMasterVersion {pinned} leaves the patch to GKE"
    return shown, f"minMasterVersion {pinned} is below it"  # validation refuses this; kept for completeness


def nvlink_summary(p: PoolFacts, wiring: _Wiring) -> dict[str, Any]:
    """A rack-scale NVLink pool's domains: size, how many whole ones maxNodes makes, the label naming one, the GKE
    workload policy, and the ComputeDomains (``namespace/name``) its jobs claim IMEX channels from."""
    nv = p.nvlink
    assert nv is not None
    domains = sorted(
        f"{r.inputs['metadata']['namespace']}/{r.inputs['metadata']['name']}"
        for r in wiring.compute_domains
        if (r.inputs.get("metadata") or {}).get("labels", {}).get("gpu-cluster/pool") == p.name
    )
    return {
        "domainGpus": nv.domain_gpus,
        "domainNodes": nv.domain_nodes,
        "domainsAtMax": nv.whole_domains(p.max_nodes),
        "domainLabel": nv.domain_label,
        "acceleratorTopology": nv.accelerator_topology or None,
        "ultraserverType": nv.ultraserver_type or None,
        "reservationBlock": nv.reservation_block,
        "computeDomains": domains,
    }


def fabric_summary(spec: StackSpec, pools: Sequence[PoolFacts], resources: Sequence[Registered]) -> list[dict]:
    out: list[dict[str, Any]] = []
    wiring = _Wiring(resources)
    node_pools: dict[str, NodePool] = {}
    for node_pool in spec.node_pools:
        node_pools.setdefault(node_pool.name, node_pool)
    for p in pools:
        plan = p.fabric
        entry: dict[str, Any] = {
            "pool": p.name,
            "machineType": p.machine.machine_type,
            "status": _status(node_pools[p.name], p),
        }
        if p.nvlink is not None:  # only on GB200 NVL72 pools: other pools' entries keep their keys
            entry["nvlink"] = nvlink_summary(p, wiring)
        if plan is None:
            out.append({**entry, "fabric": None})
            continue
        floor, checked = version_floor(spec, plan)
        entry.update(
            {
                "fabric": plan.kind.value,
                "fabricName": plan.kind.display_name,
                "mode": plan.mode.value,
                "networking": _networking(plan),
                "networks": [n.k8s_name for n in plan.networks],
                "networkCount": len(plan.networks),
                "createdByGpuCluster": plan.creates_networks,
                "nicsPerNode": plan.gpu_nics,
                "ncclTransport": plan.machine.nccl_transport,
                "nominalGbpsPerNode": plan.machine.nominal_gbps_per_node,
                "bandwidthSource": plan.machine.bandwidth_source,
                "gkeVersionFloor": floor,
                "gkeVersionCheck": checked,
                "daemonSets": _daemonsets_on(p.name, wiring),
                "wired": _wired(p, wiring),
                "draClaim": dra_claim(p, wiring),
                "contract": contract(p, wiring.views),
            }
        )
        if network_cards(p.machine.cloud, p.machine.machine_type):  # cards that differ (P6e-GB200): say which carry EFA
            entry["efaCards"] = efa_summary(efa_layout(p.machine))
        out.append(entry)
    return out


def image_pin(image: str) -> str:
    """``digest``, ``digest resolved from <registry> at deploy`` (a tag gpu-cluster resolves when it deploys:
    ``catalog/data/image-digests.csv``) or ``tag``."""
    named, _, digest = image.partition("@")
    if digest and digest != DEPLOY_DIGEST:
        return "digest"
    row = digest_row(named)
    return row.pin_text() if row is not None and row.at_deploy else "digest" if row is not None else "tag"


def contract(pool: PoolFacts, views: Sequence[ProcessView]) -> list[dict[str, Any]]:
    """Per workload on the pool, the fabric contract (``stacks/plan/fabric_contract.py``): what its training process
    sees against the catalog's sourced requirements; unmet ones name what was observed and what happens without.
    ``views``: every workload's view of the recorded resources (``workload_views``)."""
    plan = pool.fabric
    assert plan is not None
    out = []
    # by workload name: the recorded resources arrive in the order Pulumi's async registration finished, which varies
    for view in sorted(views, key=lambda v: v.workload):
        if view.pool != pool.name:
            continue
        result = check_contract(view, plan.kind, pool.machine.machine_type, plan.gpu_nics)
        out.append(
            {
                "workload": view.workload,
                "summary": result.summary,
                "envFrom": view.env_origin,
                "image": view.image,
                "imagePin": image_pin(view.image),
                "met": len(result.outcomes) - len(result.unmet),
                "total": len(result.outcomes),
                "unmet": [
                    {
                        "id": o.requirement.id,
                        "requirement": o.requirement.name,
                        "expected": o.requirement.expected_for(plan.gpu_nics),
                        "observed": o.observed,
                        "withoutIt": o.requirement.without_it.value,
                        "source": o.requirement.source,
                    }
                    for o in result.unmet
                ],
            }
        )
    return out


def contract_warnings(spec: StackSpec, rows: Sequence[dict[str, Any]]) -> list[SpecIssue]:
    """One warning per unmet requirement of a fabric contract, on the pool's config path."""
    index = {p.name: i for i, p in enumerate(spec.node_pools)}
    out = []
    for row in rows:
        for c in row.get("contract") or []:
            for u in c["unmet"]:
                effect = {
                    "tcp": "NCCL falls back to TCP on the primary NIC",
                    "fails": "the job fails to start NCCL",
                    "slower": "the fabric runs below its tuned speed",
                }[u["withoutIt"]]
                out.append(
                    SpecIssue(
                        path=f"gpu-cluster:nodePools[{index.get(row['pool'], 0)}].fabric",
                        warning=True,
                        problem=f"pool {row['pool']}: {c['workload']} does not meet fabric requirement {u['id']} "
                        f"({u['requirement']}): {effect}",
                        value=u["observed"],
                        allowed=u["expected"],
                        fix=f"give the workload {u['requirement']} = {u['expected']} (source: {u['source']})",
                    )
                )
    return out
