"""cross-layer-scheduler-tolerations: every Kueue ResourceFlavor and every Slurm NodeSet tolerates the taints of the
pool it selects (read from the GKE node pool / EKS node group)."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog
from policies.findings import Finding, listing
from policies.pools import PoolView, Taint, gpu_pools
from policies.resources import HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import is_slurm_release, kueue_kind, nodesets, object_name, selected_pool
from policies.values import as_dict, as_list, dig

ID = "cross-layer-scheduler-tolerations"
EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}
"""Provider spelling (GKE and EKS) -> Kubernetes spelling."""
BLOCKING = ("NoSchedule", "NoExecute")
"""Effects that keep an untolerating pod off the node (PreferNoSchedule only makes the scheduler avoid it)."""


ANNOTATOR = ("kubernetes:apps/v1:Deployment", "slurm-block-annotator")
"""The Slurm block annotator (``render/slurm_block_annotator.py``): present, it removes its registration taint."""
REGISTRATION_TAINT = "startup-taint.cluster-autoscaler.kubernetes.io/slurm-topology"
"""Kept off slurmd pods on purpose until the node's Slurm block is annotated (``stacks/plan/slurm_block_nodes.py``)."""


def effect_of(taint: Taint) -> str:
    return EFFECTS.get(taint.effect, taint.effect)


def tolerates(toleration: dict, taint: Taint) -> bool:
    """Kubernetes' rule: an empty effect matches every effect; ``Exists`` matches the key (an empty key: every
    taint); ``Equal`` (the default operator) matches key and value."""
    effect = toleration.get("effect") or ""
    if effect and effect != effect_of(taint):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return key in ("", taint.key)
    return operator == "Equal" and key == taint.key and (toleration.get("value") or "") == taint.value


def untolerated(tolerations: list, pool: PoolView, removed: frozenset[str] = frozenset()) -> list[Taint]:
    """The pool's blocking taints that no toleration matches; ``removed``: keys a controller of the stack removes once
    the node is ready for the pods (not a taint to tolerate)."""
    tols = [t for t in as_list(tolerations) if isinstance(t, dict)]
    return [
        t
        for t in pool.taints
        if effect_of(t) in BLOCKING and t.key not in removed and not any(tolerates(tol, t) for tol in tols)
    ]


def show(taint: Taint) -> str:
    return f"{taint.key}={taint.value}:{effect_of(taint)}"


def toleration_for(taint: Taint) -> str:
    if taint.value:
        return f"{{key: {taint.key}, operator: Equal, value: {taint.value}, effect: {effect_of(taint)}}}"
    return f"{{key: {taint.key}, operator: Exists, effect: {effect_of(taint)}}}"


def _finding(
    subject: str, what: str, field: str, pool: PoolView, missing: list[Taint], keys: tuple[str, ...], urn: str
) -> Finding:
    taints = "taint" if len(missing) == 1 else "taints"
    return Finding(
        subject,
        f"does not tolerate pool '{pool.name}''s {taints}, so {what} stay Pending",
        observed=f"untolerated {taints} {listing(show(t) for t in missing)}",
        required="a toleration for every NoSchedule and NoExecute taint of the pool",
        fix=f"add {listing(toleration_for(t) for t in missing)} to {field} (gpu-cluster renders one "
        "toleration per pool taint)",
        keys=keys,
        urn=urn,
    )


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    pools = {p.name: p for p in gpu_pools(resources, cat)}
    for r in resources:
        if kueue_kind(r) == "ResourceFlavor":
            pool = pools.get(selected_pool(as_dict(dig(r.props, "spec", "nodeLabels"))) or "")
            if pool is None:
                continue  # no such pool: cross-layer-pool-exists says so
            missing = untolerated(dig(r.props, "spec", "tolerations"), pool)
            if missing:
                flavor = object_name(r)
                yield _finding(
                    f"Kueue ResourceFlavor '{flavor}'",
                    "the workloads Kueue admits to it",
                    "spec.tolerations",
                    pool,
                    missing,
                    (flavor, pool.name, r.name, r.urn),
                    r.urn,
                )
        elif is_slurm_release(r):
            annotator = any(
                x.type == ANNOTATOR[0] and dig(x.props, "metadata", "name") == ANNOTATOR[1] for x in resources
            )
            removed = frozenset({REGISTRATION_TAINT}) if annotator else frozenset()
            for ns in nodesets(r):
                pool = pools.get(selected_pool(ns.selector) or "")
                missing = untolerated(ns.tolerations, pool, removed) if pool is not None else []
                if pool is not None and missing:
                    yield _finding(
                        f"Slurm NodeSet '{ns.name}'",
                        "its slurmd pods",
                        f"nodesets.{ns.name}.podSpec.tolerations",
                        pool,
                        missing,
                        (ns.name, pool.name, r.name, r.urn),
                        r.urn,
                    )


RULE = register(
    Rule(
        id=ID,
        title="Schedulers tolerate their pool's taints",
        category=Category.CROSS_LAYER,
        description="Every Kueue ResourceFlavor and every Slurm NodeSet tolerates the NoSchedule and NoExecute taints of "
        "the pool it selects.",
        why=(
            "Kueue adds a flavor's tolerations to the pods it admits there, and Slinky runs each NodeSet's slurmd pods "
            "with its podSpec tolerations. A pool taint neither tolerates (a `dedicated=team-a` taint added to the pool "
            "later) leaves admitted jobs and slurmd pods Pending, with quota held and no error at deploy time. The "
            "taints are read from the node pool / node group, the tolerations from the ResourceFlavor and the Slurm "
            "release values, so a drift between the layers is caught before deploy."
        ),
        remediation=(
            "1. Add a toleration for each of the pool's taints to the flavor's spec.tolerations or the "
            "NodeSet's podSpec.tolerations (key, operator Equal and value, or Exists for an empty value, and the "
            "effect). 2. gpu-cluster renders them from the pool's taints: re-render after changing them."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=("kubernetes:kueue.x-k8s.io/*:ResourceFlavor", HELM_RELEASE),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3080,
)
