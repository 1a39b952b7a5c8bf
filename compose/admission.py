"""The admission policies of a cluster: which namespaces fabric jobs run in, from the scheduling path."""
from __future__ import annotations

import pulumi

from render.admission import admission_objects
from render.kueue import pool_namespaces
from render.slurm_values import SLURM_NAMESPACE
from plan.facts import PoolFacts
from spec.scheduling import Workload
from spec.stack import StackSpec


def build_admission(spec: StackSpec, pools: dict[str, PoolFacts], cluster: pulumi.Resource,
                    k8s_provider) -> list[pulumi.Resource]:
    """The AdmissionPolicies component (or nothing when no pool's fabric needs host access); what it guards (team
    namespaces, the device injector) must wait for the returned resources."""
    sched = spec.scheduling
    teams = pool_namespaces(sched) if sched is not None and sched.workload == Workload.KUBEFLOW else None
    slurm = SLURM_NAMESPACE if sched is not None and sched.workload == Workload.SLURM else None
    objects = admission_objects([pools[p.name] for p in spec.node_pools], teams, slurm)
    if not objects:
        return []
    from components.k8s.admission_policies import AdmissionPolicies

    return [AdmissionPolicies("admission", objects, after=[cluster],
                              opts=pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster]))]
