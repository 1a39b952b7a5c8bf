"""cost-pinned-capacity (advisory): a passing baseline, then one change per case (exact messages), and a waiver."""

from __future__ import annotations

import functools

import pytest

from preview.engine import PROJECT_ROOT, Registered, read_stack_file, run_program
from tests.support.spec.edit import edit
from tests.support.policy.harness import Pack, baseline, find, wire, with_props

RULE = "cost-pinned-capacity"
NP = "gcp:container/nodePool:NodePool"
FIX = (
    "Fix: with workload slurm keep slurm.scaling on (the NodeSet then starts at minNodes and follows the queue); "
    "otherwise lower minNodes, or waive the rule for a pool kept warm on purpose"
)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


@functools.cache
def _slurm(scaling: bool) -> tuple[Registered, ...]:
    cfg = read_stack_file(PROJECT_ROOT / "Pulumi.gke-h100-512.yaml")
    if not scaling:
        cfg = edit(cfg, "gpu-cluster:scheduling.slurm.scaling", {"enabled": False})
    return tuple(run_program(cfg, stack="gke-h100-512").resources)


def _mine(diags):
    return [d for d in diags if d[0] == RULE]


def test_baselines_and_a_scaling_slurm_pool_pass(pack):
    pack.configure()
    assert _mine(pack.stack(baseline("gcp"))) == [] and _mine(pack.stack(baseline("aws"))) == []
    assert _mine(pack.stack(list(_slurm(True)))) == []  # l4-eval 0-8 follows the queue: its NodeSet starts at 0


def test_a_slurm_nodeset_holding_every_node_is_pinned(pack):
    pack.configure()
    assert _mine(pack.stack(list(_slurm(False)))) == [
        (
            RULE,
            "advisory",
            "pool 'l4-eval': the pool's cost at idle is most of its cost at max (pinned capacity) · observed: 8 of 8 "
            "nodes run when no job does (100%): Slurm NodeSet 'l4-eval' runs 8 slurmd pods on it · required: at most "
            "50% of maxNodes at idle, from maxIdleShare\n" + FIX,
        )
    ]


def test_a_high_autoscaler_minimum_is_pinned_and_the_threshold_is_settable(pack):
    resources = baseline("gcp")
    pool = find(resources, NP, "h100")
    raised = [
        with_props(pool, edit(wire(pool), "autoscaling.totalMinNodeCount", 3)) if r is pool else r for r in resources
    ]
    pack.configure()
    assert _mine(pack.stack(raised)) == [
        (
            RULE,
            "advisory",
            "pool 'h100': the pool's cost at idle is most of its cost at max (pinned capacity) · observed: 3 of 4 nodes "
            "run when no job does (75%): the autoscaler minimum is 3 · required: at most 50% of maxNodes at idle, from "
            "maxIdleShare\n" + FIX,
        )
    ]
    pack.configure({RULE: {"maxIdleShare": 0.75}})
    try:
        assert _mine(pack.stack(raised)) == []
    finally:
        pack.configure()


def test_a_pool_kept_warm_on_purpose_is_waived(pack, waived):
    assert waived(pack, RULE, "l4-eval", lambda: pack.stack(list(_slurm(False)))) == []
