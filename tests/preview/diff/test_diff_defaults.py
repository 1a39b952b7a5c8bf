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
