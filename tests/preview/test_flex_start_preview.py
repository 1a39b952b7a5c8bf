"""The flex-start example in the offline preview: priced from the DWS list ($0 at idle, 38.32 $/node-h against
88.49 on demand), TAS placement on nodes provisioned per workload, the Kueue provisioning objects recorded, and no
mandatory violation (exit 0)."""

from __future__ import annotations

import json

import pytest

from preview.render.text import render_text
from preview.run import preview_stack


@pytest.fixture(scope="module")
def report():
    return preview_stack("gke-flex-start-tas")


@pytest.fixture(scope="module")
def data(report):
    return json.loads(json.dumps(report.as_dict(), default=str))


def test_flex_start_pool_is_priced_from_the_dws_list_and_free_at_idle(data):
    pool = next(p for p in data["cost"]["pools"] if p["pool"] == "h100-flex")
    assert (pool["capacity"], pool["usd_per_node_hour"], pool["min_nodes"], pool["usd_per_hour_min"]) == (
        "flex-start",
        38.320038,
        0,
        0.0,
    )
    assert pool["usd_per_hour_max"] == pytest.approx(8 * 38.320038)


def test_placement_and_provisioning_objects_are_shown(report, data):
    placement = {p["pool"]: p["placement"] for p in data["queues"]["pools"]}["h100-flex"]
    assert placement == "TAS zone-host: required zone on nodes provisioned per workload (ProvisioningRequest)"
    types = {r["type"] for r in data["resources"]}
    assert {
        "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck",
        "kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig",
    } <= types
    assert "required zone on nodes provisioned per workload" in render_text(report)


def test_no_mandatory_violation_and_exit_zero(data):
    assert data["exitCode"] == 0 and data["errors"] == []
    assert [v["policy"] for v in data["violations"] if v["enforcement"] == "mandatory"] == []
