"""One fleet runtime image by digest across the fleet: the manager resolves the image's digest once and exports it
(``fleetRuntimeImage``); each worker with ``fleet.manager`` runs its fleet runtimes on that value, so the Workload the
manager builds from its runtime and the pods a worker builds from its own name the same bytes even when the tag moved
between the two deploys. Before the manager's first ``pulumi up`` (and offline) a worker pins the image itself."""
from __future__ import annotations

from typing import Any, Iterator

from preview.engine import run_program
from render.trainer import TORCH_IMAGE
from stacks.spec.fleet import RUNTIME_IMAGE_OUTPUT
from tests.fleet.fleet_configs import stack_config
from tests.support.helm.examples import recording

MANAGER = "acme/gpu-cluster/fleet"
MOVED = f"{TORCH_IMAGE}@sha256:{'ab' * 32}"
"""The digest the manager resolved: not the one this worker would resolve now (the tag moved)."""


def images(obj: Any) -> Iterator[str]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "image" and isinstance(v, str):
                yield v
            else:
                yield from images(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from images(v)


def runtime_images(rec, prefix: str) -> dict[str, set[str]]:
    return {r.name: set(images(r.inputs)) for r in rec.resources
            if r.type.endswith(":ClusterTrainingRuntime") and r.inputs["metadata"]["name"].startswith(prefix)}


def test_the_manager_exports_the_image_its_own_fleet_runtimes_run():
    rec = recording("fleet")
    exported = rec.outputs[RUNTIME_IMAGE_OUTPUT]
    assert exported.startswith(f"{TORCH_IMAGE}@sha256:")
    runtimes = runtime_images(rec, "fleet-")
    assert runtimes and all(found == {exported} for found in runtimes.values()), runtimes


def test_a_worker_runs_its_fleet_runtimes_on_the_managers_digest_and_nothing_else():
    rec = run_program(stack_config("fleet-gke"), "fleet-gke", stack_references={MANAGER: {RUNTIME_IMAGE_OUTPUT: MOVED}})
    fleet = runtime_images(rec, "fleet-")
    assert set(fleet) == {"fleet-worker-runtime-fleet-h100-80gb", "fleet-worker-runtime-fleet-l4"}, fleet
    assert all(found == {MOVED} for found in fleet.values()), fleet
    own = runtime_images(rec, "torch-")  # the worker's own runtimes keep its own pin
    assert own and all(MOVED not in found for found in own.values()), own


def test_before_the_managers_first_deploy_a_worker_pins_the_image_itself():
    for outputs in ({}, {RUNTIME_IMAGE_OUTPUT: TORCH_IMAGE}):  # none yet, or not a digest: not taken
        rec = run_program(stack_config("fleet-gke"), "fleet-gke", stack_references={MANAGER: outputs})
        fleet = runtime_images(rec, "fleet-")
        assert fleet and all(found == {f"{TORCH_IMAGE}@sha256:resolved-at-deploy"} for found in fleet.values())
