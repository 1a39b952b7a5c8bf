"""``preemption.borrowWithinCohort``, written in the stack, rendered into every ClusterQueue and simulated as Kueue
v0.19.2 decides it (``pkg/scheduler/preemption/classical/hierarchical_preemption.go``, ``classifyPreemptionVariant``
and ``isAboveBorrowingThreshold``): a job that must borrow may preempt a lower-priority job of another queue that is
borrowing only with policy LowerPriority, and only up to ``maxPriorityThreshold``. Kueue allows the field only with
classical preemption (``site/content/en/docs/concepts/cluster_queue.md``), so the stack turns fair sharing off."""

from __future__ import annotations

import pytest

from catalog import load_catalog
from render.kueue import render_kueue
from render.kueue_config import manager_config
from stacks.plan.stack import plan_stack
from stacks.validate.issues import SpecError
from tests.support.whatif.stacks import COLD, cluster, kueue_config, l4_pool
from whatif.api import load_stack_spec
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs

OPTS = SimOptions(nodes_up="max", spot_interruptions=False)
H = 3600.0


def _stack(borrow: dict | None, fair_sharing: bool = False, reclaim: str = "LowerPriority") -> dict:
    """8 L4 GPUs (4 fixed nodes × 2); queues a (2), b (2) and c (4, idle: it lends) in cohort ml."""
    queues = [{"name": q, "quotas": [{"pool": "l4", "gpus": g}]} for q, g in (("a", 2), ("b", 2), ("c", 4))]
    preemption: dict = {"reclaimWithinCohort": reclaim}
    if borrow is not None:
        preemption["borrowWithinCohort"] = borrow
    return kueue_config(
        [l4_pool(4, min_nodes=4)],
        queues,
        cohort="ml",
        fairSharing=fair_sharing,
        preemption=preemption,
        priorityClasses=[{"name": "low", "value": 10}, {"name": "high", "value": 1000}],
    )


def _b_starts(borrow: dict | None) -> float | None:
    """a runs three 2-GPU low jobs (6 of 8 GPUs: 4 borrowed); at 60 s b asks 4 GPUs at high priority (2 borrowed),
    with 2 free. b needs one of a's jobs gone."""
    jobs = [Job(f"a{i}", 0, "a", 2, run_s=10 * H, priority="low") for i in range(3)] + [
        Job("b", 60, "b", 2, run_s=H, nodes=2, priority="high")
    ]
    res = simulate_jobs(cluster(_stack(borrow), OPTS), jobs, 0, OPTS)
    return res.jobs["b"].start_s


def test_a_borrowing_job_preempts_a_lower_priority_borrower_with_lower_priority_policy():
    start = _b_starts({"policy": "LowerPriority"})
    assert start is not None and start < 120  # one of a's jobs evicted (ReclaimWhileBorrowing), then b admitted


def test_without_borrow_within_cohort_the_borrowing_job_waits_for_a_job_to_end():
    # ReclaimWithoutBorrowing: b cannot fit unborrowed; a's jobs end 10 h after their pods run (a cold pull)
    assert _b_starts(None) == pytest.approx(COLD + 10 * H, abs=120)


def test_the_priority_threshold_protects_jobs_above_it():
    assert _b_starts({"policy": "LowerPriority", "maxPriorityThreshold": 5}) == pytest.approx(COLD + 10 * H, abs=120)


def test_borrow_within_cohort_is_rendered_and_fair_sharing_turned_off():
    spec = load_stack_spec(_stack({"policy": "LowerPriority", "maxPriorityThreshold": 100}))
    plan = plan_stack(spec, load_catalog())
    objects = render_kueue(spec.scheduling, list(plan.facts), plan.kueue.placements, namespaces=False)
    for q in objects.cluster_queues:
        assert q["spec"]["preemption"]["borrowWithinCohort"] == {"policy": "LowerPriority", "maxPriorityThreshold": 100}
        assert "fairSharing" not in q["spec"]
    assert "fairSharing" not in manager_config(spec.scheduling)


@pytest.mark.parametrize(
    "changes, says",
    [
        ({"fair_sharing": True}, "only with classical preemption, not with fair sharing"),
        ({"reclaim": "Never"}, "only when reclaimWithinCohort is not Never"),
    ],
)
def test_borrow_within_cohort_is_refused_where_kueue_refuses_it(changes, says):
    with pytest.raises(SpecError) as err:
        load_stack_spec(_stack({"policy": "LowerPriority"}, **changes))
    text = str(err.value)
    assert says in text and "scheduling.preemption.borrowWithinCohort" in text


def test_borrow_within_cohort_policy_never_is_allowed_with_reclaim_never_as_the_crd_allows_it():
    """The ClusterQueue CRD refuses only ``reclaimWithinCohort: Never`` with a borrowWithinCohort policy other than
    Never (``!(reclaimWithinCohort == 'Never' && borrowWithinCohort.policy != 'Never')``); policy Never preempts
    nothing, so the pair renders as written and the borrowing job waits."""
    spec = load_stack_spec(_stack({"policy": "Never"}, reclaim="Never"))
    plan = plan_stack(spec, load_catalog())
    objects = render_kueue(spec.scheduling, list(plan.facts), plan.kueue.placements, namespaces=False)
    for q in objects.cluster_queues:
        assert q["spec"]["preemption"]["reclaimWithinCohort"] == "Never"
        assert q["spec"]["preemption"]["borrowWithinCohort"] == {"policy": "Never"}


def test_slurm_stacks_refuse_the_kueue_only_preemption_knobs():
    cfg = _stack({"policy": "LowerPriority"})
    cfg["scheduling"]["workload"] = "slurm"
    cfg["scheduling"].pop("topology")
    with pytest.raises(SpecError) as err:
        load_stack_spec(cfg)
    text = str(err.value)
    assert "scheduling.preemption.borrowWithinCohort: a Kueue-only setting" in text
    assert "scheduling.fairSharing: a Kueue-only setting" in text


def test_weights_with_fair_sharing_off_are_a_warning():
    from stacks.validate.load import load_spec

    cfg = _stack(None)
    cfg["scheduling"]["queues"][0]["fairShareWeight"] = 3
    _, warnings = load_spec(cfg)
    assert any("scheduling.fairSharing is false" in str(w) for w in warnings)
