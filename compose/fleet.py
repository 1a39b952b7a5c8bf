"""The fleet role of a stack (``gpu-cluster:fleet``): a worker's access objects and exported facts, or the manager's
MultiKueue objects fed by StackReferences to its workers. Reads the plan's ``FleetPlan``; derives nothing."""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.charts import KUEUE
from stacks.plan.fleet import EGRESS_OUTPUT, FACTS_OUTPUT, KUBECONFIG_OUTPUT, RUNTIME_IMAGE_OUTPUT, FleetPlan
from stacks.plan.fleet_egress import EgressSource, nat_scope
from stacks.plan.kueue_topology import namespace_of
from stacks.plan.stack import StackPlan
from render.fleet import admission_facts
from render.trainer import TORCH_IMAGE
from render.fleet_manager import multikueue_config, queue_namespace, render_manager
from render.kueue_config import INTEGRATIONS, fleet_manager_values


@dataclass
class FleetExports:
    outputs: dict[str, Any] = field(default_factory=dict)
    """Stack outputs to export (name -> value or Output)."""


def build_fleet(
    plan: StackPlan,
    cluster: pulumi.Resource,
    k8s_provider: pulumi.ProviderResource,
    kueue: pulumi.Resource | None,
    trainer: pulumi.Resource | None,
) -> FleetExports:
    fleet = plan.fleet
    if fleet is None:
        return FleetExports()
    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    section = fleet.section
    if fleet.worker:
        from components.k8s.fleet_worker import FleetWorker

        worker = FleetWorker(
            "fleet-worker",
            plan.cluster.name,
            getattr(cluster, "endpoint"),
            section.token_generation,
            fleet.gpus_per_node,
            after=[k for k in (kueue,) if k is not None],
            runtimes_after=[t for t in (trainer,) if t is not None],
            opts=opts,
            namespaces=[namespace_of(q) for q in plan.kueue.scheduling.queues] if plan.kueue else [],
            runtime_image=manager_runtime_image(plan),
        )
        return FleetExports({KUBECONFIG_OUTPUT: worker.kubeconfig, FACTS_OUTPUT: worker_facts(plan, fleet)})
    from components.k8s.fleet_manager import FleetManager

    refs = {w.name: pulumi.StackReference(f"fleet-{w.name}", stack_name=w.stack) for w in section.workers}
    FleetManager(
        "fleet",
        render_manager(section, manager_facts(plan, fleet)),
        fleet_manager_values(multikueue_config(section), [queue_namespace(q) for q in section.queues]),
        fleet.model_slugs,
        {n: r.require_output(KUBECONFIG_OUTPUT) for n, r in refs.items()},
        {n: r.require_output(FACTS_OUTPUT) for n, r in refs.items()},
        after=[cluster],
        opts=opts,
        runtime_image=section.runtime_image,
    )
    from components.image_digests import pinned

    return FleetExports(
        {
            EGRESS_OUTPUT: manager_egress(fleet, cluster),
            FACTS_OUTPUT: manager_facts(plan, fleet),
            # resolved once here; the workers run their fleet runtimes on it (manager_runtime_image)
            # (fleet.runtimeImage: stored in the fleet file, never re-resolved)
            RUNTIME_IMAGE_OUTPUT: section.runtime_image or pinned(TORCH_IMAGE),
        }
    )


def manager_egress(fleet: FleetPlan, cluster: pulumi.Resource) -> pulumi.Input[list[str]]:
    """The manager's ``fleetEgressAddresses``: its Cloud NAT's reserved addresses (GKE), its subnets' NAT gateways'
    Elastic IPs (EKS), or the declared ``egressCidrs``; known at deploy except the last (``stacks/plan/fleet_egress.py``)."""
    egress = fleet.egress
    assert egress is not None  # planned for every manager
    if egress.source == EgressSource.DECLARED:
        return list(egress.declared)
    if egress.source == EgressSource.RESERVED:
        return getattr(cluster, "egress_addresses")  # GkeCluster: its GkeCloudNat's addresses
    from components.eks.nat_egress import nat_egress_addresses

    return nat_egress_addresses(egress.subnets, parent=cluster)  # invokes with the cluster's AWS provider


def admitted_manager_egress(plan: StackPlan) -> pulumi.Output[list[str]] | None:
    """A worker with ``fleet.manager``: the manager's ``fleetEgressAddresses``, read through a StackReference, for
    the cluster's authorized networks (``get_output``: before the manager's first ``pulumi up`` there are none, and
    the worker admits only its own networks until its next ``pulumi up``). Offline the reference has no outputs."""
    reference = plan.cluster.fleet_manager
    if reference is None:
        return None
    return (
        _manager(reference)
        .get_output(EGRESS_OUTPUT)
        .apply(lambda v: [str(c) for c in v] if isinstance(v, list) else [])
    )


PINNED = re.compile(r"^[^@\s]+@sha256:[0-9a-f]{64}$")
_MANAGERS: "weakref.WeakKeyDictionary[Any, pulumi.StackReference]" = weakref.WeakKeyDictionary()


def _manager(reference: str) -> pulumi.StackReference:
    """The worker's one StackReference to its manager (per program run: tests run several in one process)."""
    monitor = pulumi.runtime.settings.get_monitor()
    if monitor not in _MANAGERS:
        _MANAGERS[monitor] = pulumi.StackReference("fleet-manager", stack_name=reference)
    return _MANAGERS[monitor]


def manager_runtime_image(plan: StackPlan) -> pulumi.Output[str | None] | None:
    """A worker with ``fleet.manager``: the manager's ``fleetRuntimeImage`` (the fleet runtimes' image by digest,
    resolved once on the manager), or None until the manager's first ``pulumi up`` (and offline): the worker then
    resolves its own, and takes the manager's at its next ``pulumi up`` (round 3 of the bring-up)."""
    reference = plan.cluster.fleet_manager
    if reference is None:
        return None
    return (
        _manager(reference)
        .get_output(RUNTIME_IMAGE_OUTPUT)
        .apply(lambda v: v if isinstance(v, str) and PINNED.match(v) else None)
    )


def worker_facts(plan: StackPlan, fleet: FleetPlan) -> dict[str, Any]:
    """What the manager (and the fleet rules) need to know about a worker; nothing secret."""
    spec = plan.spec
    return {
        "role": "worker",
        "cluster": spec.cluster.name,
        "cloud": spec.cloud.value,
        "region": spec.region,
        "kueueVersion": KUEUE.version,
        "integrations": list(INTEGRATIONS),
        "queues": [dict(q, gpus=dict(q["gpus"])) for q in fleet.queues],
        "gpus": [dict(m, pools=list(m["pools"])) for m in fleet.gpu_models],
        "authorizedNetworks": list(spec.cluster.authorized_networks),
        "managerEgressFrom": plan.cluster.fleet_manager,  # admits that stack's fleetEgressAddresses
        "privateEndpoint": plan.cluster.private_endpoint,
        "cloudNat": nat_scope(spec.cloud.value, plan.cluster),  # one NAT per network and region in a fleet
        "priorityClasses": {pc.name: pc.value for pc in plan.kueue.scheduling.priority_classes}
        if plan.kueue is not None
        else {},
        "admission": worker_admission(plan, fleet),
    }


def worker_admission(plan: StackPlan, fleet: FleetPlan) -> dict[str, Any]:
    """What this worker's Kueue admits from (flavors, queues, the fleet runtimes' PodSets), for the manager's checks."""
    kueue = plan.kueue
    if kueue is None:
        return {}
    return admission_facts(kueue.scheduling, list(plan.facts), kueue.placements, fleet.gpus_per_node)


def manager_facts(plan: StackPlan, fleet: FleetPlan) -> dict[str, Any]:
    spec = plan.spec
    return {
        "role": "manager",
        "cluster": spec.cluster.name,
        "cloud": spec.cloud.value,
        "region": spec.region,
        "kueueVersion": KUEUE.version,
        "integrations": list(INTEGRATIONS),
        "workers": [{"name": w.name, "stack": w.stack} for w in fleet.section.workers],
        "egressSource": fleet.egress.source.value if fleet.egress is not None else None,
        "egressCidrs": list(fleet.section.egress_cidrs),
        "priorityClasses": {pc.name: pc.value for pc in fleet.section.priority_classes},
        # a worker's fleet.manager (<org>/<project>/<stack>) must name these; the organization is not known offline
        "project": pulumi.get_project(),
        "stack": pulumi.get_stack(),
    }
