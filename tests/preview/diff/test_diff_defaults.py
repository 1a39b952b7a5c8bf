"""Writing out a default is not a change: the semantic diff compares resolved values."""

from __future__ import annotations

from preview.diff.spec import diff_specs
from tests.support.preview.diff_fixtures import spec_side
from tests.support.spec.edit import edit
from tests.support.spec.stack_configs import EKS, GKE


def test_spelling_out_the_default_gpu_runtime_mode_is_no_change():
    for base, default in ((GKE, "gke-managed"), (EKS, "device-plugin")):
        assert diff_specs(spec_side(base), spec_side(edit(base, "gpuRuntime", {"mode": default})), "t") == []


def test_a_real_mode_change_is_still_reported():
    changes = diff_specs(spec_side(EKS), spec_side(edit(EKS, "gpuRuntime", {"mode": "gpu-operator"})), "t")
    assert changes, "switching the EKS runtime to the GPU Operator must show up in the diff"


def test_spelling_out_the_default_fabric_of_a_pool_is_no_change():
    """``fabric: {mode: auto}`` is what an omitted ``fabric`` means (docs/diffs-and-ci.md)."""
    for base in (GKE, EKS):
        assert diff_specs(spec_side(base), spec_side(edit(base, "nodePools[0].fabric", {"mode": "auto"})), "t") == []


def test_turning_a_pools_fabric_off_is_still_a_change():
    changes = diff_specs(spec_side(GKE), spec_side(edit(GKE, "nodePools[0].fabric", {"mode": "off"})), "t")
    assert [(d.name, c.path, c.after) for d in changes for c in d.changes] == [("h100", "fabric.mode", "off")]
