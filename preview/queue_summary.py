"""The scheduling section of the preview: what each queue is promised, per pool and GPU model, and what it costs."""
from __future__ import annotations

from typing import Sequence

from render.kueue import pool_placements
from plan.quota import QuotaPlan, quota_plan
from plan.slurm import SlurmPlan, plan_slurm
from render.tenancy import access_notes
from plan.facts import PoolFacts
from spec.scheduling import Workload
from spec.stack import StackSpec


def queue_plan(spec: StackSpec, facts: Sequence[PoolFacts]) -> QuotaPlan | None:
    """None when the stack has no scheduling section. Placement notes: Kueue's gang placement per pool, or the
    pool's Slurm partition and topology."""
    sched = spec.scheduling
    if sched is None:
        return None
    notes = {}
    if sched.workload == Workload.KUBEFLOW:
        notes = {name: (f"TAS {p.topology}: {p.note}" if p.topology else p.note)
                 for name, p in pool_placements(sched, facts).items()}
    elif sched.workload == Workload.SLURM:
        notes = slurm_placements(plan_slurm(sched, facts))
    plan = quota_plan(sched, facts, notes)
    plan.access = access_notes(sched, facts)
    return plan


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
