"""Kueue-only scheduling rules (workload ``kubeflow``): required topology placement, fair-share weights, borrowWithinCohort.

Each check reports into an ``Issues`` scope and never raises; ``check_scheduling`` (``stacks/validate/scheduling.py``)
runs them for a Kubeflow stack.
"""

from __future__ import annotations

from catalog import Cloud
from stacks.plan.kueue_topology import has_block_labels
from stacks.spec.scheduling import BorrowPolicy, ReclaimPreemption, SchedulingSpec, TopologyLevel, TopologyMode
from stacks.validate.issues import Issues
from stacks.validate.pool_gpus import PoolCapacity


def check_required_topology(
    topology: Issues, cloud: Cloud, sched: SchedulingSpec, caps: dict[str, PoolCapacity]
) -> None:
    if sched.topology.mode != TopologyMode.REQUIRED:
        return
    pools = [caps[p] for p in dict.fromkeys(q.pool for queue in sched.queues for q in queue.quotas) if p in caps]
    autoscaled = [c for c in pools if not c.tas]
    if autoscaled:
        names = ", ".join(f"{c.name} ({c.min_nodes}-{c.max_nodes} nodes)" for c in autoscaled)
        topology.error(
            "mode",
            f"required placement needs pools of fixed size or with queued provisioning, and {names} "
            f"{'autoscales' if len(autoscaled) == 1 else 'autoscale'}: "
            "Kueue topology-aware admission counts only nodes that exist, so a gang would wait for a scale-up it "
            "never triggers",
            "required",
            allowed="preferred or none (or minNodes = maxNodes, or capacity.queuedProvisioning, on those pools)",
            fix="use topology.mode: preferred, set minNodes equal to maxNodes (e.g. on a reservation), or turn on "
            "queued provisioning (GKE: capacity.type flex-start)",
        )
    if sched.topology.level == TopologyLevel.BLOCK:
        blockless = [c for c in pools if c.tas and not has_block_labels(cloud, c.machine_type, c.queued)]
        if blockless:
            names = ", ".join(
                f"{c.name} ({c.machine_type}{', queued: no compact placement' if c.queued else ''})" for c in blockless
            )
            topology.error(
                "level",
                f"required block placement is impossible on {names}: "
                f"{'GKE' if cloud == Cloud.GCP else 'EKS'} puts no block topology labels on those nodes",
                "block",
                allowed="zone or host (or topology.mode: preferred)",
                fix="use level: zone or host, or mode: preferred, or move those quotas to a pool with block labels "
                "(GKE A3/A4, EKS p4d/p5/p6/g6e)",
            )


def check_fair_share(queues: Issues, sched: SchedulingSpec) -> None:
    if sched.cohort is not None and sched.fair_sharing:
        return
    for i, q in enumerate(sched.queues):
        if q.fair_share_weight == 1:
            continue
        if sched.cohort is None:
            queues.warn(
                (i, "fairShareWeight"),
                "fair-sharing weights only matter between queues of a cohort; this one is ignored",
                q.fair_share_weight,
                allowed="any weight, with a cohort",
                fix="set scheduling.cohort, or remove fairShareWeight",
            )
        else:
            queues.warn(
                (i, "fairShareWeight"),
                "fair-sharing weights only matter with fair sharing on, and "
                "scheduling.fairSharing is false; this one is ignored",
                q.fair_share_weight,
                allowed="any weight, with fairSharing: true",
                fix="remove fairSharing: false, or remove fairShareWeight",
            )


def check_borrow_within_cohort(scheduling: Issues, sched: SchedulingSpec) -> None:
    """Kueue v0.19.2 (site/content/en/docs/concepts/cluster_queue.md, "borrowWithinCohort"): only with classical
    preemption, not with fair sharing; a policy other than Never only when reclaimWithinCohort is not Never (the
    ClusterQueue CRD's rule: ``!(reclaimWithinCohort == 'Never' && borrowWithinCohort.policy != 'Never')``, so
    policy Never, which preempts nothing, is allowed with it); it preempts in a cohort."""
    borrow = sched.preemption.borrow_within_cohort
    if borrow is None:
        return
    where = ("preemption", "borrowWithinCohort")
    value = borrow.model_dump(by_alias=True, exclude_none=True, mode="json")
    if sched.cohort is None:
        scheduling.error(
            where,
            "borrowing-preemption acts between queues of a cohort, and scheduling.cohort is not set",
            value,
            allowed="with a cohort",
            fix="set scheduling.cohort, or remove it",
        )
    elif sched.fair_sharing:
        scheduling.error(
            where,
            "Kueue allows borrowWithinCohort only with classical preemption, not with fair "
            "sharing (on by default with a cohort)",
            value,
            allowed="with scheduling.fairSharing: false",
            fix="set scheduling.fairSharing: false, or remove borrowWithinCohort",
        )
    if sched.preemption.reclaim_within_cohort == ReclaimPreemption.NEVER and borrow.policy != BorrowPolicy.NEVER:
        scheduling.error(
            where,
            "Kueue supports borrowWithinCohort.policy other than Never only when reclaimWithinCohort is not Never",
            value,
            allowed="reclaimWithinCohort: LowerPriority or Any, or borrowWithinCohort.policy: Never",
            fix="set preemption.reclaimWithinCohort: LowerPriority, or remove borrowWithinCohort",
        )
