"""The Kueue + Kubeflow path of ``scheduling`` (``workload: kubeflow``): which components, in which order, with the
documents rendered from the plan once here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pulumi

from stacks.plan.stack import StackPlan
from render.compute_domain import kueue_device_classes as channel_device_classes
from render.fabric_claim import claim_templates, kueue_device_classes
from render.kueue import render_kueue
from render.kueue_config import kueue_values
from render.network_policies import kubeflow_policies
from render.tenancy import access_notes
from render.trainer import training_runtimes


@dataclass
class KubeflowPath:
    namespaces: dict[str, pulumi.Resource] = field(default_factory=dict)
    """Team namespaces (name -> resource)."""
    kueue: pulumi.Resource | None = None
    trainer: pulumi.Resource | None = None
    """The Kubeflow Trainer release (its CRDs): a fleet worker's runtimes wait for it."""


def build_kubeflow_path(
    plan: StackPlan,
    cluster: pulumi.Resource,
    k8s_provider: pulumi.ProviderResource,
    kueue_after: Sequence[pulumi.Resource] = (),
) -> KubeflowPath:
    """Kueue and Kubeflow through the cluster's Kubernetes provider, after the cluster and its system pool exist
    (both controllers run on the untainted system pool), plus the DRA claim templates of GKE-managed fabric pools.
    Nothing when the stack has no ``workload: kubeflow``. Returns the team namespaces (name -> resource),
    Kueue and the Trainer release (a fleet worker's objects wait for them)."""
    kueue_plan = plan.kueue
    if kueue_plan is None:
        return KubeflowPath()
    from components.k8s.fabric_claims import FabricClaims
    from components.k8s.kubeflow import Kubeflow
    from components.k8s.kueue import Kueue

    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    facts = list(plan.facts)
    sched = kueue_plan.scheduling
    teams = list(dict.fromkeys(q.namespace or q.name for q in sched.queues))
    kubeflow = Kubeflow(
        "kubeflow",
        training_runtimes(facts, kueue_plan.placements),
        katib=kueue_plan.katib,
        pipelines=kueue_plan.pipelines,
        policies=kubeflow_policies(teams, katib=kueue_plan.katib),
        access=access_notes(sched, facts),
        team_namespaces=teams,
        after=[cluster],
        opts=opts,
    )
    kueue = Kueue(
        "kueue",
        render_kueue(sched, facts, kueue_plan.placements),
        # DRA claims Kueue must count: fabric NICs and NVLink ComputeDomain channels
        kueue_values(
            sched,
            [*kueue_device_classes(facts), *channel_device_classes(facts)],
            kueue_plan.pods_ready_timeout.seconds if kueue_plan.pods_ready_timeout else None,
            serving=plan.spec.serving is not None,
        ),
        [q.name for q in sched.queues],
        after=[cluster, *kueue_after],
        opts=opts,
    )
    # GKE-managed fabric pools: the DRA claim template the torch-<pool> runtime names, in each team namespace with
    # quota on the pool (a pod's claim template is looked up in the pod's namespace)
    claims = claim_templates(facts, kueue_plan.namespaces)
    if claims:
        namespaces = {c["metadata"]["namespace"] for c in claims}
        FabricClaims(
            "fabric-claims", claims, [r for n, r in kueue.team_namespaces.items() if n in namespaces], opts=opts
        )
    return KubeflowPath(dict(kueue.team_namespaces), kueue, kubeflow.release)
