"""cross-layer-gpu-advertiser: exactly one nvidia.com/gpu advertiser (device plugin) runs on each GPU pool."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from policies.findings import Finding
from policies.pools import PoolView, gpu_pools
from policies.resources import HELM_RELEASE, POOL_LABEL_KEY
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import as_dict, as_list, dig

ID = "cross-layer-gpu-advertiser"
GKE_OPT_OUT = "gke-no-default-nvidia-gpu-device-plugin"
"""Node label that stops GKE's managed device plugin on a pool."""
OPERATOR_OPT_OUT = ("nvidia.com/gpu.deploy.operands", "nvidia.com/gpu.deploy.device-plugin")
"""Node labels (value "false") that keep the GPU Operator's device plugin off a pool."""


def _chart(r: Resource) -> str:
    chart = r.props.get("chart")
    return chart.rstrip("/").split("/")[-1] if isinstance(chart, str) else ""


def _targets(values: dict) -> set[str] | None:
    """Pools a chart's daemons are pinned to by the pool label (affinity In / nodeSelector); None: every GPU node."""
    selected = as_dict(values.get("nodeSelector")).get(POOL_LABEL_KEY)
    if isinstance(selected, str):
        return {selected}
    terms = dig(
        values,
        "affinity",
        "nodeAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        "nodeSelectorTerms",
        default=[],
    )
    pools: set[str] = set()
    for term in as_list(terms):
        for expr in as_list(as_dict(term).get("matchExpressions")):
            expr = as_dict(expr)
            if expr.get("key") == POOL_LABEL_KEY and expr.get("operator") == "In":
                pools |= {str(v) for v in as_list(expr.get("values"))}
    return pools or None


def advertisers(pool: PoolView, releases: list[Resource]) -> list[str]:
    found = []
    if pool.cloud == Cloud.GCP and str(pool.labels.get(GKE_OPT_OUT)).lower() != "true":
        found.append("GKE's managed device plugin")
    for r in releases:
        values = as_dict(r.props.get("values"))
        if _chart(r) == "nvidia-device-plugin":
            targets = _targets(values)
        elif _chart(r) == "gpu-operator":
            if dig(values, "devicePlugin", "enabled") is False or any(
                str(pool.labels.get(k)).lower() == "false" for k in OPERATOR_OPT_OUT
            ):
                continue
            targets = _targets(as_dict(values.get("daemonsets")))
        else:
            continue
        if targets is None or pool.name in targets:
            found.append(f"Helm release '{r.name}' ({_chart(r)})")
    return found


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    releases = [
        r for r in resources if r.type == HELM_RELEASE and _chart(r) in ("nvidia-device-plugin", "gpu-operator")
    ]
    for pool in gpu_pools(resources, cat):
        found = advertisers(pool, releases)
        if len(found) > 1:
            yield Finding(
                pool.subject,
                f"{len(found)} components advertise nvidia.com/gpu on its nodes, so the "
                "scheduler double-counts GPUs and pods fight over devices",
                observed="; ".join(found),
                required="exactly one advertiser per pool",
                fix=f"keep one: on GKE label the pool {GKE_OPT_OUT}=true (with gpuDriverVersion "
                "INSTALLATION_DISABLED) to use NVIDIA's plugin, or pin the chart's affinity to other "
                "pools (gpu-cluster: gpuRuntime.mode per pool)",
                keys=pool.keys,
                urn=pool.resource.urn,
            )
        elif not found and (pool.cloud == Cloud.GCP or releases):
            yield Finding(
                pool.subject,
                "nothing advertises nvidia.com/gpu on its nodes, so GPU pods never schedule there",
                observed="no device plugin or GPU Operator covers the pool",
                required="exactly one advertiser per pool",
                fix="install the NVIDIA device plugin or GPU Operator for this pool, or (GKE) remove the "
                f"{GKE_OPT_OUT} label (gpu-cluster: gpuRuntime.mode)",
                keys=pool.keys,
                urn=pool.resource.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="One GPU advertiser per pool",
        category=Category.CROSS_LAYER,
        description="Exactly one component advertises nvidia.com/gpu on each GPU pool: GKE's managed device plugin, "
        "the NVIDIA device plugin chart or the GPU Operator.",
        why=(
            "Two device plugins on one node register the same GPUs twice (the kubelet then reports the last "
            "registration's count and allocations collide); none leaves GPU pods Pending forever. NVIDIA's AICR "
            "guidance: exactly one nvidia.com/gpu advertiser per node. On GKE the managed plugin runs unless the pool "
            "is labelled gke-no-default-nvidia-gpu-device-plugin=true. EKS pools are only checked when the stack "
            "installs a GPU runtime chart (otherwise it is managed elsewhere)."
        ),
        remediation=(
            "1. Pick one advertiser per pool (gpu-cluster: gpuRuntime.mode at stack or pool level). 2. For "
            "NVIDIA's plugin on GKE, label the pool gke-no-default-nvidia-gpu-device-plugin=true and set "
            "gpuDriverVersion INSTALLATION_DISABLED. 3. Pin chart daemons to their pools by the "
            "gpu-cluster/pool label (affinity), or label other pools nvidia.com/gpu.deploy.operands=false."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=("gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup", HELM_RELEASE),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3010,
)
