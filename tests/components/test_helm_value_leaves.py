"""Every leaf of the values the project gives a chart changes what Helm renders (or is documented in
``tests/support/value_leaves.RESTATED_DEFAULTS``): no silent no-op values. Each distinct leaf path of each chart is
checked once, on the first example (or GPU runtime matrix config) that sets it."""

from __future__ import annotations

import dataclasses
import functools
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.spec.gpu_runtime_matrix import ALL_CONFIGS
from tests.support.helm.examples import recording
from tests.support.helm.render import ReleaseCall, release_calls
from tests.support.helm.value_leaves import RESTATED_DEFAULTS, Leaf, has_effect, leaves, unstable_lines


@functools.cache
def leaves_by_chart() -> dict[str, dict[str, tuple[ReleaseCall, Leaf]]]:
    out: dict[str, dict[str, tuple[ReleaseCall, Leaf]]] = {}
    for name in sorted(set(ALL_CONFIGS)):
        for call in release_calls(recording(name)):
            for leaf in leaves(call.values):
                out.setdefault(call.chart_name, {}).setdefault(leaf.pattern, (call, leaf))
    return out


CHARTS = [
    "aws-efa-k8s-device-plugin",
    "cluster-autoscaler",
    "dra-driver-nvidia-gpu",
    "gpu-operator",
    "inferencepool",
    "keda",
    "kubeflow-trainer",
    "kueue",
    "lws",
    "nvidia-device-plugin",
    "slurm",
    "slurm-operator",
]


def test_the_charts_above_are_all_the_charts_with_values():
    assert sorted(leaves_by_chart()) == CHARTS


@pytest.mark.parametrize("chart", CHARTS)
def test_every_value_leaf_changes_the_render(chart):
    items = sorted(leaves_by_chart()[chart].items())
    baselines = {call: unstable_lines(call) for call in {c for _, (c, _) in items}}

    def silent(item: tuple[str, tuple[ReleaseCall, Leaf]]) -> str | None:
        pattern, (call, leaf) = item
        return None if has_effect(call, leaf, *baselines[call]) else pattern

    with ThreadPoolExecutor(max_workers=2) as pool:  # Helm runs as a separate process
        no_effect = {p for p in pool.map(silent, items) if p is not None}
    documented = {p for (c, p) in RESTATED_DEFAULTS if c == chart}
    assert no_effect == documented, (
        f"no effect: {sorted(no_effect - documented)}; documented but effective: {sorted(documented - no_effect)}"
    )


def test_the_leaf_check_catches_a_value_the_chart_ignores():
    """The checker itself: a key the device plugin chart's templates never read renders the same."""
    call, _ = leaves_by_chart()["nvidia-device-plugin"]["gfd.enabled"]
    ignored = dataclasses.replace(call, values_json=json.dumps({**call.values, "notReadByTheChart": "x"}))
    baseline, unstable = unstable_lines(ignored)
    assert not has_effect(ignored, Leaf(("notReadByTheChart",), "x"), baseline, unstable)
    assert has_effect(call, Leaf(("gfd", "enabled"), call.values["gfd"]["enabled"]), *unstable_lines(call))
