"""Writing out a default is not a change: the semantic diff compares resolved values."""
from __future__ import annotations

import copy

from preview.diff.spec import diff_specs
from tests.support.stack_configs import EKS, GKE
from tests.preview.diff.test_diff_units import _spec_side


def _with_runtime_mode(config: dict, mode: str) -> dict:
    out = copy.deepcopy(config)
    out["gpu-cluster:gpuRuntime"] = {"mode": mode}
    return out


def test_spelling_out_the_default_gpu_runtime_mode_is_no_change():
    for base, default in ((GKE, "gke-managed"), (EKS, "device-plugin")):
        assert diff_specs(_spec_side(base), _spec_side(_with_runtime_mode(base, default)), "t") == []


def test_a_real_mode_change_is_still_reported():
    changes = diff_specs(_spec_side(EKS), _spec_side(_with_runtime_mode(EKS, "gpu-operator")), "t")
    assert changes, "switching the EKS runtime to the GPU Operator must show up in the diff"
