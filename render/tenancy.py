"""What a tenant (someone who may create pods or TrainJobs in their team's namespace) can reach, one line per
control, for the preview and the stack outputs. Pure: read from the spec and the pools' facts, the same inputs the
components use, so the text follows the objects."""

from __future__ import annotations

from typing import Sequence

from render.admission import FABRIC_POLICY
from render.kueue import host_fabric_namespaces
from stacks.plan.facts import PoolFacts
from stacks.spec.scheduling import SchedulingSpec, Workload

PIPELINES_MODE = (
    "Kubeflow Pipelines: single-user mode, no authentication; its API is reachable only from pods in "
    "namespace kubeflow (NetworkPolicy) and through kubectl port-forward (operators); the cache "
    "deployer and cache server are not run (0 replicas, ClusterRole emptied)"
)
KATIB_MODE = (
    "Katib: UI not deployed (0 replicas, no ingress); operators create Experiments with kubectl; only the "
    "team namespaces' trial pods reach its DB manager"
)


def access_notes(spec: SchedulingSpec, pools: Sequence[PoolFacts]) -> list[str]:
    notes = []
    if spec.workload == Workload.KUBEFLOW:
        fabric = host_fabric_namespaces(spec, pools)
        plain = [ns for ns in dict.fromkeys(q.namespace or q.name for q in spec.queues) if ns not in fabric]
        if plain:
            notes.append(f"team namespaces {', '.join(plain)}: Pod Security baseline")
        if fabric:
            notes.append(
                f"team namespaces {', '.join(fabric)}: Pod Security baseline enforced by the "
                f"ValidatingAdmissionPolicy {FABRIC_POLICY}, plus exactly the GPU fabric's host paths and "
                "sidecar"
            )
        if spec.kubeflow.pipelines:
            notes.append(PIPELINES_MODE)
        if spec.kubeflow.katib:
            notes.append(KATIB_MODE)
    return notes
