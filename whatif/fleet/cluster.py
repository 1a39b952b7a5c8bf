"""A fleet for the simulator: each worker's own cluster model (its pools, queues, Kueue settings as rendered), with
its pools and queues renamed ``<worker>/<name>`` so one engine can run them side by side, and the manager's view (the
fleet queues over every worker's pools, and its quota per queue). Pure: no Pulumi."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from stacks.plan.fleet import cohort_limits
from stacks.plan.fleet_admission import admitting_pools
from stacks.spec.fleet import Dispatcher, FleetRole, gpu_slug
from stacks.spec.stack import StackSpec
from render.fleet_manager import multikueue_config
from whatif.cluster import ClusterModel, KueueModel, QueueModel, QuotaModel
from whatif.feasible import borrowable

INCREMENTAL_WIDEN_S = 300.0
"""MultiKueue's Incremental dispatcher nominates more workers after 5 minutes without admission."""


@dataclass(frozen=True)
class FleetModel:
    dispatcher: str
    """``AllAtOnce`` or ``Incremental``."""
    step_size: int
    workers: tuple[str, ...]
    """In ``fleet.workers`` order (the Incremental dispatcher's order)."""
    stacks: dict[str, str]
    """Worker -> its stack name."""
    clusters: dict[str, ClusterModel]
    """Worker -> its cluster model, pools and queues prefixed with ``<worker>/``."""
    manager_quota: dict[str, QueueModel]
    """Fleet queue -> its manager ClusterQueue as rendered: one flavor per GPU model (keyed ``H100_80GB``, in the
    queue's flavor order), nominal GPUs and the cohort limits the workers give it (``stacks/plan/fleet.cohort_limits``,
    as ``render/fleet_manager.with_cohort_limits`` renders them); all in the cohort ``fleet``."""
    pool_model: dict[str, str] = field(default_factory=dict)
    """``<worker>/<pool>`` -> its GPU model (``H100_80GB``): the label the fleet runtime of that model selects."""
    runtime_gpus: dict[str, int] = field(default_factory=dict)
    """GPU model -> GPUs per node of its fleet runtime (``fleet-<model>`` asks for whole nodes)."""
    worker_lost_timeout_s: float = 900.0
    """``multiKueue.workerLostTimeout`` as the manager's Kueue Configuration renders it (Kueue's default: 15 min)."""

    def job_model(self, job: Any) -> str | None:
        """The GPU model (the manager's flavor) of a fleet job: its pool's when it names one, else the model whose
        fleet runtime asks for the job's GPUs per node (the runtime a user submits it with), first in its queue's
        flavor order; None when no fleet runtime asks for that many."""
        if job.pool:
            return self.pool_model.get(job.pool)
        order = list(self.manager_quota[job.queue].quotas) if job.queue in self.manager_quota else []
        order += [m for m in sorted(self.runtime_gpus) if m not in order]
        return next((m for m in order if self.runtime_gpus.get(m) == job.gpus_per_node), None)

    def never_startable(self, job: Any) -> str | None:
        """Why the manager could never dispatch the job, or None."""
        model = self.job_model(job)
        if model is None:
            if job.pool:
                return f"pool {job.pool} has no GPU model a fleet runtime selects"
            runtimes = ", ".join(f"{m} {n}" for m, n in sorted(self.runtime_gpus.items()))
            return (
                f"no fleet runtime asks for {job.gpus_per_node} GPUs per node (fleet runtimes take whole nodes: "
                f"{runtimes or 'none'})"
            )
        queue = self.manager_quota.get(job.queue)
        if queue is None or model not in queue.quotas:
            return f"fleet queue {job.queue} has no {model} quota on the manager"
        return None


def prefixed(cluster: ClusterModel, worker: str) -> ClusterModel:
    pools = {f"{worker}/{n}": replace(p, name=f"{worker}/{n}") for n, p in cluster.pools.items()}
    queues = {
        f"{worker}/{n}": replace(q, name=f"{worker}/{n}", quotas={f"{worker}/{p}": v for p, v in q.quotas.items()})
        for n, q in cluster.queues.items()
    }
    kueue = cluster.kueue
    if kueue is not None and kueue.cohort:
        kueue = replace(kueue, cohort=f"{worker}/{kueue.cohort}")
    return replace(cluster, stack=worker, pools=pools, queues=queues, kueue=kueue)


def is_manager(spec: StackSpec) -> bool:
    return spec.fleet is not None and spec.fleet.role == FleetRole.MANAGER


def worker_facts(spec: StackSpec) -> dict[str, Any]:
    """What a worker exports about its GPUs and its Kueue admission (``compose/fleet.py`` exports the same, from the
    same plan and renderer): the input of the ported flavor assigner."""
    from catalog import load_catalog
    from render.fleet import admission_facts
    from stacks.plan.stack import plan_stack

    plan = plan_stack(spec, load_catalog())
    if plan.fleet is None or plan.kueue is None:
        return {}
    return {
        "gpus": [dict(m) for m in plan.fleet.gpu_models],
        "queues": [dict(q) for q in plan.fleet.queues],
        "admission": admission_facts(
            plan.kueue.scheduling, list(plan.facts), plan.kueue.placements, plan.fleet.gpus_per_node
        ),
    }


def admissible_only(cluster: ClusterModel, facts: dict[str, Any]) -> ClusterModel:
    """The worker's queues with quota only in pools whose flavor Kueue could give a fleet job of the pool's GPU model
    (``stacks/plan/fleet_admission.py``: a topology-aware flavor in a mixed queue is never given one)."""
    model_of = {p: str(g["model"]) for g in facts.get("gpus") or [] for p in g.get("pools") or []}
    queues = {}
    for name, q in cluster.queues.items():
        keep = {p: v for p, v in q.quotas.items() if p in model_of and p in admitting_pools(facts, name, model_of[p])}
        queues[name] = replace(q, quotas=keep)
    return replace(cluster, queues=queues)


def fleet_model(
    spec: StackSpec,
    cluster_of_stack: Callable[[str], ClusterModel],
    facts_of_stack: Callable[[str], dict[str, Any]] | None = None,
) -> FleetModel:
    """``cluster_of_stack(stack name)``: a worker's cluster model (the worker's stack file, validated);
    ``facts_of_stack``: its exported facts, whose admission facts keep only the pools Kueue admits fleet jobs to."""
    fleet = spec.fleet
    assert fleet is not None
    clusters, stacks = {}, {}
    for w in fleet.workers:
        stacks[w.name] = w.stack.rsplit("/", 1)[-1]
        cluster = cluster_of_stack(stacks[w.name])
        if facts_of_stack is not None:
            cluster = admissible_only(cluster, facts_of_stack(stacks[w.name]))
        clusters[w.name] = prefixed(cluster, w.name)
    facts = [facts_of_stack(stacks[w.name]) if facts_of_stack is not None else None for w in fleet.workers]
    pool_model: dict[str, str] = {}
    runtime_gpus: dict[str, int] = {}
    for w, f in zip(fleet.workers, facts):
        for g in (f or {}).get("gpus") or []:
            runtime_gpus.setdefault(str(g["model"]), int(g["gpusPerNode"]))
            pool_model.update({f"{w.name}/{p}": str(g["model"]) for p in g.get("pools") or []})
    return FleetModel(
        fleet.dispatcher.value,
        fleet.incremental_step_size if fleet.dispatcher == Dispatcher.INCREMENTAL else len(fleet.workers),
        tuple(w.name for w in fleet.workers),
        stacks,
        clusters,
        {q.name: manager_queue(q, facts) for q in fleet.queues},
        pool_model,
        runtime_gpus,
        go_seconds(multikueue_config(fleet)["workerLostTimeout"]),
    )


def go_seconds(duration: str) -> float:
    """A Go duration as the renderer writes it (``900s``, or ``1h2m3s``) in seconds."""
    total, num = 0.0, ""
    for ch in duration:
        if ch.isdigit() or ch == ".":
            num += ch
        else:
            total += float(num) * {"h": 3600, "m": 60, "s": 1}[ch]
            num = ""
    return total


def manager_queue(queue: Any, facts: list[dict[str, Any] | None]) -> QueueModel:
    """A fleet queue's manager ClusterQueue: per GPU model its nominal GPUs and the cohort limits the renderer gives
    it from the workers' exported queues (what they lend, what they can borrow)."""
    nominal = {gpu_slug(q.gpu_model): q.gpus for q in queue.quotas}
    limits = cohort_limits(queue.name, queue.namespace or queue.name, nominal, facts)
    quotas = {}
    for q in queue.quotas:
        lim = limits[gpu_slug(q.gpu_model)]
        quotas[q.gpu_model.value] = QuotaModel(q.gpus, lim.get("borrowingLimit"), lim.get("lendingLimit"))
    return QueueModel(queue.name, 1, quotas)


def composite(name: str, fleet: FleetModel) -> ClusterModel:
    """The engine's cluster: every worker's pools; the fleet queues, each over the pools its mirrored queues have
    quota in on any worker, up to what they can reach there (what 'can this job ever start somewhere' is judged
    against; the workers' own Kueue models decide the rest)."""
    pools = {n: p for c in fleet.clusters.values() for n, p in c.pools.items()}
    queues = {}
    for q in fleet.manager_quota:
        quotas = {}
        for w, c in fleet.clusters.items():
            mirrored = c.queues.get(f"{w}/{q}")
            if mirrored is not None:  # what the worker's queue can reach there, borrowing included
                quotas.update(
                    {
                        p: QuotaModel(v.nominal + borrowable(c, mirrored, p, v.borrowing_limit), 0, 0)
                        for p, v in mirrored.quotas.items()
                    }
                )
        queues[q] = QueueModel(q, 1, quotas)
    classes: dict[str, int] = {}
    for c in fleet.clusters.values():
        for k, v in c.class_values.items():
            classes.setdefault(k, v)
    sources = sorted({s for c in fleet.clusters.values() for s in c.sources})
    start = next(iter(fleet.clusters.values())).start  # the same factors for every worker (catalog + --assume)
    return ClusterModel(
        name, "kueue", pools, queues, classes, None, kueue=KueueModel(None, False, None), sources=sources, start=start
    )


def worker_stack_path(root: Path, stack: str) -> Path:
    return root / f"Pulumi.{stack}.yaml"
