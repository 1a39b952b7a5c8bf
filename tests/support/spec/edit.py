"""The one way tests change a config, resource or values dict: ``edit(cfg, "nodePools[0].maxNodes", 8)``.

Paths use the config's own spelling (dots between keys, ``[i]`` for list entries); a tuple of steps works too, for
keys that hold dots (``("values", "nodesets", "h100.a")``). In a stack config whose keys carry the ``gpu-cluster:``
namespace, the first key is looked up as ``gpu-cluster:<key>`` unless it is there as written or names a namespace of
its own (``gcp:project``), so a new top-level section lands under the namespace too. ``DELETE`` removes the key (or list entry); a missing key to delete, or a list
index out of range, raises, so a typo in a path fails the test instead of editing nothing. Missing mappings on the
way are created. The input is never changed: the result is a deep copy, and so is every value put into it.
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
    namespaced = any(isinstance(k, str) and k.startswith(f"{NAMESPACE}:") for k in out)
    for path, new in changes.items():
        steps = steps_of(path)
        if not steps:
            raise ValueError(f"empty edit path {path!r}")
        if namespaced and isinstance(steps[0], str) and ":" not in steps[0] and steps[0] not in out:
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
