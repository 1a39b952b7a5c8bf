"""Line numbers of config paths in a stack file, so SARIF results point at the line to change."""

from __future__ import annotations

import re

import yaml

_STEP = re.compile(r"\.([^.\[\]]+)|\[([0-9]+)\]")


def _child(node: yaml.Node, step: str | int) -> yaml.Node | None:
    if isinstance(step, int) and isinstance(node, yaml.SequenceNode):
        return node.value[step] if step < len(node.value) else None
    if isinstance(step, str) and isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if getattr(key, "value", None) == step:
                return value
    return None


def line_of(text: str, config_path: str | None) -> int | None:
    """1-based line of ``gpu-cluster:nodePools[1].maxNodes`` (or of its deepest existing parent) in ``text``."""
    if not config_path:
        return None
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return None
    head = re.match(r"^[^.\[]+", config_path)
    if root is None or head is None:
        return None
    steps: list[str | int] = ["config", head.group(0)]
    steps += [
        m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _STEP.finditer(config_path[head.end() :])
    ]
    node, line = root, None
    for step in steps:
        node = _child(node, step)
        if node is None:
            break
        line = node.start_mark.line + 1
    return line
