"""One fleet runtime image by digest across the fleet: the manager resolves the image's digest once and exports it
(``fleetRuntimeImage``); each worker with ``fleet.manager`` runs its fleet runtimes on that value, so the Workload the
manager builds from its runtime and the pods a worker builds from its own name the same bytes even when the tag moved
between the two deploys. Before the manager's first ``pulumi up`` (and offline) a worker pins the image itself."""

from __future__ import annotations

from typing import Any, Iterator

from preview.engine import run_program
from render.trainer import TORCH_IMAGE
from stacks.spec.fleet import RUNTIME_IMAGE_OUTPUT
from tests.support.spec.fleet_configs import encoded, raw, stack_config
from tests.support.spec.edit import edits
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
    return {
        r.name: set(images(r.inputs))
        for r in rec.resources
        if r.type.endswith(":ClusterTrainingRuntime") and r.inputs["metadata"]["name"].startswith(prefix)
    }


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


PIN = f"{TORCH_IMAGE}@sha256:{'cd' * 32}"
"""A digest resolved once and stored in the fleet file (fleet.runtimeImage)."""


def _workers() -> dict:
    return {f"acme/gpu-cluster/{w}": recording(w).outputs for w in ("fleet-gke", "fleet-eks")}


def test_a_digest_pinned_in_the_fleet_file_is_what_the_manager_runs_and_exports():
    # re-resolved at every manager deploy, a moved tag would move the workers' fleet runtimes only at their own next
    # deploy; stored in the fleet file it never moves under them
    config = encoded(edits(raw("fleet"), {("fleet", "runtimeImage"): PIN}))
    rec = run_program(config, "fleet", stack_references=_workers())
    assert rec.outputs[RUNTIME_IMAGE_OUTPUT] == PIN
    runtimes = runtime_images(rec, "fleet-")
    assert runtimes and all(found == {PIN} for found in runtimes.values()), runtimes


def test_a_runtime_image_without_a_digest_or_on_a_worker_is_refused():
    from tests.stacks.validate.test_fleet_spec_errors import one

    one(
        edits(raw("fleet"), {("fleet", "runtimeImage"): TORCH_IMAGE}),
        "fleet.runtimeImage",
        "not an image pinned by digest",
        "crane digest",
    )
    one(
        edits(raw("fleet-gke"), {("fleet", "runtimeImage"): PIN}),
        "fleet.runtimeImage",
        "only a fleet manager",
        stack="fleet-gke",
    )


def test_the_preview_says_when_workers_must_be_deployed_again_after_the_manager():
    from preview.run import preview_stack

    notes = preview_stack("fleet").fleet["notes"]
    assert any(
        "resolved to its digest at every manager deploy" in n and "deploy every worker again" in n for n in notes
    ), notes
