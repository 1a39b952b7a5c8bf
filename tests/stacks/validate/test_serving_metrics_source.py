"""KEDA's metric source: the examples use one gpu-cluster fills with vLLM's metrics and lets KEDA read (no warning);
any other source is flagged, saying the services then stay at their minimum replicas."""

from __future__ import annotations

import pytest

from stacks.validate.load import load_spec
from tests.stacks.validate.test_serving_errors import EKS, GKE, _issues
from tests.support.spec.edit import DELETE, edits

URL = ("serving", "autoscaling", "prometheusUrl")


def _metric_warnings(raw):
    return [w for w in _issues(raw)[1] if w.path.endswith("autoscaling.prometheusUrl")]


def test_the_examples_metric_sources_are_filled_and_granted():
    assert _metric_warnings(GKE) == [] and _metric_warnings(EKS) == []


@pytest.mark.parametrize(
    "raw, why",
    [
        (
            edits(EKS, {URL: "https://prometheus.monitoring.example.com/api/v1"}),
            "is not an Amazon Managed Service for Prometheus workspace in us-east-1",
        ),
        (
            edits(EKS, {URL: "https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-1"}),
            "is not an Amazon Managed Service for Prometheus workspace in us-east-1",
        ),
        (edits(EKS, {("accountId",): DELETE}), "accountId is not set"),
        (edits(GKE, {URL: "https://prometheus.example.com"}), "is not this project's Managed Service for Prometheus"),
    ],
)
def test_a_metric_source_gpu_cluster_does_not_fill_is_flagged(raw, why):
    (w,) = _metric_warnings(raw)
    assert why in w.problem and "stays at replicas.min" in w.problem
    assert "fixed at min" in w.problem


def test_the_examples_still_load():
    load_spec(GKE)
    load_spec(EKS)
