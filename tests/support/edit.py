"""The one way tests change a config, resource or values dict: ``edit(cfg, "nodePools[0].maxNodes", 8)``.

Paths use the config's own spelling (dots between keys, ``[i]`` for list entries). A stack config whose keys carry the
``gpu-cluster:`` namespace is edited at ``gpu-cluster:<first key>`` when the first key is not there as written.
``DELETE`` removes the key; missing mappings on the way are created. The input is never changed.
"""
from __future__ import annotations

import copy
import re
from typing import Any, Mapping

NAMESPACE = "gpu-cluster"
DELETE = object()
"""Edit value that removes the key (or the list entry)."""

_STEP = re.compile(r"[^.\[\]]+")


def steps_of(path: str | tuple) -> list[Any]:
    """``"nodePools[0].maxNodes"`` -> ``["nodePools", 0, "maxNodes"]``; a tuple is taken as the steps."""
    if isinstance(path, tuple):
        return list(path)
    return [int(s) if s.isdigit() else s for s in _STEP.findall(path)]


def edit(value: Mapping[str, Any], path: str | tuple, new: Any) -> dict[str, Any]:
    """A deep copy of ``value`` with the field at ``path`` set to ``new`` (or removed with ``DELETE``)."""
    return edits(value, {path: new})


def edits(value: Mapping[str, Any], changes: Mapping[str | tuple, Any]) -> dict[str, Any]:
    """A deep copy of ``value`` with every ``path -> new`` change applied in order."""
    out = copy.deepcopy(dict(value))
    for path, new in changes.items():
        steps = steps_of(path)
        if steps and isinstance(steps[0], str) and steps[0] not in out and f"{NAMESPACE}:{steps[0]}" in out:
            steps[0] = f"{NAMESPACE}:{steps[0]}"
        node: Any = out
        for step in steps[:-1]:
            if isinstance(step, str) and step not in node:
                node[step] = {}
            node = node[step]
        if new is DELETE:
            del node[steps[-1]]
        else:
            node[steps[-1]] = copy.deepcopy(new)
    return out
