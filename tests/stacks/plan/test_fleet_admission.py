"""One admission model for the fleet: the flavor assigner ported from Kueue v0.19.2 (``stacks/plan/admission.py``)
decides, from the facts each worker exports, whether a fleet job is admitted there; the preview's "runs on" and the
pack's ``cross-layer-fleet-admissible`` both ask it, so a fleet Kueue could never run exits 1 naming why."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import yaml

from preview.engine import PROJECT_ROOT
from preview.fleet.stack_files import FolderStackFiles
from preview.run import preview_config, preview_stack
from stacks.plan.fleet_admission import fleet_verdict
from stacks.spec.fleet import FACTS_OUTPUT
from tests.support.spec.fleet_configs import stack_config
from whatif.model import SimOptions
from whatif.run import run_whatif


@functools.cache
def facts(stack: str) -> dict:
    return preview_stack(stack).outputs[FACTS_OUTPUT]


def test_the_example_admits_an_h100_and_an_l4_job_on_the_worker_each_targets():
    for worker, stack, queue, model, pool in [
        ("gke", "fleet-gke", "research", "H100_80GB", "h100"),
        ("gke", "fleet-gke", "product", "L4", "l4"),
        ("eks", "fleet-eks", "research", "H100_80GB", "p5"),
        ("eks", "fleet-eks", "product", "L40S", "l40s"),
    ]:
        v = fleet_verdict(worker, facts(stack), queue, model)
        assert v.admissible, (worker, queue, model, v.reason)
        assert v.flavor is not None and v.flavor.startswith(f"{pool}-"), v.flavor  # the pool of that model


def _fleet_with(tmp_path: Path, gke_topology: dict) -> FolderStackFiles:
    for name in ("fleet-eks", "fleet-gke"):
        shutil.copy(PROJECT_ROOT / f"Pulumi.{name}.yaml", tmp_path / f"Pulumi.{name}.yaml")
    path = tmp_path / "Pulumi.fleet-gke.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["config"]["gpu-cluster:scheduling"]["topology"] = gke_topology
    path.write_text(yaml.safe_dump(doc))
    return FolderStackFiles(tmp_path)


def test_a_topology_aware_worker_flavor_is_a_mandatory_violation_naming_runtime_flavor_and_rule(tmp_path):
    # the shipped fleet before: block placement on the GKE worker makes its H100 flavor topology-aware, in queues
    # that also hold the (autoscaled, plain) L4 flavor, and the fleet runtime asks for no topology
    rep = preview_config(
        "fleet", stack_config("fleet"), stack_files=_fleet_with(tmp_path, {"mode": "preferred", "level": "block"})
    )
    assert rep.exit_code == 1
    found = [v for v in rep.violations if v["policy"] == "cross-layer-fleet-admissible"]
    assert len(found) == 2 and all(v["enforcement"] == "mandatory" for v in found)  # research and product on gke
    text = " ".join(v["message"] for v in found)
    assert "worker 'gke' queue 'research'" in text and "worker 'gke' queue 'product'" in text
    assert "runtime fleet-h100-80gb" in text and 'Flavor "h100-' in text
    assert "supports only TopologyAwareScheduling" in text and "not TAS-only" in text
    research = next(q for q in rep.fleet["queues"] if q["name"] == "research")
    assert research["runsOn"]["H100_80GB"] == ["eks"]  # the preview says so too: gke never admits it


def test_the_what_if_never_starts_a_fleet_job_on_a_worker_whose_kueue_would_not_admit_it(tmp_path):
    _fleet_with(tmp_path, {"mode": "preferred", "level": "block"})  # gke's H100 flavor topology-aware
    shutil.copy(PROJECT_ROOT / "Pulumi.fleet.yaml", tmp_path / "Pulumi.fleet.yaml")
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        yaml.safe_dump(
            {
                "kind": "jobs",
                "jobs": [
                    {"id": "four-nodes", "submitS": 0, "queue": "research", "gpusPerNode": 8, "nodes": 4, "runS": 600},
                    {"id": "one-node", "submitS": 0, "queue": "research", "gpusPerNode": 8, "nodes": 1, "runS": 600},
                ],
            }
        )
    )
    run = run_whatif(tmp_path / "Pulumi.fleet.yaml", jobs, options=SimOptions(spot_interruptions=False))
    out = run.result.jobs
    assert out["four-nodes"].start_s is None  # only gke has four H100 nodes, and its Kueue never admits the job
    assert out["one-node"].pool == "eks/p5" and out["one-node"].start_s == 0
