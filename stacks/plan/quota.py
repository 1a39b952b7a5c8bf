"""What the queues promise: GPU quota per queue and pool, the share of each pool's capacity that is promised, and the
$/hour of each team's nominal quota at the pool's catalog price. Pure: read by the preview and the tests."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Sequence

from stacks.plan.facts import PoolFacts
from stacks.spec.scheduling import SchedulingSpec, Workload

if TYPE_CHECKING:  # a type only: Kueue stacks never load the Slurm planner (the what-if's import floor)
    from stacks.plan.slurm import SlurmPlan


@dataclass(frozen=True)
class QueueQuota:
    queue: str
    namespace: str
    pool: str
    gpu_model: str
    gpus: int
    borrowing_limit: int | None
    """None: no limit (with a cohort) or no borrowing at all (without one)."""
    lending_limit: int | None
    usd_per_hour: float | None
    """Nominal GPUs × the pool's $/GPU-hour; None when the pool's price is unknown (reservation-bound A4X)."""


@dataclass(frozen=True)
class PoolPromise:
    pool: str
    gpu_model: str
    capacity_gpus: int
    """GPUs at maxNodes."""
    promised_gpus: int
    """Sum of nominal quotas of every queue in this pool."""
    placement: str = ""

    @property
    def share(self) -> float:
        return self.promised_gpus / self.capacity_gpus if self.capacity_gpus else 0.0

    @property
    def overcommitted(self) -> bool:
        return self.promised_gpus > self.capacity_gpus


@dataclass
class QuotaPlan:
    workload: str
    cohort: str | None
    overcommit: bool
    queueing_strategy: str | None = "BestEffortFIFO"
    """None with workload slurm (Slurm orders jobs by priority and backfill)."""
    gang_timeout_seconds: int | None = None
    """None: gang admission is off, or workload slurm (Slurm allocates a job's nodes together)."""
    quotas: list[QueueQuota] = field(default_factory=list)
    pools: list[PoolPromise] = field(default_factory=list)
    access: list[str] = field(default_factory=list)
    """What a tenant can reach, one line per control (``render/tenancy.py``)."""

    def queue_usd_per_hour(self) -> dict[str, float | None]:
        """Per queue; None when a quota of it is on a pool of unknown price (unknown is not $0)."""
        out: dict[str, float | None] = {}
        for q in self.quotas:
            before = out.get(q.queue, 0.0)
            out[q.queue] = None if before is None or q.usd_per_hour is None else before + q.usd_per_hour
        return out

    def repriced(self, rates: dict[str, float | None]) -> QuotaPlan:
        """The same promises at ``rates`` (pool -> $/GPU-hour; None: unknown), e.g. the cost table's own, which
        carry the policy pack's priceOverrides that the plan cannot know."""
        return replace(
            self,
            quotas=[
                replace(q, usd_per_hour=None if rates.get(q.pool) is None else q.gpus * rates[q.pool])  # type: ignore[operator]
                if q.pool in rates
                else q
                for q in self.quotas
            ],
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "cohort": self.cohort,
            "overcommit": self.overcommit,
            "queueingStrategy": self.queueing_strategy,
            "gangTimeoutSeconds": self.gang_timeout_seconds,
            "quotas": [asdict(q) for q in self.quotas],
            "pools": [{**asdict(p), "share": round(p.share, 4), "overcommitted": p.overcommitted} for p in self.pools],
            "queueUsdPerHour": {k: None if v is None else round(v, 4) for k, v in self.queue_usd_per_hour().items()},
            "access": list(self.access),
        }


def quota_plan(
    spec: SchedulingSpec,
    pools: Sequence[PoolFacts],
    placements: dict[str, str] | None = None,
    rates: dict[str, float | None] | None = None,
) -> QuotaPlan:
    """``placements``: pool -> a short description of its placement (Kueue: gang placement; Slurm: partition and
    topology), shown next to the pool. ``rates``: pool -> billed $/GPU-h (``billing.pool_billing``, so a capacity
    block's fee, never its list price; None: unknown); the catalog's list price where not given."""
    by_name = {p.name: p for p in pools}
    kueue = spec.workload == Workload.KUBEFLOW  # queueing strategy and gang admission are Kueue's, not Slurm's
    plan = QuotaPlan(
        workload=spec.workload.value,
        cohort=spec.cohort,
        overcommit=spec.overcommit,
        queueing_strategy=spec.queueing_strategy.value if kueue else None,
        gang_timeout_seconds=spec.gang.timeout_seconds if kueue and spec.gang.enabled else None,
    )
    promised: dict[str, int] = {}
    for queue in spec.queues:
        for quota in queue.quotas:
            pool = by_name[quota.pool]
            plan.quotas.append(
                QueueQuota(
                    queue=queue.name,
                    namespace=queue.namespace or queue.name,
                    pool=pool.name,
                    gpu_model=pool.machine.gpu_model.value,
                    gpus=quota.gpus,
                    borrowing_limit=quota.borrowing_limit,
                    lending_limit=quota.lending_limit,
                    usd_per_hour=None if (rate := _rate(pool, rates)) is None else quota.gpus * rate,
                )
            )
            promised[pool.name] = promised.get(pool.name, 0) + quota.gpus
    plan.pools = [
        PoolPromise(
            pool=p.name,
            gpu_model=p.machine.gpu_model.value,
            capacity_gpus=p.max_gpus,
            promised_gpus=promised.get(p.name, 0),
            placement=(placements or {}).get(p.name, ""),
        )
        for p in pools
    ]
    return plan


def _rate(pool: PoolFacts, rates: dict[str, float | None] | None) -> float | None:
    return pool.usd_per_gpu_hour if rates is None or pool.name not in rates else rates[pool.name]


def slurm_placements(plan: SlurmPlan) -> dict[str, str]:
    """pool -> ``partition <pool> · <topology>``: where Slurm places a job that asks for the pool's partition."""
    out = {}
    for n in plan.nodesets:
        block = next((b for b in plan.topology.blocks if b.pool == n.pool), None)
        if block is not None:
            where = f"topology {block.name}: {len(block.blocks)} blocks of {block.block_size} nodes"
        elif plan.topology.for_pool(n.pool) is not None and (tree := plan.topology.tree) is not None:
            zone = next(z for z, leaves in tree.zones.items() if n.pool in leaves)
            where = f"topology {tree.name}: switch {n.pool} in {zone}"
        else:
            where = "flat (no topology)"
        out[n.pool] = f"partition {n.pool} · {where}"
    return out
