"""Queued pools -> Kueue's ProvisioningRequest admission: one ProvisioningRequestConfig and one AdmissionCheck per
queued pool, and the ``admissionChecksStrategy`` that attaches each check to the ClusterQueues with quota there,
on that pool's flavor only. Pure: no Pulumi.

With the check, Kueue reserves quota, creates a ProvisioningRequest for the workload's pods (GKE class
``queued-provisioning.gke.io``, or the Cluster Autoscaler's ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``),
waits until the nodes are provisioned, then admits it, and assigns its topology from the new nodes (Kueue
"Provisioning AdmissionCheck Controller" and "Topology Aware Scheduling", ClusterAutoscaler support). Only
``nvidia.com/gpu`` is a managed resource: a workload asking for none of it needs no new node.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from stacks.plan.facts import PoolFacts
from stacks.spec.scheduling import Queue

CONTROLLER = "kueue.x-k8s.io/provisioning-request"
"""The controllerName of Kueue's built-in Provisioning AdmissionCheck controller."""
GROUP = "kueue.x-k8s.io"
MANAGED_RESOURCES = ("nvidia.com/gpu",)
MAX_RUN_PARAMETER = "maxRunDurationSeconds"
"""GKE's ProvisioningRequest parameter: how long flex-start nodes may run (GKE "About flex-start", default 7 days)."""


def check_name(pool: str) -> str:
    """AdmissionCheck and ProvisioningRequestConfig of a pool: ``<pool>-provisioning``."""
    return f"{pool}-provisioning"


def provisioning_objects(
    pools: Sequence[PoolFacts], obj: Callable[..., dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(ProvisioningRequestConfigs, AdmissionChecks) of the queued pools, in pool order. ``obj`` builds a Kueue object
    (``render/kueue.py``'s ``_obj``), so labels and apiVersion match the rest."""
    configs, checks = [], []
    for pool in pools:
        if pool.queued is None:
            continue
        name = check_name(pool.name)
        spec: dict[str, Any] = {
            "provisioningClassName": pool.queued.provisioning_class,
            "managedResources": list(MANAGED_RESOURCES),
        }
        if pool.queued.max_run_seconds is not None:
            spec["parameters"] = {MAX_RUN_PARAMETER: str(pool.queued.max_run_seconds)}
        configs.append(obj("ProvisioningRequestConfig", name, spec=spec))
        checks.append(
            obj(
                "AdmissionCheck",
                name,
                spec={
                    "controllerName": CONTROLLER,
                    "parameters": {"apiGroup": GROUP, "kind": "ProvisioningRequestConfig", "name": name},
                },
            )
        )
    return configs, checks


def admission_checks_strategy(
    queue: Queue, pools: Mapping[str, PoolFacts], flavor_names: Mapping[str, str]
) -> dict[str, Any] | None:
    """The queue's checks: each queued pool it has quota in, on that pool's flavor only (so a workload admitted to
    another flavor of the queue needs no ProvisioningRequest); None when it uses no queued pool."""
    checks = [
        {"name": check_name(q.pool), "onFlavors": [flavor_names[q.pool]]}
        for q in queue.quotas
        if q.pool in pools and pools[q.pool].queued is not None
    ]
    return {"admissionChecks": checks} if checks else None
