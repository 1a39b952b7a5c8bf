"""Builds the ``ClusterModel`` of a stack: reads the spec, the plan and what ``render/`` renders (Kueue objects and
manager config, the Slurm plan), so nothing is declared twice. Pure: no Pulumi."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Mapping, Sequence

from catalog import CapacityType, load_catalog
from catalog.provisioning import load_provisioning
from render.kueue import render_kueue, slices_per_gpu
from render.kueue_config import manager_config
from stacks.plan.kueue_topology import REQUIRED_ANNOTATION
from stacks.plan.kueue_topology import Placement, pool_placements, spanning_annotations
from stacks.plan.nvlink import default_block_size
from stacks.plan.billing import billing_note, pool_billing
from stacks.plan.facts import PoolFacts
from stacks.plan.stack import plan_stack
from stacks.plan.start_time import factor_bounds, factors, largest_gang, pool_start
from stacks.spec.scheduling import SchedulingSpec, Workload
from stacks.spec.stack import NodePool, StackSpec
from whatif.cluster import (
    BLOCK_SCALE_DOWN_LEAD_S,
    DEFAULT_QUEUE,
    MONTH_S,
    ClusterModel,
    KueueModel,
    PartitionModel,
    PoolModel,
    PowerModel,
    QueueModel,
    QuotaModel,
    SlurmModel,
)

if TYPE_CHECKING:  # Slurm stacks only: stacks.plan.slurm is imported where a Slurm model is built (the import floor)
    from stacks.plan.slurm import SlurmPlan


def build_cluster(
    spec: StackSpec,
    stack: str,
    scheduler: str = "auto",
    interruptions_per_node_month: float | None = None,
    assume: Mapping[str, float] | None = None,
    price_overrides: Sequence[dict] = (),
) -> ClusterModel:
    """``price_overrides``: negotiated prices in the policy pack's priceOverrides form (as the preview's cost table
    reads them)."""
    stack_plan = plan_stack(spec, load_catalog())  # the same planner the preview and the program use
    start = factors(assume)
    bounds = factor_bounds(assume)
    facts = list(stack_plan.facts)
    sched = spec.scheduling
    kind = (
        scheduler
        if scheduler != "auto"
        else ("kubernetes" if sched is None else "slurm" if sched.workload == Workload.SLURM else "kueue")
    )
    if sched is None and kind != "kubernetes":
        raise ValueError(f"stack {stack} has no scheduling section: --scheduler {kind} needs one")
    # the plan's Slurm plan, or (``--scheduler slurm`` on a Kueue stack) one made for the experiment
    plan = (stack_plan.slurm or _plan_slurm(sched, facts)) if sched is not None and kind == "slurm" else None
    placements = stack_plan.kueue.placements if stack_plan.kueue is not None else None
    blocks = _blocks(sched, facts, plan, placements)
    prov = load_provisioning()
    pools = {}
    for f, pool in zip(facts, spec.node_pools):
        p = prov[(f.cloud, f.capacity)]
        how = pool_start(
            stack_plan.pools[pool.name].pod_start,
            p.provision_seconds,
            pool.pod_start.image_size_gb if pool.pod_start else None,
            start,
        )
        gang = largest_gang(spec, pool, stack_plan.pools[pool.name].pod_start, f, start, None, bounds)
        rate = (
            p.spot_interruptions_per_node_month
            if interruptions_per_node_month is None
            else (interruptions_per_node_month if f.capacity == CapacityType.SPOT else 0.0)
        )
        ns = plan.nodeset(f.name) if plan else None
        bill = pool_billing(f, pool, price_overrides)  # the preview's lookup: a block's fee, an override, the list
        pools[f.name] = PoolModel(
            name=f.name,
            gpus_per_node=f.gpus_per_node,
            slices_per_gpu=slices_per_gpu(f),
            min_nodes=f.min_nodes,
            max_nodes=f.max_nodes,
            usd_per_node_hour=bill.usd_per_node_hour,
            committed_nodes=bill.committed_nodes,
            window_s=None if bill.window_hours is None else bill.window_hours * 3600,
            drain_lead_s=_drain_lead_s(pool) if bill.window_hours is not None else BLOCK_SCALE_DOWN_LEAD_S,
            billing_note=billing_note(bill, f.gpus_per_node),
            capacity=f.capacity.value,
            exclusive=f.multi_node and kind == "slurm",
            block_nodes=blocks.get(f.name, (None, False))[0],
            block_required=blocks.get(f.name, (None, False))[1],
            provision_s=float(p.provision_seconds),
            interruptions_per_node_s=rate / MONTH_S,
            gpu_type=f.machine.gpu_model.slurm_name,
            cpus_per_node=ns.cpus if ns else (f.machine.vcpu or f.gpus_per_node),
            pull_s=how.pull_s,
            prepull=how.prepull,
            nvlink_domain_nodes=f.nvlink.domain_nodes if f.nvlink is not None else None,
            compute_domains=f.nvlink is not None and f.nvlink.compute_domains,
            cold_range={"pods": gang["pods"], **gang["coldRangeS"]},
            spans_blocks=placements is not None
            and kind == "kueue"
            and spanning_annotations(f, placements.get(f.name)) is not None,
        )
    classes = {c.name: c.value for c in sched.priority_classes} if sched else {}
    sources = sorted({prov[(f.cloud, f.capacity)].source for f in facts})
    if sched is None or kind == "kubernetes":
        queue = QueueModel(
            DEFAULT_QUEUE, 1, {p.name: QuotaModel(p.max_nodes * p.slices_per_node, None, None) for p in pools.values()}
        )
        return ClusterModel(
            stack,
            "kubernetes",
            pools,
            {DEFAULT_QUEUE: queue},
            {},
            None,
            kueue=KueueModel(None, False, None),
            sources=sources,
            start=start,
        )
    if kind == "slurm":
        assert plan is not None
        return dataclasses.replace(_slurm_cluster(stack, sched, plan, pools, classes, sources), start=start)
    timeout = stack_plan.kueue.pods_ready_timeout if stack_plan.kueue is not None else None
    return dataclasses.replace(
        _kueue_cluster(stack, sched, facts, placements, pools, classes, sources, timeout.seconds if timeout else None),
        start=start,
    )


def _plan_slurm(sched: SchedulingSpec, facts: list[PoolFacts]) -> SlurmPlan:
    from stacks.plan.slurm import plan_slurm

    return plan_slurm(sched, facts)


def _blocks(
    sched: SchedulingSpec | None,
    facts: list[PoolFacts],
    plan: SlurmPlan | None,
    placements: dict[str, Placement] | None,
) -> dict[str, tuple[int, bool]]:
    """Pool -> (nodes per block, required) where gangs are placed by block."""
    if sched is None:
        return {}
    if plan is not None:  # Slurm's topology/block keeps a job inside the smallest block level that holds it
        return {b.pool: (b.block_size, True) for b in plan.topology.blocks}
    out = {}
    for name, where in (placements if placements is not None else pool_placements(sched, facts)).items():
        f = next(x for x in facts if x.name == name)
        if (
            where.topology
            and where.annotation
            and f.nvlink is not None
            and where.annotation[1] == f.nvlink.domain_label
        ):  # GB200: one block = one NVLink domain
            out[name] = (f.nvlink.domain_nodes, where.annotation[0] == REQUIRED_ANNOTATION)
        elif where.topology and where.annotation and where.annotation[1].endswith(("block", "layer-2")):
            out[name] = (
                sched.slurm.block_size or default_block_size(f.machine, f.max_nodes),
                where.annotation[0] == REQUIRED_ANNOTATION,
            )
    return out


def _kueue_cluster(
    stack: str,
    sched: SchedulingSpec,
    facts: list[PoolFacts],
    placements: dict[str, Placement] | None,
    pools: dict[str, PoolModel],
    classes: dict[str, int],
    sources: list[str],
    pods_ready_timeout_s: int | None = None,
) -> ClusterModel:
    objects = render_kueue(sched, facts, placements, namespaces=False)
    pool_of_flavor = {v: k for k, v in objects.flavor_names().items()}
    queues = {}
    for cq in objects.cluster_queues:
        body = cq["spec"]
        quotas = {}
        for flavor in body["resourceGroups"][0]["flavors"]:
            res = flavor["resources"][0]
            quotas[pool_of_flavor[flavor["name"]]] = QuotaModel(
                res["nominalQuota"], res.get("borrowingLimit"), res.get("lendingLimit")
            )
        if not body.get("cohortName"):  # without a cohort nothing is borrowed or lent
            quotas = {k: QuotaModel(q.nominal, 0, 0) for k, q in quotas.items()}
        queues[cq["metadata"]["name"]] = QueueModel(
            cq["metadata"]["name"],
            body.get("fairSharing", {}).get("weight", 1),
            quotas,
            strict_fifo=body["queueingStrategy"] == "StrictFIFO",
            within_queue=body["preemption"]["withinClusterQueue"],
            reclaim=body["preemption"].get("reclaimWithinCohort", "Never"),
            borrow_within_cohort=body["preemption"].get("borrowWithinCohort", {}).get("policy", "Never"),
            when_can_borrow=body.get("flavorFungibility", {}).get("whenCanBorrow", "MayStopSearch"),
            when_can_preempt=body.get("flavorFungibility", {}).get("whenCanPreempt", "TryNextFlavor"),
            borrow_threshold=body["preemption"].get("borrowWithinCohort", {}).get("maxPriorityThreshold"),
        )
    config = manager_config(sched, pods_ready_timeout_s=pods_ready_timeout_s)
    ready = config.get("waitForPodsReady")
    fair = config.get("fairSharing")
    strategies = tuple((fair or {}).get("preemptionStrategies") or KueueModel.strategies)
    timestamp = ((ready or {}).get("requeuingStrategy") or {}).get("timestamp", "Eviction")
    kueue = KueueModel(
        cohort=sched.cohort,
        fair_sharing=fair is not None,
        gang_timeout_s=float(ready["timeout"].rstrip("s")) if ready else None,
        strategies=strategies,
        requeue_timestamp=timestamp,
        recovery_timeout_s=float(ready.get("recoveryTimeout", ready["timeout"]).rstrip("s")) if ready else None,
    )
    default = None  # Kueue: a workload without a priority class has priority 0
    return ClusterModel(stack, "kueue", pools, queues, classes, default, kueue=kueue, sources=sources)


def _slurm_cluster(
    stack: str,
    sched: SchedulingSpec,
    plan: SlurmPlan,
    pools: dict[str, PoolModel],
    classes: dict[str, int],
    sources: list[str],
) -> ClusterModel:
    from stacks.plan.slurm import ALL_NODESETS

    d = plan.directives
    bf = dict(item.split("=") for item in d["SchedulerParameters"].split(",") if "=" in item)
    every = tuple(pools)
    parts = tuple(
        PartitionModel(
            p.name,
            every if p.nodesets == (ALL_NODESETS,) else p.nodesets,
            int(p.options["PriorityTier"]),
            p.options["Default"] == "YES",
            int(p.options.get("DefCpuPerGPU", 0)),
        )
        for p in plan.partitions
    )
    accounts = {a.name: a for a in plan.accounts}
    queues = {
        q.name: QueueModel(
            q.name,
            accounts[q.name].fairshare,
            {qt.pool: QuotaModel(qt.gpus, qt.borrowing_limit, None) for qt in q.quotas},
        )
        for q in sched.queues
    }
    slurm = SlurmModel(
        weight_fairshare=int(d.get("PriorityWeightFairshare", 0)),
        weight_age=int(d.get("PriorityWeightAge", 0)),
        weight_job_size=int(d["PriorityWeightJobSize"]),
        weight_qos=int(d["PriorityWeightQOS"]),
        bf_interval_s=float(bf["bf_interval"]),
        bf_window_s=float(bf["bf_window"]) * 60,
        bf_resolution_s=float(bf["bf_resolution"]),
        bf_max_job_test=int(bf["bf_max_job_test"]),
        preempt=d["PreemptType"] != "preempt/none",
        requeue=d["PreemptMode"] == "REQUEUE",
        preempt_type=d["PreemptType"].split("/", 1)[1],
        accounting=plan.accounting,
        qos_priority={q.name: q.priority for q in plan.qos},
        qos_preempts={q.name: q.preempts for q in plan.qos},
        default_qos=plan.accounts[0].default_qos if plan.accounts else None,
        partitions=parts,
        fairshare={a.name: a.fairshare for a in plan.accounts},
        gpu_caps={a.name: dict(a.gpu_caps) for a in plan.accounts} if plan.accounting else {},
        qos_limits={
            q.name: (
                None if q.max_wall_minutes is None else q.max_wall_minutes * 60.0,
                q.max_gpus_per_user,
                q.grp_gpus,
            )
            for q in plan.qos
            if q.limited and plan.accounting
        },
        power=_power(plan),
    )
    return ClusterModel(stack, "slurm", pools, queues, classes, slurm.default_qos, slurm=slurm, sources=sources)


def _power(plan: SlurmPlan) -> PowerModel | None:
    sc = plan.scaling
    if not sc.pools:
        return None
    d = sc.directives()
    return PowerModel(
        {pool: lo for pool, lo, _ in sc.pools},
        float(d["SuspendTime"]),
        float(d["SuspendTimeout"]),
        float(d["ResumeTimeout"]),
    )


def _drain_lead_s(pool: NodePool) -> float:
    """A capacity block's lead before its window ends when EC2 starts terminating it (60 min for an UltraServer block,
    30 otherwise); imported here only for such a pool (the what-if's import floor)."""
    from stacks.plan.capacity_block import EC2_TERMINATION_LEAD, ULTRASERVER_TERMINATION_LEAD

    return (ULTRASERVER_TERMINATION_LEAD if pool.capacity.ultraserver_type else EC2_TERMINATION_LEAD).total_seconds()
