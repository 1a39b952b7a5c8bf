"""topology-gpu-taint: GPU pools carry the nvidia.com/gpu NoSchedule taint."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog
from policies.findings import Finding
from policies.pools import pool_view
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL, GPU_TAINT_KEY
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register

ID = "topology-gpu-taint"
EFFECT = "NO_SCHEDULE"  # GKE and EKS both spell the effect this way


def check(resource: Resource, cfg: Config, cat: Catalog) -> Iterable[Finding]:
    view = pool_view(resource, cat)
    if view is None or not view.is_gpu(cat):
        return
    key = cfg["taintKey"]
    if any(t.key == key and t.effect == EFFECT for t in view.taints):
        return
    observed = ", ".join(f"{t.key}={t.value}:{t.effect}" for t in view.taints) or "none"
    yield Finding(
        view.subject,
        f"GPU nodes are not tainted {key}:NoSchedule, so any pod can land on them",
        observed=f"taints: {observed}",
        required=f"a taint {key}=present with effect {EFFECT}",
        fix=f"add the taint {{key: {key}, value: present, effect: {EFFECT}}} (gpu-cluster pools carry it; "
        "remove any change that drops it)",
        keys=view.keys,
    )


RULE = register(
    Rule(
        id=ID,
        title="GPU pools carry the GPU taint",
        category=Category.TOPOLOGY,
        description="GPU pools carry the nvidia.com/gpu NoSchedule taint, so only pods that tolerate it use GPU nodes.",
        why=(
            "Without the taint, CPU-only pods (add-ons, web services) fill GPU nodes, keep them from scaling down and "
            "block GPU jobs. The NVIDIA device plugin and GPU workloads tolerate nvidia.com/gpu by convention."
        ),
        remediation=(
            "1. Add the taint nvidia.com/gpu=present:NO_SCHEDULE to the pool (GKE nodeConfig.taints, EKS "
            "taints). 2. Give GPU workloads the toleration (gpu-cluster exports it per pool)."
        ),
        severity=Severity.MEDIUM,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP),
        check=check,
        reads_catalog=True,
        config={
            "taintKey": {
                "type": "string",
                "default": GPU_TAINT_KEY,
                "minLength": 1,
                "description": "Taint key GPU pools must carry with effect NoSchedule.",
            }
        },
    ),
    order=2060,
)
