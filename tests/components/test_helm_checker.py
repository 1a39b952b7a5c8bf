"""The Helm release checker catches each defect kind: one deliberately broken value per kind, on an example stack
that passes as it is (``test_helm_releases.py``)."""

from __future__ import annotations

import pytest

from tests.support.helm.checks import as_admitted, floating
from tests.support.helm.examples import problems, with_edit
from tests.support.helm.render import RenderError


def test_a_template_error_fails_the_render():
    with pytest.raises(RenderError, match=r"nodeset-cr\.yaml.*wrong type for value"):
        with_edit("gke-h100-512", "slurm-slurm", "nodesets.h100-mega", "not-a-mapping")


def test_a_values_schema_error_fails_the_render():
    """The GPU Operator's node-feature-discovery subchart ships a values.schema.json; Helm enforces it."""
    with pytest.raises(RenderError, match=r"node-feature-discovery:\s*- worker\.tolerations: Invalid type"):
        with_edit("gke-operator-mig", "gpu-runtime-gpu-operator", "node-feature-discovery.worker.tolerations", "x")


def test_an_object_the_kubernetes_schema_refuses():
    found = problems(with_edit("eks-p5-efa", "gpu-runtime-device-plugin", "tolerations[0].effect", 5))
    assert (
        "DaemonSet nvidia-device-plugin/nvidia-device-plugin: spec.template.spec.tolerations.0.effect: 5 is not "
        "of type 'string', 'null'" in found
    )


def test_a_custom_resource_its_chart_crd_refuses():
    found = problems(with_edit("gke-h100-512", "slurm-slurm", "nodesets.h100-mega.replicas", "two"))
    assert found == ["NodeSet slurm/slurm-worker-h100-mega: spec.replicas: 'two' is not of type 'integer'"]


def test_an_object_two_releases_render():
    found = problems(with_edit("eks-kueue", "kubeflow-trainer", "jobset.fullnameOverride", "kueue"))
    assert (
        "ClusterRole /kueue-metrics-reader (rbac.authorization.k8s.io): rendered by kubeflow-trainer and "
        "kueue-chart" in found
    )


def test_an_object_a_release_and_the_program_both_create():
    """With ``slurmKey.create`` the chart makes the key Secret the program already creates from a Pulumi secret."""
    found = problems(with_edit("gke-h100-512", "slurm-slurm", "slurmKey.create", True))
    assert found == ["Secret slurm/slurm-auth-slurm (core): rendered by slurm-slurm and the program"]


def test_one_object_rendered_twice_by_one_release():
    found = problems(
        with_edit(
            "gke-operator-mig", "gpu-runtime-gpu-operator", "node-feature-discovery.fullnameOverride", "gpu-operator"
        )
    )
    assert (
        "ClusterRole /gpu-operator (rbac.authorization.k8s.io): rendered by gpu-runtime-gpu-operator and "
        "gpu-runtime-gpu-operator" in found
    )


def test_a_floating_image_tag():
    found = problems(with_edit("eks-kueue", "kueue-chart", "controllerManager.manager.image.tag", "latest"))
    assert found == [
        "Deployment kueue-controller-manager.spec.template.spec.containers[0].image: registry.k8s.io/kueue/kueue:latest"
    ]


@pytest.mark.parametrize(
    "ref, moves",
    [
        ("alpine", True),
        ("docker.io/library/alpine:latest", True),
        ("localhost:5000/alpine", True),
        ("alpine:3.22.2", False),
        ("localhost:5000/alpine:3.22", False),
        ("alpine:latest@sha256:" + "0" * 64, False),
    ],
)
def test_floating_tag_rules(ref, moves):
    assert floating(ref) is moves


def test_the_api_server_view_of_a_custom_resource_drops_nulls_and_applies_defaults():
    schema = {
        "properties": {
            "a": {"type": "array"},
            "b": {"type": "array", "nullable": True},
            "c": {"type": "boolean", "default": False},
        }
    }
    assert as_admitted({"a": None, "b": None}, schema) == {"b": None, "c": False}
