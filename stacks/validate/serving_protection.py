"""Serving protected from training: never on spot or flex-start capacity, a priority above training's, its own
Kueue queues beside training's quotas, never on Slurm's NodeSets. Reports through ``Issues``; never raises."""

from __future__ import annotations

from catalog import CapacityType
from stacks.plan.serving import SERVING_QUEUE, serving_gpus
from stacks.plan.kueue_pods import SERVING_DEFAULT_CLUSTER_QUEUE
from stacks.validate.issues import Issues
from stacks.validate.scheduling import PoolCapacity
from stacks.spec.scheduling import ReclaimPreemption, SchedulingSpec, Workload
from stacks.spec.serving import Service, ServingSpec
from stacks.spec.stack import NodePool


def check_protected(at: Issues, svc: Service, pool: NodePool, index: int) -> None:
    kind = pool.capacity.type
    if kind in (CapacityType.SPOT, CapacityType.FLEX_START):
        why = (
            "spot nodes can be reclaimed by the cloud at any time (30 s to 2 min notice)"
            if kind == CapacityType.SPOT
            else "flex-start nodes are deleted after maxRunHours and come only when queued"
        )
        at.error(
            "pool",
            f"pool '{pool.name}' is {kind.value}-only: {why}, taking every replica at once",
            svc.pool,
            allowed="a pool on on-demand or reservation capacity",
            fix=f"serve from an on-demand or reservation pool (nodePools[{index}].capacity.type)",
        )


def check_priority(where: Issues, serving: ServingSpec, sched: SchedulingSpec | None) -> None:
    classes = sched.priority_classes if sched is not None else []
    top = max(classes, key=lambda pc: pc.value, default=None)
    if top is not None and serving.priority <= top.value:
        where.error(
            "priority",
            f"not above training's highest priority class ('{top.name}': {top.value}), so "
            "training could preempt serving",
            serving.priority,
            allowed=f"more than {top.value}",
            fix=f"set serving.priority above {top.value} (default 1000000)",
        )


def check_queue(where: Issues, serving: ServingSpec, sched: SchedulingSpec, caps: dict[str, PoolCapacity]) -> None:
    if sched.workload == Workload.SLURM:
        slurm_pools = {q.pool for queue in sched.queues for q in queue.quotas}
        for i, svc in enumerate(serving.services):
            if svc.pool in slurm_pools:
                where.error(
                    ("services", i, "pool"),
                    f"pool '{svc.pool}' is a Slurm NodeSet: slurmd pods hold its "
                    "nodes' GPUs, so a serving pod there would either wait forever or take GPUs Slurm thinks "
                    "are free",
                    svc.pool,
                    allowed="a GPU pool no Slurm queue has quota on",
                    fix="add a pool for serving (on-demand or reservation) outside scheduling.queues",
                )
        return
    for taken in (SERVING_QUEUE, SERVING_DEFAULT_CLUSTER_QUEUE):
        if any(q.name == taken for q in sched.queues):
            where.error(
                "services",
                f"scheduling.queues already has a queue named '{taken}', the name of one of "
                f"serving's own ClusterQueues ('{SERVING_QUEUE}' and '{SERVING_DEFAULT_CLUSTER_QUEUE}')",
                taken,
                allowed="training queues with other names",
                fix=f"rename that training queue (serving's queues are always '{SERVING_QUEUE}' and "
                f"'{SERVING_DEFAULT_CLUSTER_QUEUE}')",
            )
    if sched.cohort is None:
        where.warn(
            "services",
            "scheduling.cohort is not set: serving's idle GPUs cannot be lent to training, so they "
            "stay idle between peaks",
            None,
            allowed=None,
            fix="set scheduling.cohort (e.g. cohort: ml)",
        )
    if sched.overcommit:
        return
    for pool, (_, hi) in serving_gpus(serving).items():
        cap = caps.get(pool)
        if cap is None:
            continue
        training = sum(q.gpus for queue in sched.queues for q in queue.quotas if q.pool == pool)
        if training + hi > cap.max_gpus:
            i = next(i for i, s in enumerate(serving.services) if s.pool == pool)
            where.error(
                ("services", i, "replicas", "max"),
                f"pool '{pool}': training quotas ({training} GPUs) + serving at max replicas ({hi} GPUs) = "
                f"{training + hi}, more than the pool has at maxNodes ({cap.max_nodes} × "
                f"{cap.gpus_per_node} = {cap.max_gpus})",
                training + hi,
                allowed=f"at most {cap.max_gpus}",
                fix="lower training quotas or serving's replicas.max (serving lends its idle GPUs to the "
                "cohort, so training keeps them busy), or set scheduling.overcommit: true",
            )


def check_reclaim(where: Issues, serving: ServingSpec, sched: SchedulingSpec) -> None:
    """Serving lends its idle GPUs to the cohort and gets them back only by reclaiming them: with
    ``reclaimWithinCohort: Never`` a training job that borrowed them keeps them until it ends, and serving cannot
    scale up meanwhile."""
    lends = any(hi > lo for lo, hi in serving_gpus(serving).values())
    if sched.workload == Workload.SLURM or sched.cohort is None or not lends:
        return
    if sched.preemption.reclaim_within_cohort == ReclaimPreemption.NEVER:
        where.error(
            "reclaimWithinCohort",
            "serving lends its idle GPUs (above replicas.min) to the cohort, and with Never it cannot take them "
            "back: a training job that borrowed them keeps them until it ends, so serving cannot scale up",
            ReclaimPreemption.NEVER.value,
            allowed="LowerPriority or Any (serving runs above every training class, so either reclaims for it)",
            fix="set scheduling.preemption.reclaimWithinCohort: LowerPriority",
        )
