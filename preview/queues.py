"""The scheduling section of the preview: what each queue is promised, per pool and GPU model, and what it costs."""
from __future__ import annotations

from typing import Sequence

from scheduling.kueue import pool_placements
from scheduling.quota_plan import QuotaPlan, quota_plan
from stacks.facts import PoolFacts
from stacks.scheduling_spec import Workload
from stacks.spec import StackSpec


def queue_plan(spec: StackSpec, facts: Sequence[PoolFacts]) -> QuotaPlan | None:
    """None when the stack has no scheduling section. Placement notes come from the Kueue path only."""
    sched = spec.scheduling
    if sched is None:
        return None
    notes = {}
    if sched.workload == Workload.KUBEFLOW:
        notes = {name: (f"TAS {p.topology}: {p.note}" if p.topology else p.note)
                 for name, p in pool_placements(sched, facts).items()}
    return quota_plan(sched, facts, notes)
