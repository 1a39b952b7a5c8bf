"""Priority classes -> Slurm QOS, queues -> Slurm accounts, and the idempotent ``sacctmgr`` script that applies them.

A QOS's ``Priority`` is the class value (PriorityWeightQOS scales it); it preempts the classes listed in
``slurm.qosPreempts`` or, by default, every class with a lower value; its limits are ``slurm.qosLimits`` (MaxWall,
MaxTRESPerUser and GrpTRES on ``gres/gpu``, with ``DenyOnLimit``). An account per queue gets
``Fairshare=<fairShareWeight>``, every QOS, a default QOS, and a GPU cap per GPU model (``GrpTRES``) that mirrors
the Kueue semantics of the same quotas: nominal GPUs without a cohort; nominal + borrowingLimit in a cohort (no cap
when borrowing is unlimited). Pure: no Pulumi.

Typed and untyped GPU requests (slurm.conf(5), AccountingStorageTRES; checked on real Slurm 26.05 in
``tests/whatif/slurm/test_whatif_real_slurm.py``): with ``AccountingStorageTRES=gres/gpu,gres/gpu:<type>`` a job asking
for ``--gres=gpu:h100:8`` counts against ``gres/gpu:h100`` *and* ``gres/gpu``, one asking for ``--gres=gpu:8``
against ``gres/gpu`` only, so a per-type cap alone never holds an untyped request. Each account therefore also gets
an untyped cap ``gres/gpu=<sum of its per-type caps>`` when that sum is well defined: when the account is capped on
every GPU type of the cluster. With one GPU type (most stacks) it equals the typed cap and binds every request. With
several types an untyped job is held to the total only (it may take more of one type than that type's cap, up to the
total). An account left uncapped on some type (no quota on that pool, or unlimited borrowing) gets no untyped cap:
it would hold back its typed jobs on the uncapped type, so its untyped requests are not capped (docs/slurm.md).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Sequence

from stacks.plan.slurm_nodes import NodeSetPlan
from stacks.spec.scheduling import SchedulingSpec, WithinQueuePreemption
from stacks.spec.slurm import SlurmPreemptType

PREEMPT_PLUGINS = {
    SlurmPreemptType.QOS: "preempt/qos",
    SlurmPreemptType.PARTITION_PRIO: "preempt/partition_prio",
    SlurmPreemptType.NONE: "preempt/none",
}


def preempt_type(sched: SchedulingSpec) -> SlurmPreemptType:
    chosen = sched.slurm.preempt_type
    if chosen != SlurmPreemptType.AUTO:
        return chosen
    if sched.priority_classes and sched.preemption.within_queue != WithinQueuePreemption.NEVER:
        return SlurmPreemptType.QOS
    return SlurmPreemptType.NONE


@dataclass(frozen=True)
class QosPlan:
    name: str
    priority: int
    preempts: tuple[str, ...]
    description: str
    max_wall_minutes: int | None = None
    max_gpus_per_user: int | None = None
    grp_gpus: int | None = None

    @property
    def limited(self) -> bool:
        return (self.max_wall_minutes, self.max_gpus_per_user, self.grp_gpus) != (None, None, None)

    @property
    def limit_sets(self) -> list[str]:
        """``sacctmgr modify qos ... set`` terms: every limit, -1 clearing one no longer declared. ``DenyOnLimit``
        with a limit: a job that could never meet it is refused at submission (acct_policy.c, strict checking),
        instead of pending for ever with ``QOSMaxWallDurationPerJobLimit``."""
        gpu = "gres/gpu="
        return [
            f"maxwall={self.max_wall_minutes if self.max_wall_minutes is not None else -1}",
            f"maxtresperuser={gpu}{self.max_gpus_per_user if self.max_gpus_per_user is not None else -1}",
            f"grptres={gpu}{self.grp_gpus if self.grp_gpus is not None else -1}",
            "flags+=DenyOnLimit" if self.limited else "flags-=DenyOnLimit",
        ]


@dataclass(frozen=True)
class AccountPlan:
    name: str
    fairshare: int
    qos: tuple[str, ...]
    default_qos: str | None
    gpu_caps: tuple[tuple[str, int], ...]
    """(GPU type, most GPUs the account's running jobs may hold), e.g. (("h100", 256),)."""
    gpu_total: int | None = None
    """The untyped cap (``gres/gpu``): the sum of ``gpu_caps`` when they cover every GPU type of the cluster."""

    @property
    def tres_caps(self) -> dict[str, int]:
        """GrpTRES entries, untyped first: {"gres/gpu": 144, "gres/gpu:h100": 128, "gres/gpu:l4": 16}."""
        total = {} if self.gpu_total is None else {"gres/gpu": self.gpu_total}
        return {**total, **{f"gres/gpu:{t}": n for t, n in self.gpu_caps}}

    @property
    def grp_tres(self) -> str | None:
        return ",".join(f"{k}={v}" for k, v in self.tres_caps.items()) or None


def plan_qos(sched: SchedulingSpec) -> list[QosPlan]:
    kind = preempt_type(sched)
    classes = sorted(sched.priority_classes, key=lambda c: (-c.value, c.name))
    out = []
    for c in classes:
        if c.name in sched.slurm.qos_preempts:
            preempts = tuple(sched.slurm.qos_preempts[c.name])
        elif kind == SlurmPreemptType.QOS:
            preempts = tuple(o.name for o in classes if o.value < c.value)
        else:
            preempts = ()
        lim = sched.slurm.qos_limits.get(c.name)
        out.append(
            QosPlan(
                c.name,
                c.value,
                preempts,
                c.description,
                max_wall_minutes=lim.max_wall_minutes if lim else None,
                max_gpus_per_user=lim.max_gpus_per_user if lim else None,
                grp_gpus=lim.grp_gpus if lim else None,
            )
        )
    return out


def default_qos(sched: SchedulingSpec) -> str | None:
    if sched.slurm.default_qos:
        return sched.slurm.default_qos
    if not sched.priority_classes:
        return None
    return min(sched.priority_classes, key=lambda c: (c.value, c.name)).name


def plan_accounts(sched: SchedulingSpec, nodesets: Sequence[NodeSetPlan]) -> list[AccountPlan]:
    gpu_type = {n.pool: n.gpu_type for n in nodesets}
    cluster_types = set(gpu_type.values())
    qos = tuple(c.name for c in sorted(sched.priority_classes, key=lambda c: (-c.value, c.name)))
    out = []
    for q in sched.queues:
        caps: dict[str, int | None] = {}
        for quota in q.quotas:
            model = gpu_type.get(quota.pool)
            if model is None:
                continue
            if sched.cohort is None:
                extra: int | None = 0
            else:
                extra = quota.borrowing_limit  # None: may borrow without limit
            if model in caps and caps[model] is None:
                continue
            caps[model] = None if extra is None else (caps.get(model) or 0) + quota.gpus + extra
        capped = tuple(sorted((t, n) for t, n in caps.items() if n is not None))
        total = sum(n for _, n in capped) if capped and {t for t, _ in capped} == cluster_types else None
        out.append(
            AccountPlan(
                name=q.name,
                fairshare=q.fair_share_weight,
                qos=qos,
                default_qos=default_qos(sched),
                gpu_caps=capped,
                gpu_total=total,
            )
        )
    return out


def sacctmgr_script(
    cluster: str,
    qos: Sequence[QosPlan],
    accounts: Sequence[AccountPlan],
    gpu_types: Sequence[str],
    wait_seconds: int = 600,
) -> str:
    """A POSIX shell script: wait for slurmdbd, then create-if-missing and set every QOS and account.

    Safe to run again (``add`` only for what is missing, ``modify`` always sets the declared values); accounts and
    QOS not in the spec are left alone. Accounts and QOS are global in slurmdbd, associations are per cluster: an
    account is added for THIS cluster unless it has an association here, so a second cluster on a shared slurmdbd
    (whose account of the same name exists already) gets its own association and limits.
    """
    q = shlex.quote
    lines = [
        "#!/bin/sh",
        "# Generated by gpu-cluster from the scheduling spec: Slurm QOS and accounts (idempotent).",
        "set -eu",
        f"CLUSTER={q(cluster)}",
        "S='sacctmgr -i'",
        "# exists ENTITY FIELD NAME: is NAME listed (qos lists 'name')",
        'exists() { sacctmgr -n -P show "$1" where name="$3" format="$2" | grep -qx "$3"; }',
        "# here ACCOUNT: has ACCOUNT an association on this cluster (accounts are global, associations per cluster)",
        'here() { sacctmgr -n -P show assoc where cluster="$CLUSTER" account="$1" format=account | grep -qx "$1"; }',
        "i=0; until sacctmgr -n -P show cluster format=cluster >/dev/null 2>&1; do",
        f"  i=$((i+5)); [ \"$i\" -le {wait_seconds} ] || {{ echo 'slurmdbd did not answer' >&2; exit 1; }}; sleep 5",
        "done",
        'sacctmgr -n -P show cluster format=cluster | grep -qx "$CLUSTER" || $S add cluster "$CLUSTER"',
    ]
    for item in qos:  # every QOS first: a Preempt= list may only name QOS that exist
        lines.append(f"exists qos name {q(item.name)} || $S add qos {q(item.name)}")
    for item in qos:
        preempt = ",".join(item.preempts) if item.preempts else "''"
        desc = item.description or item.name
        lines.append(
            f"$S modify qos where name={q(item.name)} set priority={item.priority} preempt={preempt} "
            f"description={q(desc)} {' '.join(item.limit_sets)}"
        )
    clear_caps = {"gres/gpu": -1, **{f"gres/gpu:{t}": -1 for t in gpu_types}}  # -1: no cap (clears an old one)
    for acct in accounts:
        lines.append(
            f'here {q(acct.name)} || $S add account {q(acct.name)} cluster="$CLUSTER" '
            f"description={q('gpu-cluster queue ' + acct.name)} organization=gpu-cluster"
        )
        sets = [f"fairshare={acct.fairshare}"]
        if acct.qos:
            sets.append(f"qos={','.join(acct.qos)}")
        if acct.default_qos:
            sets.append(f"defaultqos={acct.default_qos}")
        caps = {**clear_caps, **acct.tres_caps}
        if caps:
            sets.append("grptres=" + ",".join(f"{k}={v}" for k, v in sorted(caps.items())))
        lines.append(f'$S modify account where name={q(acct.name)} cluster="$CLUSTER" set {" ".join(sets)}')
    lines.append("echo 'gpu-cluster: Slurm QOS and accounts applied'")
    return "\n".join(lines) + "\n"
