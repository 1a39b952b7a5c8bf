"""The admission policies of a cluster: which namespaces fabric jobs run in, from the scheduling path, and the
team namespaces where Kueue's quota must have no side doors."""

from __future__ import annotations

import pulumi

from stacks.plan.kueue_topology import namespace_of
from stacks.plan.stack import StackPlan
from render.admission import admission_objects
from render.fleet_manager import queue_namespace
from render.priority_admission import priority_objects
from render.quota_admission import quota_objects
from render.slurm_values import SLURM_NAMESPACE


def build_admission(
    plan: StackPlan, cluster: pulumi.Resource, k8s_provider: pulumi.ProviderResource
) -> list[pulumi.Resource]:
    """The AdmissionPolicies component (or nothing when no pool's fabric needs host access and no team namespace
    has a queue); what it guards (team namespaces, the device injector, Kueue) must wait for the returned
    resources."""
    by_pool = dict(plan.kueue.namespaces) if plan.kueue is not None else None
    slurm = SLURM_NAMESPACE if plan.slurm is not None else None
    objects = admission_objects(list(plan.facts), by_pool, slurm)
    teams = [namespace_of(q) for q in plan.kueue.scheduling.queues] if plan.kueue is not None else []
    if plan.fleet is not None and not plan.fleet.worker:  # a manager's tenants submit to the fleet queues
        teams += [queue_namespace(q) for q in plan.fleet.section.queues]
    objects += quota_objects(teams, katib=plan.kueue.katib if plan.kueue is not None else False)
    objects += priority_objects(teams, plan.spec.serving.namespace if plan.spec.serving is not None else None)
    if not objects:
        return []
    from components.k8s.admission_policies import AdmissionPolicies

    return [
        AdmissionPolicies(
            "admission",
            objects,
            after=[cluster],
            opts=pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster]),
        )
    ]
