"""GKE clusters that serve turn on the Gateway controller (the inference Gateway needs it); other clusters keep the
field out, so their recorded inputs do not change."""

from __future__ import annotations

from tests.support.helm.examples import recording


def _cluster_inputs(stack: str) -> dict:
    (cluster,) = [r for r in recording(stack).resources if r.type == "gcp:container/cluster:Cluster"]
    return cluster.inputs


def test_a_serving_gke_cluster_enables_the_gateway_api():
    assert _cluster_inputs("gke-serving")["gatewayApiConfig"] == {"channel": "CHANNEL_STANDARD"}


def test_a_gke_cluster_without_serving_leaves_it_out():
    assert "gatewayApiConfig" not in _cluster_inputs("gke-kueue")


def test_a_serving_gke_cluster_mounts_gs_weights_and_keeps_vllm_metrics_queryable():
    inputs = _cluster_inputs("gke-serving")
    # gs:// weights are mounted by the Cloud Storage FUSE CSI driver (vLLM v0.10.0 reads no gs://)
    assert inputs["addonsConfig"] == {"gcsFuseCsiDriverConfig": {"enabled": True}}
    # PodMonitoring scrapes vLLM into Managed Service for Prometheus, which KEDA queries
    assert inputs["monitoringConfig"]["managedPrometheus"] == {"enabled": True}


def test_a_gke_cluster_without_serving_leaves_the_addons_out():
    inputs = _cluster_inputs("gke-kueue")
    assert "addonsConfig" not in inputs and "monitoringConfig" not in inputs
