"""Every ``helm.v3.Release`` of every example stack rendered by real Helm (``helm template``, Helm 3.17 as Pulumi
embeds it, Helm 4.1 as a cross-check) on the pinned chart, with exactly the recorded values, namespace, release name,
``--kube-version`` and ``--api-versions`` of the CRDs the stack installs. Fails on a template or values-schema
error, an object the API server would refuse (Kubernetes 1.35 OpenAPI, or the CRD the charts themselves ship), an
object two releases (or a release and the program) create, and a floating image tag.

The checker's own tests (one broken value per defect kind) are in ``test_helm_checker.py``."""

from __future__ import annotations

import pytest

from components.charts import (
    CLUSTER_AUTOSCALER,
    GPU_RUNTIME_CHARTS,
    KUBEFLOW_TRAINER,
    KUEUE,
    NVIDIA_DRA_DRIVER,
    SLURM_CHARTS,
)
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS, MATRIX
from tests.support.helm.binary import HELM3, HELM4
from tests.support.helm.examples import problems, recording, rendered
from tests.support.helm.render import RELEASE, release_calls

WITH_RELEASES = [s for s in EXAMPLE_STACKS if any(r.type == RELEASE for r in recording(s).resources)]
CONFIGS = WITH_RELEASES + sorted(MATRIX)


@pytest.mark.parametrize("name", CONFIGS)
def test_every_release_renders_and_passes_the_checks_with_helm3(name):
    stack = rendered(name, HELM3)
    assert set(stack.releases) == {c.resource for c in release_calls(stack.rec)}
    assert all(stack.releases.values()), "a release rendered no object"
    assert problems(stack) == []


@pytest.mark.parametrize("name", WITH_RELEASES)
def test_helm4_renders_the_same_objects_as_helm3(name):
    """The cross-check: same identities from both engines (a chart relying on Helm-3-only behaviour shows here);
    the object checks above do not depend on the engine, so they run once."""
    three, four = rendered(name, HELM3), rendered(name, HELM4)
    for release, objects in three.releases.items():
        ids = sorted((o["kind"], o["metadata"]["name"]) for o in objects)
        assert ids == sorted((o["kind"], o["metadata"]["name"]) for o in four.releases[release]), release


def test_the_examples_render_every_pinned_chart():
    """The checks above have teeth only if the examples (and the GPU runtime matrix) install every chart."""
    charts = {c.chart_name for n in CONFIGS for c in release_calls(recording(n))}
    pins = {
        p.chart
        for p in (*GPU_RUNTIME_CHARTS, NVIDIA_DRA_DRIVER, CLUSTER_AUTOSCALER, KUEUE, KUBEFLOW_TRAINER, *SLURM_CHARTS)
    }
    assert pins <= charts, sorted(pins - charts)
