"""Kueue's flavorFungibility written in the stack, rendered into every ClusterQueue and simulated (flavor search as
the ClusterQueue CRD documents it, v0.19.2: whenCanBorrow MayStopSearch | TryNextFlavor, whenCanPreempt
TryNextFlavor | MayStopSearch). Hand-derived case: queue ``a`` has 2 GPUs on ``p1`` (its first flavor) and 2 on
``p2``; ``b`` has 2 on ``p1``; cohort ``c``. ``a`` runs one 2-GPU job on p1; its next 2-GPU job fits on p1 only by
borrowing b's idle 2 GPUs, and on p2 without borrowing."""

from __future__ import annotations

import pytest

from stacks.validate.issues import SpecError
from tests.support.whatif.stacks import cluster, kueue_config, l4_pool
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs

OPTS = SimOptions(nodes_up="max", spot_interruptions=False)


def config(**fungibility):
    pools = [l4_pool(2, name="p1", min_nodes=2), l4_pool(1, name="p2", min_nodes=1)]
    queues = [
        {"name": "a", "quotas": [{"pool": "p1", "gpus": 2}, {"pool": "p2", "gpus": 2}]},
        {"name": "b", "quotas": [{"pool": "p1", "gpus": 2}]},
    ]
    extra = {"flavorFungibility": fungibility} if fungibility else {}
    return kueue_config(pools, queues, cohort="c", **extra)


def second_job_pool(**fungibility) -> str | None:
    jobs = [Job("first", 0, "a", 2, run_s=1000), Job("second", 10, "a", 2, run_s=100)]
    return simulate_jobs(cluster(config(**fungibility), OPTS), jobs, 0, OPTS).jobs["second"].pool


def test_by_default_the_first_flavor_where_it_fits_wins_even_borrowing():
    assert second_job_pool() == "p1"


def test_try_next_flavor_prefers_a_flavor_where_it_fits_without_borrowing():
    assert second_job_pool(whenCanBorrow="TryNextFlavor") == "p2"  # before: not writable, always p1
    c = cluster(config(whenCanBorrow="TryNextFlavor"), OPTS)
    assert c.queues["a"].when_can_borrow == "TryNextFlavor"


def test_fungibility_is_rendered_into_every_cluster_queue_only_when_written():
    from catalog import load_catalog
    from render.kueue import render_kueue
    from stacks.plan.facts import pool_facts
    from whatif.api import load_stack_spec

    def cqs(cfg):
        spec = load_stack_spec(cfg)
        facts = [pool_facts(spec, p, load_catalog()) for p in spec.node_pools]
        return render_kueue(spec.scheduling, facts, None, namespaces=False).cluster_queues

    assert all("flavorFungibility" not in cq["spec"] for cq in cqs(config()))  # Kueue's defaults: nothing written
    assert all(
        cq["spec"]["flavorFungibility"] == {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"}
        for cq in cqs(config(whenCanBorrow="TryNextFlavor", whenCanPreempt="MayStopSearch"))
    )


def test_a_wrong_fungibility_value_is_refused_with_the_allowed_values():
    with pytest.raises(SpecError) as err:
        cluster(config(whenCanBorrow="Borrow"), OPTS)
    text = str(err.value.issues)
    assert "whenCanBorrow" in text and "TryNextFlavor" in text


def test_fungibility_is_refused_on_a_slurm_stack():
    from tests.support.whatif.stacks import slurm_config

    cfg = slurm_config(
        [l4_pool(1, min_nodes=1)],
        [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}],
        flavorFungibility={"whenCanBorrow": "TryNextFlavor"},
    )
    with pytest.raises(SpecError) as err:
        cluster(cfg, OPTS)
    text = str(err.value.issues)
    assert "flavorFungibility" in text and "omit it with workload slurm" in text
