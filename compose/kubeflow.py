"""The Kueue + Kubeflow path of ``scheduling`` (``workload: kubeflow``): which components, in which order."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pulumi

from render.fabric_claim import claim_templates
from render.kueue import pool_namespaces
from plan.facts import PoolFacts
from spec.scheduling import Workload
from spec.stack import StackSpec


@dataclass
class KubeflowPath:
    namespaces: dict[str, pulumi.Resource] = field(default_factory=dict)
    """Team namespaces (name -> resource)."""
    kueue: pulumi.Resource | None = None
    trainer: pulumi.Resource | None = None
    """The Kubeflow Trainer release (its CRDs): a fleet worker's runtimes wait for it."""


def build_kubeflow_path(spec: StackSpec, pools: dict[str, PoolFacts], cluster: pulumi.Resource,
                        k8s_provider, kueue_after: Sequence[pulumi.Resource] = ()) -> KubeflowPath:
    """Kueue and Kubeflow through the cluster's Kubernetes provider, after the cluster and its system pool exist
    (both controllers run on the untainted system pool), plus the DRA claim templates of GKE-managed fabric pools.
    Nothing when the stack has no ``workload: kubeflow``. Returns the team namespaces (name -> resource),
    Kueue and the Trainer release (a fleet worker's objects wait for them)."""
    if spec.scheduling is None or spec.scheduling.workload != Workload.KUBEFLOW:
        return KubeflowPath()
    from components.k8s.fabric_claims import FabricClaims
    from components.k8s.kubeflow import Kubeflow
    from components.k8s.kueue import Kueue

    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    facts = [pools[p.name] for p in spec.node_pools]
    kubeflow = Kubeflow("kubeflow", spec.scheduling, facts, after=[cluster], opts=opts)
    kueue = Kueue("kueue", spec.scheduling, facts, after=[cluster, *kueue_after], opts=opts)
    # GKE-managed fabric pools: the DRA claim template the torch-<pool> runtime names, in each team namespace with
    # quota on the pool (a pod's claim template is looked up in the pod's namespace)
    claims = claim_templates(facts, pool_namespaces(spec.scheduling))
    if claims:
        namespaces = {c["metadata"]["namespace"] for c in claims}
        FabricClaims("fabric-claims", claims, [r for n, r in kueue.team_namespaces.items() if n in namespaces],
                     opts=opts)
    return KubeflowPath(dict(kueue.team_namespaces), kueue, kubeflow.release)
