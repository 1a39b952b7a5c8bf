"""cross-layer-slurm-gres: a Slurm NodeSet's Gres=gpu count equals the GPUs per node of the pool it runs on."""

from __future__ import annotations

import re
from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog
from policies.findings import Finding
from policies.multinode import partitioned
from policies.pools import gpu_pools
from policies.resources import HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import is_slurm_release, nodesets, selected_pool

ID = "cross-layer-slurm-gres"
GRES = re.compile(r"\bGres=gpu(?::[A-Za-z0-9_.-]+)?:([0-9]+)")


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    pools = {p.name: p for p in gpu_pools(resources, cat)}
    for r in (r for r in resources if is_slurm_release(r)):
        for ns in nodesets(r):
            pool = pools.get(selected_pool(ns.selector) or "")
            match = GRES.search(ns.extra_conf)
            if pool is None or match is None or partitioned(pool):
                continue
            machine = pool.machine(cat)
            if machine is None or int(match.group(1)) == machine.gpus:
                continue
            yield Finding(
                f"Slurm NodeSet '{ns.name}'",
                f"its GPU count differs from what pool '{pool.name}' nodes ({machine.machine_type}) have",
                observed=f"Gres=gpu count {match.group(1)}",
                required=f"Gres=gpu:<type>:{machine.gpus}",
                fix=f"set the NodeSet's Gres count to {machine.gpus} (gpu-cluster renders it from the catalog)",
                keys=(ns.name, pool.name, r.name, r.urn),
                urn=r.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Slurm GRES matches the pool's GPUs",
        category=Category.CROSS_LAYER,
        description="Each Slurm NodeSet declares as many GPUs (Gres=gpu:…:N) as the nodes of its pool have.",
        why=(
            "slurmd refuses to register a node whose declared GRES exceeds what it finds (the node goes INVALID), and "
            "declaring fewer wastes GPUs that Slurm will never hand out."
        ),
        remediation="1. Set the NodeSet's Gres count to the pool's GPUs per node, or move the NodeSet to the right pool.",
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(HELM_RELEASE,),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3050,
)
