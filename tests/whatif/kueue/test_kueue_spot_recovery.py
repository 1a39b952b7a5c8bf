"""A spot reclaim as Kueue v0.19.2 handles it (apis/config/v1beta2/configuration_types.go, WaitForPodsReady
``RecoveryTimeout``: measured from the running workload's PodsReady=false transition, defaulting to ``timeout``): the
workload stays admitted and keeps its quota while its replacement pods start, and is evicted and requeued only if
they do not run within the recovery timeout. Hand-derived case: one spot L4 node (2 GPUs), quota 2 GPUs; ``long``
(priority low) runs from 0; ``next`` (priority high, no preemption) waits for the quota from 500; the node is
reclaimed at 1,000 and a new one is up at 1,300 (provisioning 300 s); the cold pull (~257 s) puts long's pods
running at ~1,562 s. A job's work counts from its pods running."""

from __future__ import annotations

import pytest

from stacks.spec.scheduling import Gang
from tests.support.whatif.stacks import COLD, cluster, kueue_config, l4_pool
from whatif.core import INTERRUPT
from whatif.engine import Engine
from whatif.model import Job, SimOptions
from whatif.run import simulate_jobs

OPTS = SimOptions(nodes_up="max", spot_interruptions=False)
CLASSES = [{"name": "high", "value": 100}, {"name": "low", "value": 1}]
JOBS = [Job("long", 0, "a", 2, run_s=5000, priority="low"), Job("next", 500, "a", 2, run_s=100, priority="high")]


@pytest.fixture
def reclaim_at_1000(monkeypatch):
    node_on = Engine.node_on

    def first_node_reclaimed(self, pool, node, ready):
        node_on(self, pool, node, ready)
        if ready and node.index == 0 and self.now == 0:
            self.push(1000.0, INTERRUPT, (pool, node, node.epoch))

    monkeypatch.setattr(Engine, "node_on", first_node_reclaimed)


def run(**gang):
    cfg = kueue_config(
        [l4_pool(1, min_nodes=1, spot=True)],
        [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}],
        priorityClasses=CLASSES,
        preemption={"withinQueue": "Never"},
        gang=gang,
    )
    c = cluster(cfg, OPTS)
    return c, simulate_jobs(c, JOBS, 0, OPTS)


def test_a_reclaimed_workload_keeps_its_quota_while_its_pods_come_back(reclaim_at_1000):
    c, res = run(timeoutSeconds=900)  # recovery timeout = timeout: the new node's pods run at ~1,562 < 1,900
    # long's pods run at 1,300 + COLD and its 5,000 s from then; before the recovery timeout: next took its quota at 1,300
    assert res.jobs["next"].start_s == pytest.approx(1300 + COLD + 5000)
    assert res.jobs["long"].starts == (0, 1300)  # restarted from scratch on the replacement node
    assert c.kueue.recovery_timeout_s == 900


def test_a_reclaimed_workload_is_requeued_once_its_recovery_timeout_passes(reclaim_at_1000):
    c, res = run(timeoutSeconds=900, recoveryTimeoutSeconds=120)  # evicted at 1,120; next admitted then
    assert c.kueue.recovery_timeout_s == 120
    assert res.jobs["next"].start_s == 1300  # its pods run on the new node
    # after next (backoff 60 s, then behind the higher priority), whose pods run after the new node's pull
    assert res.jobs["long"].starts == pytest.approx((0, 1300 + COLD + 100))


def test_the_recovery_timeout_is_rendered_into_kueues_config_and_validated():
    from render.kueue_config import manager_config
    from stacks.spec.scheduling import SchedulingSpec

    spec = SchedulingSpec.model_validate(
        {
            "workload": "kubeflow",
            "queues": [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}],
            "gang": {"timeoutSeconds": 900, "recoveryTimeoutSeconds": 120},
        }
    )
    assert manager_config(spec)["waitForPodsReady"]["recoveryTimeout"] == "120s"
    assert (
        "recoveryTimeout"
        not in manager_config(
            SchedulingSpec.model_validate(
                {"workload": "kubeflow", "queues": [{"name": "a", "quotas": [{"pool": "l4", "gpus": 2}]}]}
            )
        )["waitForPodsReady"]
    )
    with pytest.raises(ValueError, match="recovery_timeout_seconds|recoveryTimeoutSeconds"):
        Gang.model_validate({"recoveryTimeoutSeconds": -1})


def test_a_fleet_workers_spot_reclaim_goes_through_the_worker_host(capsys):
    # the fleet's workers see the engine through a WorkerHost: a reclaim on a worker's spot pool must reach Kueue's
    # recovery path there too (the three-day fleet run has reclaims; it failed with exit 4 before)
    from whatif.__main__ import main
    from whatif.api import PROJECT_ROOT

    assert (
        main(["--stack", "fleet", "--workload", str(PROJECT_ROOT / "workloads" / "fleet.yaml"), "--format", "json"])
        == 0
    )
