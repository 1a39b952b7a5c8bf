"""The scenarios the whatif simulator is checked on against a real Slurm (``tests/whatif/slurm/test_whatif_real_slurm.py``):
small stacks (2-4 fake H100 nodes), second-scale ``sleep`` jobs, ``bf_interval=1``/``bf_resolution=1``.

Slurm keeps time limits in whole minutes, so limits are 1-3 min while jobs run 2-7 s: backfill plans with the
limits, jobs end early, and the schedulers react to the ends, which is exactly what the simulator models too.
Scenarios with accounting share one slurmdbd, each its own Slurm cluster: ``caps`` and ``caps-untyped`` use the same
account names, so the rendered sacctmgr script must give the second cluster its own associations (accounts are
global in slurmdbd, associations per cluster); the other scenarios' names differ.
Submissions whose order matters are >= 2 s apart (4 s without backfill): the main scheduler defers new batch jobs
(``batch_sched_delay``, 3 s by default) and runs about once a second, so jobs submitted closer together compete by
priority in real Slurm.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from tests.support.spec.edit import edits
from tests.support.slurm.jobs import Phase, ScenarioJob
from tests.support.spec.stack_configs import GKE

PRIORITY_CALC_PERIOD_S = 300.0
"""Slurm's default PriorityCalcPeriod (5 min; the rendered slurm.conf leaves it alone): fair-share factors change
only then. The real run compresses the gap with ``scontrol reconfigure``."""


def _stack(nodes: int, scheduling: dict[str, Any], slurm: dict[str, Any], multi_node: bool = False) -> dict[str, Any]:
    return edits(
        GKE,
        {
            "nodePools": [
                {
                    "name": "h100",
                    "machineType": "a3-highgpu-8g",
                    "zones": ["us-central1-a"],
                    "minNodes": nodes,
                    "maxNodes": nodes,
                    "multiNode": multi_node,
                }
            ],
            "scheduling": {
                "workload": "slurm",
                **scheduling,
                "slurm": {
                    "allPoolsPartition": False,
                    "backfill": {"intervalSeconds": 1, "resolutionSeconds": 1, "windowMinutes": 10},
                    **slurm,
                },
            },
        },
    )


ONE_QUEUE = {"cohort": "all", "queues": [{"name": "team", "quotas": [{"pool": "h100", "gpus": 16}]}]}
"""In a cohort with unlimited borrowing the account gets no GrpTRES cap (``stacks/plan/slurm_accounts.py``): these
scenarios test the scheduler, not a cap (a cap equal to the pool would hold the big job back in the simulator)."""
NO_ACCOUNTING = {"accounting": False, "priorityWeights": {"fairShare": 0, "age": 0}}


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    config: dict[str, Any]
    phases: tuple[Phase, ...]
    scheduler_type: str | None = None
    """Replaces the rendered ``SchedulerType`` in the real run (``sched/builtin`` for the FIFO arm)."""
    backfill: bool = True
    """The simulator's ``SimOptions.backfill`` (False = the main scheduler alone, like sched/builtin)."""
    typed_gres: bool = False
    """Jobs ask for ``--gres=gpu:<type>:N`` (else untyped ``gpu:N``, held only by the untyped ``gres/gpu`` cap)."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    wide: bool = False
    """A many-job scenario on the rendered ``bf_*`` settings: judged on start order (pairs a scheduling step or more
    apart), utilization and mean wait (``whatif_compare.Comparison.agrees``)."""
    timeout_s: float = 60.0
    """How long the real run may take after the last submit."""
    boot_s: float | None = None
    """Scaling pools (power saving): the real run has slurmctld run the rendered Resume/SuspendProgram against a
    stand-in API server, and a new NodeSet pod's slurmd starts this long after ``replicas`` reach it
    (``tests/support/slurm/nodeset_operator.py``); the simulator gets it as the provisioning delay."""
    settle_s: float = 0.0
    """How long the real run goes on after its last job (for SuspendTime to pass)."""

    @property
    def jobs(self) -> list[ScenarioJob]:
        return [j for p in self.phases for j in p.jobs]


def _job(
    id: str,
    at: float,
    nodes: int,
    run: float,
    limit_min: int,
    queue: str = "team",
    qos: str | None = None,
    pool: str = "h100",
) -> ScenarioJob:
    return ScenarioJob(id, at, queue, 8, run, nodes, limit_min * 60.0, qos, pool)


# A holds one node for 8 s with a 2-min limit (B comes 4 s later: sched/builtin may defer A's first pass ~3 s);
# B needs both nodes; C fits in the hole before A's limit ends (1 min),
# D does not (3 min). Backfill starts C at once; FIFO makes C and D wait for B.
BACKFILL_JOBS = (_job("A", 0, 1, 8, 2), _job("B", 4, 2, 2, 1), _job("C", 4.5, 1, 2, 1), _job("D", 5, 1, 2, 3))

FIFO = Scenario(
    "fifo",
    "strict priority order (real: SchedulerType=sched/builtin; simulator: backfill off)",
    _stack(2, ONE_QUEUE, NO_ACCOUNTING),
    (Phase(0, BACKFILL_JOBS),),
    scheduler_type="sched/builtin",
    backfill=False,
)
BACKFILL = Scenario(
    "backfill",
    "the rendered sched/backfill, same jobs",
    _stack(2, ONE_QUEUE, NO_ACCOUNTING),
    (Phase(0, BACKFILL_JOBS),),
)

# Two accounts, fair-share 3:1, equal past usage (warm-up), then both queue 2-node jobs behind a blocker: `big`'s
# jobs go first although `small` submitted first.
TWO_ACCOUNTS = {
    "cohort": "all",
    "queues": [
        {"name": "big", "fairShareWeight": 3, "quotas": [{"pool": "h100", "gpus": 8}]},
        {"name": "small", "fairShareWeight": 1, "quotas": [{"pool": "h100", "gpus": 8}]},
    ],
}
T = PRIORITY_CALC_PERIOD_S
FAIRSHARE = Scenario(
    "fairshare",
    "accounts with fair-share 3:1 and equal past usage, contending for the whole pool",
    _stack(2, TWO_ACCOUNTS, {"accounting": True, "priorityWeights": {"fairShare": 10000, "age": 0}}),
    (
        Phase(0, (_job("W1", 0, 1, 2, 1, "big"), _job("W2", 0.2, 1, 2, 1, "small"))),
        Phase(
            T,
            (
                _job("X", T, 2, 2, 1, "small"),
                _job("S1", T + 1, 2, 1.5, 1, "small"),
                _job("S2", T + 1.2, 2, 1.5, 1, "small"),
                _job("B1", T + 1.4, 2, 1.5, 1, "big"),
            ),
        ),
    ),
)

# QOS `high` preempts `low` (PreemptType=preempt/qos, PreemptMode=REQUEUE, as rendered from the priority classes).
PREEMPTION = Scenario(
    "preemption",
    "QOS preemption with REQUEUE: a high-priority job takes a node from a running low one",
    _stack(
        2,
        {**ONE_QUEUE, "priorityClasses": [{"name": "high", "value": 100}, {"name": "low", "value": 10}]},
        {"accounting": True, "priorityWeights": {"fairShare": 0, "age": 0}},
    ),
    (
        Phase(
            0,
            (
                _job("L1", 0, 1, 10, 1, qos="low"),
                _job("L2", 0.3, 1, 10, 1, qos="low"),
                _job("H", 1.5, 1, 2, 1, qos="high"),
            ),
        ),
    ),
)

# The same with the account capped at the pool (no cohort: GrpTRES=gres/gpu:h100=16, as rendered from the quota) and
# jobs naming the GPU type: preempting L1 would not bring the account under its cap (16 held + 8 asked), so Slurm
# does not preempt and H waits for a low job to end.
CAPPED = Scenario(
    "preemption-capped",
    "the same preemption with the account's GrpTRES cap equal to the pool (16 GPUs)",
    _stack(
        2,
        {
            "queues": [{"name": "capped", "quotas": [{"pool": "h100", "gpus": 16}]}],
            "priorityClasses": [{"name": "urgent", "value": 100}, {"name": "bulk", "value": 10}],
        },
        {"accounting": True, "priorityWeights": {"fairShare": 0, "age": 0}},
    ),
    (
        Phase(
            0,
            tuple(
                replace(j, queue="capped", priority={"high": "urgent", "low": "bulk"}[j.priority or "low"])
                for j in PREEMPTION.jobs
            ),
        ),
    ),
    typed_gres=True,
)

# 4 nodes in 2 blocks of 2 (topology/block). Three 1-node jobs, then a 2-node gang that needs a whole block.
BLOCKS = Scenario(
    "blocks",
    "a 2-node gang on topology/block (2 blocks of 2 nodes) after 1-node jobs fragment them",
    _stack(
        4,
        {
            **ONE_QUEUE,
            "queues": [{"name": "team", "quotas": [{"pool": "h100", "gpus": 32}]}],
            "topology": {"mode": "required", "level": "block"},
        },
        {**NO_ACCOUNTING, "blockSize": 2},
        multi_node=True,
    ),
    (Phase(0, (_job("J1", 0, 1, 3, 1), _job("J2", 0.2, 1, 7, 1), _job("J3", 0.4, 1, 7, 1), _job("G", 2, 2, 2, 1))),),
)

# GrpTRES caps (accounting on): each account may hold 8 GPUs (its quota, no cohort). A2 waits for its account's cap
# although a node is idle, and does not hold back B1 of the other account.
CAPS_STACK = _stack(
    2,
    {
        "queues": [
            {"name": "alpha", "quotas": [{"pool": "h100", "gpus": 8}]},
            {"name": "beta", "quotas": [{"pool": "h100", "gpus": 8}]},
        ]
    },
    {"accounting": True, "priorityWeights": {"fairShare": 0, "age": 0}},
)
CAPS_JOBS = (_job("A1", 0, 1, 4, 1, "alpha"), _job("A2", 0.3, 1, 2, 1, "alpha"), _job("B1", 2.5, 1, 2, 1, "beta"))
CAPS = Scenario(
    "caps",
    "GrpTRES caps per account (jobs name the GPU type): a capped job waits on an idle node "
    "without holding back another account",
    CAPS_STACK,
    (Phase(0, CAPS_JOBS),),
    typed_gres=True,
)
# The same jobs asking for untyped `--gres=gpu:8`: Slurm holds them to the rendered untyped cap (gres/gpu=8; a per-type
# cap gres/gpu:h100 alone does not bind them), so A2 waits as with typed requests. Same accounts as `caps`, on its
# own cluster of the shared slurmdbd: the rendered script must add alpha and beta's associations for this cluster.
CAPS_UNTYPED = Scenario(
    "caps-untyped",
    "the same with untyped GPU requests (--gres=gpu:8), held by the untyped cap gres/gpu=8",
    CAPS_STACK,
    (Phase(0, CAPS_JOBS),),
)

# The FIFO jobs on a stack whose one queue has a quota equal to the pool and no cohort (a rendered cap of 16 GPUs) but
# accounting off: real Slurm has no associations then, so no cap.
UNCAPPED_WITHOUT_ACCOUNTING = Scenario(
    "no-accounting-no-cap",
    "FIFO on a stack whose quota would be a cap, with accounting off (Slurm applies none)",
    _stack(2, {"queues": [{"name": "team", "quotas": [{"pool": "h100", "gpus": 16}]}]}, NO_ACCOUNTING),
    (Phase(0, BACKFILL_JOBS),),
    scheduler_type="sched/builtin",
    backfill=False,
)

# preempt/partition_prio: jobs in the pool's own partition (PriorityTier 2) preempt jobs that borrowed the pool
# through `all` (tier 1); the victims are requeued and held 121 s.
PARTITION_PRIO = Scenario(
    "partition-prio",
    "preempt/partition_prio: the pool's own partition (tier 2) preempts jobs of `all` (tier 1)",
    edits(
        _stack(
            2,
            ONE_QUEUE,
            {"accounting": True, "priorityWeights": {"fairShare": 0, "age": 0}, "preemptType": "partition_prio"},
        ),
        {"scheduling.slurm.allPoolsPartition": True},
    ),
    (
        Phase(
            0,
            (
                _job("A1", 0, 1, 10, 1, pool="all"),
                _job("A2", 0.3, 1, 10, 1, pool="all"),
                _job("P", 1.5, 1, 2, 1, pool="h100"),
            ),
        ),
    ),
)


def _wide_stack(slurm: dict[str, Any]) -> dict[str, Any]:
    """Two pools of a3-highgpu-8g: `train` (3 nodes, multi-node: OverSubscribe=EXCLUSIVE, topology/block) and `dev`
    (3 nodes); partitions train, dev, `all` (default) and `urgent` over both at PriorityTier 3; two accounts; the
    rendered backfill settings (bf_interval 30 s, bf_resolution 60 s, bf_window 1 day, bf_max_job_test 1000) and
    priority weights (age 1000, job size 1000, QOS 2000). Fair-share is 0 here: slurmctld recomputes it every
    PriorityCalcPeriod from its own start, which a few-minute run cannot line up with (``fairshare`` covers it)."""
    pools = [
        {
            "name": "train",
            "machineType": "a3-highgpu-8g",
            "zones": ["us-central1-a"],
            "minNodes": 3,
            "maxNodes": 3,
            "multiNode": True,
        },
        {"name": "dev", "machineType": "a3-highgpu-8g", "zones": ["us-central1-a"], "minNodes": 3, "maxNodes": 3},
    ]
    queues = [
        {"name": "research", "quotas": [{"pool": "train", "gpus": 24}]},
        {"name": "prod", "quotas": [{"pool": "dev", "gpus": 24}]},
    ]
    return edits(
        GKE,
        {
            "nodePools": pools,
            "scheduling": {
                "workload": "slurm",
                "cohort": "all",
                "queues": queues,
                "slurm": {
                    "accounting": True,
                    "partitions": [{"name": "urgent", "pools": ["train", "dev"], "priorityTier": 3}],
                    "priorityWeights": {"fairShare": 0, "age": 1000},
                    **slurm,
                },
            },
        },
    )


def _wide_jobs(seed: int, count: int) -> tuple[ScenarioJob, ...]:
    """``count`` whole-node jobs submitted together (a burst: ``Phase.burst``) in partition `all` (1 node), `train`
    (1-3 nodes), `dev` or `urgent` (1 node); runs of 15-40 s (long against Slurm's 1-3 s per scheduling pass),
    limits of 1-2 min (Slurm keeps whole minutes), from a seeded stream so the list is fixed."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        part = rng.choices(["all", "train", "dev", "urgent"], [4, 3, 2, 1])[0]
        nodes = rng.choice([1, 2, 2, 3]) if part == "train" else 1
        run = float(rng.randint(15, 40))
        out.append(
            ScenarioJob(
                f"J{i:02d}",
                0.0,
                rng.choice(["research", "prod"]),
                8,
                run,
                nodes,
                60.0 * rng.choice([1, 1, 2]),
                None,
                part,
            )
        )
    return tuple(out)


# Power saving (scheduling.slurm.scaling): h100 follows the queue from 1 to 3 nodes, idle nodes released after 1 min
# (SuspendTime=60, the rendered minimum). A fits the one powered-up node; B makes slurmctld resume h100-1 and waits
# CONFIGURING for its slurmd; C (2 nodes) waits for A's node and resumes h100-2; once idle, the two resumed nodes are
# suspended after SuspendTime and h100-0 stays up (SuspendExcNodes=h100:1).
POWER = Scenario(
    "power-saving",
    "a pool following the queue (1-3 nodes): the rendered ResumeProgram/SuspendProgram run by "
    "slurmctld, nodes booting in 5 s, released after SuspendTime (60 s)",
    edits(
        _stack(3, ONE_QUEUE, {**NO_ACCOUNTING, "scaling": {"idleMinutes": 1}}),
        {"nodePools[0].minNodes": 1, "nodePools[0].multiNode": False},
    ),
    (Phase(0, (_job("A", 0, 1, 20, 1), _job("B", 2, 1, 25, 1), _job("C", 4, 2, 10, 1))),),
    boot_s=5.0,
    settle_s=90.0,
    timeout_s=120.0,
)

WIDE = Scenario(
    "wide-tiers",
    "30 jobs at once on two pools and four partitions (PriorityTier 3 `urgent`), the rendered bf_* "
    "settings, age weight on",
    _wide_stack({}),
    (Phase(0, _wide_jobs(7, 30), burst=True),),
    wide=True,
    timeout_s=420,
)

SCENARIOS = (
    FIFO,
    BACKFILL,
    FAIRSHARE,
    PREEMPTION,
    CAPPED,
    CAPS,
    CAPS_UNTYPED,
    BLOCKS,
    UNCAPPED_WITHOUT_ACCOUNTING,
    PARTITION_PRIO,
    POWER,
    WIDE,
)
