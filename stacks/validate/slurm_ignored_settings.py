"""Kueue settings a Slurm stack would ignore: each one the user wrote is an error naming the Slurm way instead.

Reports into the ``scheduling`` scope; never raises (called from ``stacks/validate/slurm.py``).
"""

from __future__ import annotations

from stacks.spec.scheduling import SchedulingSpec
from stacks.validate.issues import Issues

# -- settings Slurm would ignore --------------------------------------------------------------------------------
_KUEUE_ONLY = "a Kueue-only setting: with workload slurm nothing reads it"


def check_kueue_only(scheduling: Issues, sched: SchedulingSpec) -> None:
    """Kueue settings the user wrote (``model_fields_set``; defaults are fine) that the Slurm path would ignore."""
    other = "or set scheduling.workload: kubeflow"
    if "queueing_strategy" in sched.model_fields_set:
        scheduling.error(
            "queueingStrategy",
            f"{_KUEUE_ONLY} (Slurm orders pending jobs by multifactor priority and fills gaps with backfill)",
            sched.queueing_strategy.value,
            allowed="omit it with workload slurm",
            fix=f"remove queueingStrategy (Slurm's order: slurm.priorityWeights, slurm.backfill), {other}",
        )
    if "gang" in sched.model_fields_set:
        scheduling.error(
            "gang",
            f"{_KUEUE_ONLY} (Slurm allocates all nodes of a job at once, so there is no gang "
            "admission or timeout to set)",
            sched.gang.model_dump(by_alias=True, mode="json", exclude_unset=True),
            allowed="omit it with workload slurm",
            fix=f"remove scheduling.gang, {other}",
        )
    if "reclaim_within_cohort" in sched.preemption.model_fields_set:
        scheduling.error(
            ("preemption", "reclaimWithinCohort"),
            f"{_KUEUE_ONLY} (Slurm has no cohort lending to reclaim; preemption is by QOS or partition tier)",
            sched.preemption.reclaim_within_cohort.value,
            allowed="omit it with workload slurm",
            fix=f"remove reclaimWithinCohort (Slurm preemption: preemption.withinQueue and slurm.preemptType), {other}",
        )
    if sched.preemption.borrow_within_cohort is not None:
        scheduling.error(
            ("preemption", "borrowWithinCohort"),
            f"{_KUEUE_ONLY} (Slurm has no cohort borrowing; preemption is by QOS or partition tier)",
            sched.preemption.borrow_within_cohort.model_dump(by_alias=True, exclude_none=True, mode="json"),
            allowed="omit it with workload slurm",
            fix=f"remove borrowWithinCohort, {other}",
        )
    if "fair_sharing" in sched.model_fields_set:
        scheduling.error(
            "fairSharing",
            f"{_KUEUE_ONLY} (Slurm's fair share is its accounts' fairShareWeight)",
            sched.fair_sharing,
            allowed="omit it with workload slurm",
            fix=f"remove scheduling.fairSharing, {other}",
        )
    if "flavor_fungibility" in sched.model_fields_set:
        scheduling.error(
            "flavorFungibility",
            f"{_KUEUE_ONLY} (a Slurm job names its partition; there is no flavor search)",
            sched.flavor_fungibility.model_dump(by_alias=True, mode="json", exclude_unset=True),
            allowed="omit it with workload slurm",
            fix=f"remove scheduling.flavorFungibility, {other}",
        )
    for i, q in enumerate(sched.queues):
        queue = scheduling.at("queues", i)
        if "namespace" in q.model_fields_set:
            queue.error(
                "namespace",
                f"{_KUEUE_ONLY} (a queue is a Slurm account: jobs go to slurmctld, not to a namespace's LocalQueue)",
                q.namespace,
                allowed="omit it with workload slurm",
                fix=f"remove namespace, and add users with sacctmgr add user NAME account={q.name}; {other}",
            )
        for j, quota in enumerate(q.quotas):
            if "lending_limit" in quota.model_fields_set:
                queue.error(
                    ("quotas", j, "lendingLimit"),
                    f"{_KUEUE_ONLY} (an account's GPU cap, GrpTRES, is its "
                    "quota plus borrowingLimit; Slurm has no lending limit)",
                    quota.lending_limit,
                    allowed="omit it with workload slurm",
                    fix=f"remove lendingLimit, {other}",
                )
