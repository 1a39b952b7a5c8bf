"""cross-layer-pool-exists: every Kueue ResourceFlavor and every Slurm NodeSet selects a pool that exists."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog
from policies.findings import Finding, listing
from policies.pools import gpu_pools
from policies.resources import HELM_RELEASE, POOL_LABEL_KEY
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import is_slurm_release, kueue_kind, matches, nodesets, object_name, selected_pool
from policies.values import as_dict, dig

ID = "cross-layer-pool-exists"


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    pools = gpu_pools(resources, cat)
    if not pools:
        return  # pools live in another stack: nothing to compare with
    names = sorted(p.name for p in pools)
    for r in resources:
        if kueue_kind(r) == "ResourceFlavor":
            selector = as_dict(dig(r.props, "spec", "nodeLabels"))
            if selector and not any(matches(selector, {**p.labels, POOL_LABEL_KEY: p.name}) for p in pools):
                flavor = object_name(r)
                yield Finding(
                    f"Kueue ResourceFlavor '{flavor}'",
                    "it selects no node pool of this stack, so workloads admitted to it stay Pending",
                    observed=f"spec.nodeLabels {_show(selector)}",
                    required=f"select one of the pools: {listing(names)}",
                    fix=f"set spec.nodeLabels.{POOL_LABEL_KEY} to an existing pool (gpu-cluster: the "
                    "flavor's pool must be in nodePools)",
                    keys=(flavor, r.name, r.urn),
                    urn=r.urn,
                )
        elif is_slurm_release(r):
            for ns in nodesets(r):
                pool = selected_pool(ns.selector)
                if not ns.selector or any(matches(ns.selector, {**p.labels, POOL_LABEL_KEY: p.name}) for p in pools):
                    continue
                yield Finding(
                    f"Slurm NodeSet '{ns.name}'",
                    "it selects no node pool of this "
                    f"stack{' (no pool ' + repr(pool) + ')' if pool else ''}, so its slurmd pods stay "
                    "Pending",
                    observed=f"nodeSelector {_show(ns.selector)}",
                    required=f"select one of the pools: {listing(names)}",
                    fix=f"set nodesets.{ns.name}.podSpec.nodeSelector.{POOL_LABEL_KEY} to an existing pool",
                    keys=(ns.name, r.name, r.urn),
                    urn=r.urn,
                )


def _show(selector: dict) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(selector.items())) + "}"


RULE = register(
    Rule(
        id=ID,
        title="Schedulers select pools that exist",
        category=Category.CROSS_LAYER,
        description="Every Kueue ResourceFlavor and every Slurm NodeSet selects a node pool that exists in the stack.",
        why=(
            "A flavor or NodeSet whose labels match no node admits work that can never start: pods stay Pending "
            "with no error at deploy time (a renamed pool left Slinky workers Pending, ai-on-eks#237). Selecting by "
            "the gpu-cluster/pool label makes the link checkable before deploy."
        ),
        remediation=(
            "1. Point the flavor's spec.nodeLabels or the NodeSet's nodeSelector at the gpu-cluster/pool label "
            "of an existing pool. 2. When a pool is renamed, rename it in the scheduler config in the same "
            "change."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=("kubernetes:kueue.x-k8s.io/*:ResourceFlavor", HELM_RELEASE),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3020,
)
