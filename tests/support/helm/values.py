"""Check rendered Helm values against a chart's default values.yaml, the way Helm merges them."""

from __future__ import annotations

import copy
from typing import Any


def unknown_keys(values: Any, defaults: Any, path: str = "") -> list[str]:
    """Paths in ``values`` the chart does not know. A key is known when the chart's defaults have it; below an empty
    mapping (``nodeSelector: {}``, ``config.map: {}``) or a null default any keys are free-form. A mapping given where
    the chart has a list or a scalar (or the reverse) is an error too."""
    if isinstance(defaults, dict):
        if not isinstance(values, dict):
            return [f"{path or '<root>'}: the chart expects a mapping, got {type(values).__name__}"]
        if not defaults:
            return []
        errors = []
        for key, value in values.items():
            where = f"{path}.{key}" if path else key
            if key not in defaults:
                errors.append(f"{where}: not in the chart's values.yaml (known here: {', '.join(sorted(defaults))})")
            else:
                errors += unknown_keys(value, defaults[key], where)
        return errors
    if isinstance(defaults, list):
        return [] if isinstance(values, list) else [f"{path}: the chart expects a list, got {type(values).__name__}"]
    if defaults is not None and isinstance(values, (dict, list)):
        return [f"{path}: the chart expects a {type(defaults).__name__}, got {type(values).__name__}"]
    return []


def helm_merge(defaults: Any, values: Any) -> Any:
    """What the chart templates see: mappings merge key by key, anything else (lists included) is replaced."""
    if isinstance(defaults, dict) and isinstance(values, dict):
        merged = copy.deepcopy(defaults)
        for key, value in values.items():
            merged[key] = helm_merge(defaults.get(key), value)
        return merged
    return copy.deepcopy(values)
