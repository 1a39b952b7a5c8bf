"""Slurm QOS, preemption and accounts of a ``workload: slurm`` stack: priority classes as QOS, who preempts whom.

Reports into the ``scheduling`` scope; never raises (called from ``stacks/validate/slurm.py``).
"""

from __future__ import annotations

from stacks.spec.scheduling import SchedulingSpec, WithinQueuePreemption
from stacks.spec.slurm import SlurmPreemptType
from stacks.validate.issues import Issues, allowed_list, choice_fix

RESERVED_ACCOUNTS = ("root",)
QOS_PRIORITY_MAX = 4_294_967_295


# -- QOS and preemption -----------------------------------------------------------------------------------------
def check_qos(scheduling: Issues, sched: SchedulingSpec) -> None:
    slurm = scheduling.at("slurm")
    classes = {c.name: c.value for c in sched.priority_classes}
    names = list(classes)
    for j, c in enumerate(sched.priority_classes):
        if not 0 <= c.value <= QOS_PRIORITY_MAX:
            scheduling.error(
                ("priorityClasses", j, "value"),
                "a Slurm QOS priority is an unsigned 32-bit number",
                c.value,
                allowed=f"0 to {QOS_PRIORITY_MAX}",
                fix="use a value of 0 or more (only the order between classes matters)",
            )
    for qos, targets in sched.slurm.qos_preempts.items():
        where = slurm.at("qosPreempts", qos)
        if qos not in classes:
            where.error(
                None,
                "not a priority class",
                qos,
                allowed=allowed_list(names),
                fix=choice_fix("the key", qos, names) if names else "add it to scheduling.priorityClasses",
            )
            continue
        lower = allowed_list([n for n in names if classes[n] < classes[qos]]) or "none"
        for k, target in enumerate(targets):
            if target == qos:
                where.error(
                    k,
                    "a QOS cannot preempt itself (Slurm refuses it; jobs of one class never preempt each other)",
                    target,
                    allowed=lower,
                    fix=f"remove {target} from qosPreempts.{qos}",
                )
            elif target not in classes:
                where.error(
                    k, "not a priority class", target, allowed=allowed_list(names), fix=choice_fix("it", target, names)
                )
            elif classes[target] > classes[qos]:
                where.error(
                    k,
                    f"{qos} (value {classes[qos]}) would preempt the higher class {target} (value {classes[target]})",
                    target,
                    allowed=lower,
                    fix=f"remove {target}, or raise {qos}'s value above {classes[target]}",
                )
    if sched.slurm.default_qos is not None and sched.slurm.default_qos not in classes:
        slurm.error(
            "defaultQos",
            "not a priority class",
            sched.slurm.default_qos,
            allowed=allowed_list(names) or "none (no priorityClasses)",
            fix=choice_fix("it", sched.slurm.default_qos, names) if names else "remove defaultQos",
        )


def check_preemption(scheduling: Issues, sched: SchedulingSpec) -> None:
    s, slurm = sched.slurm, scheduling.at("slurm")
    if s.preempt_type == SlurmPreemptType.QOS and len(sched.priority_classes) < 2:
        slurm.error(
            "preemptType",
            "QOS preemption needs at least two priority classes",
            s.preempt_type.value,
            allowed="qos with two or more priorityClasses; partition_prio; none",
            fix="add scheduling.priorityClasses, or set preemptType: none",
        )
    if s.preempt_type == SlurmPreemptType.PARTITION_PRIO:
        tiers = {p.priority_tier for p in s.partitions} | ({1, 2} if s.all_pools_partition else {2})
        if len(tiers) < 2:
            slurm.error(
                "preemptType",
                "partition_prio needs partitions of different priorityTier; every partition here has the same tier",
                s.preempt_type.value,
                allowed="allPoolsPartition: true (tier 1 under the pools' tier 2), or partitions with another "
                "priorityTier",
                fix="set allPoolsPartition: true, or preemptType: qos",
            )
    if sched.preemption.within_queue == WithinQueuePreemption.LOWER_OR_NEWER_EQUAL_PRIORITY and s.preempt_type in (
        SlurmPreemptType.AUTO,
        SlurmPreemptType.QOS,
    ):
        scheduling.warn(
            ("preemption", "withinQueue"),
            "Slurm cannot preempt jobs of the same QOS: rendered as LowerPriority",
            sched.preemption.within_queue.value,
            allowed="LowerPriority or Never for Slurm",
            fix="set withinQueue: LowerPriority",
        )


def check_accounts(scheduling: Issues, sched: SchedulingSpec) -> None:
    from stacks.plan.slurm import accounting_on

    for j, q in enumerate(sched.queues):
        if q.name.lower() in RESERVED_ACCOUNTS:
            scheduling.error(
                ("queues", j, "name"),
                "Slurm's root account already exists and holds every other account",
                q.name,
                allowed="any name except root",
                fix="rename the queue",
            )
    if sched.queues and not accounting_on(sched) and any(q.fair_share_weight != 1 for q in sched.queues):
        scheduling.warn(
            ("slurm", "accounting"),
            "queues declare fairShareWeight, but accounts (and so their shares) need accounting",
            False,
            allowed="true (or omit it)",
            fix="remove accounting: false",
        )


def check_qos_limits(scheduling: Issues, sched: SchedulingSpec) -> None:
    from stacks.plan.slurm import accounting_on

    slurm = scheduling.at("slurm")
    names = [c.name for c in sched.priority_classes]
    for qos in sched.slurm.qos_limits:
        if qos not in names:
            slurm.error(
                ("qosLimits", qos),
                "not a priority class (a QOS exists only for a priority class)",
                qos,
                allowed=allowed_list(names) or "none (no priorityClasses)",
                fix=choice_fix("the key", qos, names) if names else "add it to scheduling.priorityClasses",
            )
    window = sched.slurm.backfill.window_minutes
    for qos, lim in sched.slurm.qos_limits.items():
        if lim.max_wall_minutes is not None and lim.max_wall_minutes > window:
            # slurm.conf(5), bf_window: should be at least as long as the highest expected time limit, or backfill
            # reserves nothing for the longest jobs and smaller ones can start ahead of them for ever
            slurm.warn(
                ("qosLimits", qos, "maxWallMinutes"),
                f"longer than the backfill window ({window} min): backfill cannot plan a job of this length",
                lim.max_wall_minutes,
                allowed=f"at most backfill.windowMinutes ({window})",
                fix=f"raise backfill.windowMinutes to {lim.max_wall_minutes}, or lower maxWallMinutes",
            )
    if sched.slurm.qos_limits and not accounting_on(sched):
        slurm.error(
            "accounting",
            "QOS limits live in slurmdbd: without accounting slurmctld enforces none of slurm.qosLimits",
            False,
            allowed="true (or omit it with a fair-share or age weight)",
            fix="set accounting: true, or remove slurm.qosLimits",
        )
