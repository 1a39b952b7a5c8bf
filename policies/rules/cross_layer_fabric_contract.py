"""cross-layer-fabric-contract: the training process of every runtime and Slurm NodeSet on a pool with a GPU fabric
sees what NCCL needs to use that fabric, not TCP. The fabric contract (``stacks/plan/fabric_contract.py``) derives the
process's environment (for Slurm: the TaskProlog's exports, since tasks never inherit slurmd's env), library path,
mounts, devices, interfaces, sidecar and image from the concrete resources, and compares them with the catalog's
sourced requirements (``catalog/data/fabric-requirements.csv``); this rule reports the unmet ones whose absence makes
NCCL fall back to TCP sockets on the primary NIC. Tuning gaps are preview warnings, not violations."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from catalog.fabric import MachineFabric, load_fabric_catalog
from policies.findings import Finding
from policies.links import launch_template_of
from policies.multinode import efa_interfaces
from policies.pools import gpu_pools
from policies.resources import HELM_RELEASE
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.values import as_list, dig
from catalog.cloud_limits import cloud_limit
from stacks.plan.fabric_contract import DAEMONSET_TYPE, check as check_contract, daemonset_pools, missing_nics
from stacks.plan.process_view import CLAIM_TEMPLATE_TYPE, CONFIG_MAP_TYPE, RUNTIME_TYPE, workload_views

ID = "cross-layer-fabric-contract"
EFA_PLUGIN_CHART = "aws-efa-k8s-device-plugin"


def _fabric_pools(resources: list[Resource], cat: Catalog) -> dict[str, MachineFabric]:
    """Pools whose nodes carry a fabric: GKE networks attached (or GKE-managed), EKS EFA interfaces with the EFA
    device plugin installed (without it nothing advertises the devices: topology rules report that)."""
    fab = load_fabric_catalog()
    efa_plugin = any(
        r.type == HELM_RELEASE and str(r.props.get("chart", "")).rstrip("/").endswith(EFA_PLUGIN_CHART)
        for r in resources
    )
    out = {}
    for view in gpu_pools(resources, cat):
        machine = fab.for_machine(view.cloud, view.machine_types[0]) if view.machine_types else None
        if machine is None:
            continue
        if view.cloud == Cloud.GCP:
            managed = dig(view.resource.props, "networkConfig", "acceleratorNetworkProfile") == "auto"
            attached = len(as_list(dig(view.resource.props, "networkConfig", "additionalNodeNetworkConfigs")))
            if managed or attached >= machine.extra_networks:
                out[view.name] = machine
        elif efa_plugin and efa_interfaces(launch_template_of(view.resource, view.name, resources)):
            out[view.name] = machine
    return out


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    pools = _fabric_pools(resources, cat)
    if not pools:
        return
    yield from _missing_nics(resources, pools)
    types = (RUNTIME_TYPE, HELM_RELEASE, CONFIG_MAP_TYPE, CLAIM_TEMPLATE_TYPE)
    for view in workload_views((r.type, r.props) for r in resources if r.type in types):
        machine = pools.get(view.pool or "")
        if machine is None:
            continue
        result = check_contract(view, machine.kind, machine.machine_type, machine.gpu_nics)
        for o in result.tcp_fallbacks:
            req = o.requirement
            owner = next(
                (r for r in resources if r.type in (RUNTIME_TYPE, HELM_RELEASE) and _owns(r, view.workload)), None
            )
            yield Finding(
                view.workload,
                f"its training process on pool '{view.pool}' lacks {req.name} ({req.id}), so NCCL "
                f"falls back to TCP on the primary NIC instead of the {machine.nominal_gbps_per_node:,} Gbps of "
                f"{machine.kind.display_name} per node",
                observed=f"{o.observed} (env from {view.env_origin})",
                required=f"{req.name}: {req.expected_for(machine.gpu_nics)} (source: {req.source})",
                fix="keep the pool's runtime/NodeSet as gpu-cluster renders it (it wires the fabric); for Slurm the "
                "env reaches tasks only through the TaskProlog (slurm-task-env); for EFA use an image a catalog "
                "row vouches for (the default; on Slurm build images/slurmd-efa and name it by digest with "
                "fabric.runtimeImageBuild), or add a sourced row to catalog/data/fabric-image-capabilities.csv",
                keys=(view.pool or "", view.workload.split(" ")[-1], *((owner.name,) if owner else ())),
                urn=owner.urn if owner else None,
            )


def _missing_nics(resources: list[Resource], pools: dict[str, MachineFabric]) -> Iterable[Finding]:
    """A node DaemonSet on a fabric pool that names an RDMA NIC the machine lacks fails on every node (the gIB
    installer's martians step writing gpu7rdma0 on a 4-NIC A4X never installed the plugin)."""
    limit = cloud_limit("gke-rdma-nics-per-machine")
    for r in resources:
        if r.type != DAEMONSET_TYPE:
            continue
        for pool in sorted(daemonset_pools(r.props) & set(pools)):
            machine = pools[pool]
            extra = missing_nics(r.props, machine.rdma_networks) if machine.rdma_networks else []
            if extra:
                name = dig(r.props, "metadata", "name") or r.name
                yield Finding(
                    f"DaemonSet {name}",
                    f"its containers name RDMA NICs that {machine.machine_type} on pool "
                    f"'{pool}' does not have, so the step fails on every node",
                    observed=", ".join(f"gpu{i}rdma0" for i in extra),
                    required=f"NICs gpu0rdma0 … gpu{machine.rdma_networks - 1}rdma0: {limit.cite()}",
                    fix="render the step from the machine's RDMA NIC count (catalog/data/fabrics.csv rdma_networks)",
                    keys=(pool, str(name)),
                    urn=r.urn,
                )


def _owns(r: Resource, workload: str) -> bool:
    name = workload.split(" ")[-1]
    if r.type == RUNTIME_TYPE:
        return dig(r.props, "metadata", "name") == name
    return isinstance(dig(r.props, "values", "nodesets"), dict) and name in dig(r.props, "values", "nodesets")


RULE = register(
    Rule(
        id=ID,
        title="Fabric jobs see what NCCL needs to use the fabric",
        category=Category.CROSS_LAYER,
        description="Training runtimes and Slurm NodeSets on a GPU fabric pool meet the fabric contract (else NCCL "
        "runs over TCP), and no node DaemonSet there names an RDMA NIC the machine lacks.",
        why=(
            "The fabric's objects can all exist while the job's process never sees them: Slurm tasks start with the "
            "submitter's environment, not slurmd's, so NCCL never loads the TCPXO plugin; an EKS runtime image without "
            "aws-ofi-nccl uses sockets beside 32 EFA devices. The job runs, many times slower (≈4 GB/s on the primary "
            "NIC instead of ≈340 GB/s with TCPXO), and nothing reports it. The requirements and their sources are "
            "catalog data."
        ),
        remediation=(
            "1. For a gpu-cluster stack, keep the rendered runtime/NodeSet (TaskProlog for Slurm; the "
            "EFA-capable default image on EKS, or for Slurm the images/slurmd-efa build named by digest with "
            "fabric.runtimeImageBuild; an image of your own needs a sourced row in "
            "catalog/data/fabric-image-capabilities.csv). 2. Otherwise give the "
            "training container the listed variable, library path, mount, interfaces or devices. 3. Waive "
            "only for a pool that never runs jobs across nodes."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(RUNTIME_TYPE, HELM_RELEASE, DAEMONSET_TYPE),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3125,
)
