"""A fleet worker's waitForPodsReady eviction of a copy whose pods were placed but not yet running (a cold node
pulling a large image past the timeout). With MultiKueue's ``MultiKueueRedoAdmissionOnEvictionInWorker`` (on in
v0.19.2) the eviction on the worker makes the manager redo the job's admission: the copy is withdrawn and the job
requeued on the manager, so the worker must not requeue its copy itself. It did, and the run crashed (the worker's
queue no longer held the copy) or, past that, later finished a copy the manager had already withdrawn."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from preview.engine import PROJECT_ROOT
from whatif.model import SimOptions
from whatif.run import run_whatif


def fleet_with_a_large_l40s_image(tmp_path: Path) -> Path:
    """The shipped fleet; eks's L40S pool (the only L40S in the fleet) declares a 120 GB image, so a new node's pull
    (SOCI, the EKS default with podStart: ~690 s) plus its start outlasts eks's 600 s pods-ready timeout."""
    for name in ("fleet", "fleet-gke"):
        shutil.copy(PROJECT_ROOT / f"Pulumi.{name}.yaml", tmp_path / f"Pulumi.{name}.yaml")
    doc = yaml.safe_load((PROJECT_ROOT / "Pulumi.fleet-eks.yaml").read_text())
    (l40s,) = [p for p in doc["config"]["gpu-cluster:nodePools"] if p["name"] == "l40s"]
    l40s["podStart"] = {"imageSizeGb": 120}
    (tmp_path / "Pulumi.fleet-eks.yaml").write_text(yaml.safe_dump(doc))
    return tmp_path / "Pulumi.fleet.yaml"


def test_a_copy_evicted_by_the_workers_pods_ready_timeout_goes_back_to_the_manager(tmp_path):
    stack = fleet_with_a_large_l40s_image(tmp_path)
    jobs = [
        {"id": f"s{i}", "submitS": 0, "queue": "product", "gpusPerNode": 1, "nodes": 1, "runS": 600} for i in (1, 2)
    ]
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump({"kind": "jobs", "jobs": jobs}))
    run = run_whatif(stack, path, seed=0, options=SimOptions(spot_interruptions=False))
    evictions = run.report["preemptions"]["podsReadyEvictions"]
    assert evictions >= 2, run.report["preemptions"]  # each copy's first cold start outlasted the timeout
    outcomes = run.result.jobs
    assert all(outcomes[j].end_s is not None for j in ("s1", "s2")), "every job ends once its node has the image"
    assert all(len(outcomes[j].starts) >= 2 for j in ("s1", "s2")), "each ran again after the eviction"
    assert run.report["unfinished"] == 0
    (warning,) = [w for w in run.report["warnings"] if "waitForPodsReady" in w]
    assert warning.startswith("worker eks: waitForPodsReady evicted 2 time(s)"), warning
    assert "the manager admitted them again at once" in warning and "after the backoff" not in warning, warning
