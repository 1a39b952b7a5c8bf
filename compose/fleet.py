"""The fleet role of a stack (``gpu-cluster:fleet``): a worker's access objects and exported facts, or the manager's
MultiKueue objects fed by StackReferences to its workers."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.charts import KUEUE
from render.kueue import namespace_of
from render.kueue_config import INTEGRATIONS
from plan.facts import PoolFacts
from spec.fleet import EGRESS_OUTPUT, FACTS_OUTPUT, KUBECONFIG_OUTPUT, FleetRole
from spec.stack import StackSpec



@dataclass
class FleetExports:
    outputs: dict[str, Any] = field(default_factory=dict)
    """Stack outputs to export (name -> value or Output)."""


def build_fleet(spec: StackSpec, pools: dict[str, PoolFacts], cluster: pulumi.Resource, k8s_provider,
                kueue: pulumi.Resource | None, trainer: pulumi.Resource | None) -> FleetExports:
    if spec.fleet is None:
        return FleetExports()
    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    if spec.fleet.role == FleetRole.WORKER:
        from components.k8s.fleet_worker import FleetWorker
        per_node: dict = {}
        for f in pools.values():
            per_node.setdefault(f.machine.gpu_model, f.gpus_per_node)  # the first pool of a model (spec order)
        worker = FleetWorker("fleet-worker", spec.cluster.name, getattr(cluster, "endpoint"),
                             spec.fleet.token_generation, per_node, after=[k for k in (kueue,) if k is not None],
                             runtimes_after=[t for t in (trainer,) if t is not None], opts=opts)
        return FleetExports({KUBECONFIG_OUTPUT: worker.kubeconfig, FACTS_OUTPUT: worker_facts(spec, pools)})
    from components.k8s.fleet_manager import FleetManager
    refs = {w.name: pulumi.StackReference(f"fleet-{w.name}", stack_name=w.stack) for w in spec.fleet.workers}
    FleetManager("fleet", spec.fleet, {n: r.require_output(KUBECONFIG_OUTPUT) for n, r in refs.items()},
                 {n: r.require_output(FACTS_OUTPUT) for n, r in refs.items()}, manager_facts(spec), after=[cluster],
                 opts=opts)
    return FleetExports({EGRESS_OUTPUT: list(spec.fleet.egress_cidrs), FACTS_OUTPUT: manager_facts(spec)})


def worker_facts(spec: StackSpec, pools: dict[str, PoolFacts]) -> dict[str, Any]:
    """What the manager (and the fleet rules) need to know about a worker; nothing secret."""
    models: dict[str, dict[str, Any]] = {}
    for f in pools.values():
        entry = models.setdefault(f.machine.gpu_model.value, {"model": f.machine.gpu_model.value,
                                                              "gpusPerNode": f.gpus_per_node, "maxGpus": 0, "pools": []})
        entry["maxGpus"] += f.max_gpus
        entry["pools"].append(f.name)
    queues = []
    for queue in spec.scheduling.queues if spec.scheduling is not None else []:
        gpus: dict[str, int] = {}
        for quota in queue.quotas:
            model = pools[quota.pool].machine.gpu_model.value
            gpus[model] = gpus.get(model, 0) + quota.gpus
        queues.append({"name": queue.name, "namespace": namespace_of(queue), "gpus": gpus})
    return {"role": "worker", "cluster": spec.cluster.name, "cloud": spec.cloud.value, "region": spec.region,
            "kueueVersion": KUEUE.version, "integrations": list(INTEGRATIONS), "queues": queues,
            "gpus": list(models.values()), "authorizedNetworks": list(spec.cluster.authorized_networks),
            "privateEndpoint": not spec.cluster.authorized_networks}


def manager_facts(spec: StackSpec) -> dict[str, Any]:
    assert spec.fleet is not None
    return {"role": "manager", "cluster": spec.cluster.name, "cloud": spec.cloud.value, "region": spec.region,
            "kueueVersion": KUEUE.version, "integrations": list(INTEGRATIONS),
            "workers": [{"name": w.name, "stack": w.stack} for w in spec.fleet.workers],
            "egressCidrs": list(spec.fleet.egress_cidrs)}
