"""Does each value we give a chart change what it renders? Every leaf of the recorded values (a scalar, or an empty
list/mapping) is changed in turn and the release rendered again; a leaf whose change leaves the output as it was
is a silent no-op, unless ``RESTATED_DEFAULTS`` documents why it is kept. A value equal to the chart's default still
changes the render when changed, so it passes: only values the templates never read are caught."""

from __future__ import annotations

import copy
import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Iterator

from tests.support.helm.render import ReleaseCall, RenderError, render_text

DATA_MAPS = {("nodesets",), ("partitions",), ("configFiles",)}
"""Mappings keyed by data (pool, partition, file names): their keys count as one path (``nodesets.*.replicas``)."""

RESTATED_DEFAULTS: dict[tuple[str, str], str] = {
    # (chart, leaf pattern) -> why the value stays although changing it leaves the render as it was
    (
        "cluster-autoscaler",
        "autoDiscovery.clusterName",
    ): "on AWS only a switch (non-empty turns tag discovery on, templates/deployment.yaml); the tags themselves are "
    "given in autoDiscovery.tags, from the same discovery_tags() the node groups' ASG tags use",
}


@dataclass(frozen=True)
class Leaf:
    path: tuple[Any, ...]
    value: Any

    @property
    def pattern(self) -> str:
        """The path with list indexes and data-map keys generalised: ``tolerations[].key``, ``nodesets.*.replicas``."""
        out: list[str] = []
        for i, step in enumerate(self.path):
            if isinstance(step, int):
                out[-1] += "[]"
            elif tuple(self.path[:i]) in DATA_MAPS:
                out.append("*")
            else:
                out.append(str(step))
        return ".".join(out)


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[Leaf]:
    if isinstance(value, dict) and value:
        for key, child in value.items():
            yield from leaves(child, (*path, key))
    elif isinstance(value, list) and value:
        for i, child in enumerate(value):
            yield from leaves(child, (*path, i))
    elif path:  # a release given no values at all ({}) has no leaf to change
        yield Leaf(path, value)


def changed(value: Any) -> Any:
    """A different value of the same kind (a bool flipped, a number + 1, a string extended, an empty one filled)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "-changed" if "\n" not in value else value + "changed: changed\n"  # a config text: one more line
    if isinstance(value, list):
        return ["changed"]
    if isinstance(value, dict):
        return {"changed": "changed"}
    return "changed"


def with_leaf(values: dict[str, Any], leaf: Leaf, new: Any) -> dict[str, Any]:
    out = copy.deepcopy(values)
    node: Any = out
    for step in leaf.path[:-1]:
        node = node[step]
    node[leaf.path[-1]] = new
    return out


def unstable_lines(call: ReleaseCall) -> tuple[list[str], set[int]]:
    """The baseline render, and the lines that differ between two renders (generated certificates)."""
    first, second = render_text(call).splitlines(), render_text(call).splitlines()
    assert len(first) == len(second), f"{call.chart}: two renders of the same values differ in length"
    return first, {i for i, (a, b) in enumerate(zip(first, second)) if a != b}


def has_effect(call: ReleaseCall, leaf: Leaf, baseline: list[str], unstable: set[int]) -> bool:
    """Whether changing ``leaf`` changes the render (a render Helm refuses counts: the chart reads the value)."""
    new_values = json.dumps(with_leaf(call.values, leaf, changed(leaf.value)), sort_keys=True)
    probe = dataclasses.replace(call, values_json=new_values)
    try:
        lines = render_text(probe).splitlines()
    except RenderError:
        return True
    if len(lines) != len(baseline):
        return True
    return any(a != b for i, (a, b) in enumerate(zip(lines, baseline)) if i not in unstable)
