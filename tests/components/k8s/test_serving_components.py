"""The serving layer as the program creates it, on a GKE stack with a multi-node service: every Helm release renders
with real Helm (KEDA, LeaderWorkerSet, the inferencepool chart) and passes the release checks, the program's serving
objects validate against the CRDs those charts install, and each object waits for the release serving its kind."""

from __future__ import annotations

import functools

from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from tests.render.test_serving_render import _BIG
from tests.support.helm.checks import object_errors
from tests.support.helm.examples import RenderedStack, problems
from tests.support.helm.render import render_stack
from tests.support.spec.edit import edits


@functools.cache
def _stack() -> RenderedStack:
    cfg = read_stack_file(PROJECT_ROOT / "Pulumi.gke-serving.yaml")
    cfg = edits(
        cfg,
        {
            ("serving", "services"): [cfg["gpu-cluster:serving"]["services"][0], _BIG],
            ("scheduling", "queues", 0, "quotas", 0, "gpus"): 4,
            ("scheduling", "queues", 1, "quotas", 0, "gpus"): 4,
        },
    )
    rec = run_program(cfg, "gke-serving")
    return RenderedStack(rec, render_stack(rec))


def test_serving_releases_render_and_pass_the_checks():
    st = _stack()
    assert {"serving-keda", "serving-lws", "serving-chat-pool", "serving-big-pool"} <= set(st.releases)
    assert problems(st) == []


def test_program_objects_validate_against_the_crds_the_serving_charts_install():
    st = _stack()
    crds = st.crds
    kinds = {"LeaderWorkerSet", "ScaledObject", "TriggerAuthentication"}
    objs = [
        {k: v for k, v in r.inputs.items() if k not in ("__defaults",)}
        for r in st.rec.resources
        if r.type.rsplit(":", 1)[-1] in kinds and r.type.startswith("kubernetes:")
    ]
    assert {o["kind"] for o in objs} == kinds
    for obj in objs:
        assert object_errors(obj, crds) == []


def test_objects_wait_for_the_release_that_serves_their_kind():
    rec = _stack().rec
    by_name = {r.name: r for r in rec.resources}
    lws = next(r for r in rec.resources if r.type.endswith(":LeaderWorkerSet"))
    scaled = next(r for r in rec.resources if r.type.endswith(":ScaledObject"))
    assert by_name["serving-lws"].urn in lws.dependencies
    assert by_name["serving-keda"].urn in scaled.dependencies
