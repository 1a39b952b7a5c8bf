"""Plain values from policy props: walk the SDK's proxies, keep unknowns visible as UNKNOWN, never raise.

The SDK hands rules proxies (``Mapping``/``Sequence``) that raise ``UnknownValueError`` on any value not known until
deploy (an ID or an email computed by another resource), and that open secrets. Walking them through their public
interfaces and catching that error gives plain data; rules decide explicitly what an unknown means for them
instead, so a rule never aborts half-way through a pool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy.proxy import (
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
)
from pulumi_policy.secret import Secret

_SENTINELS = frozenset(
    {
        UNKNOWN_ARCHIVE_VALUE,
        UNKNOWN_ARRAY_VALUE,
        UNKNOWN_ASSET_VALUE,
        UNKNOWN_BOOLEAN_VALUE,
        UNKNOWN_NUMBER_VALUE,
        UNKNOWN_OBJECT_VALUE,
        UNKNOWN_STRING_VALUE,
    }
)


class _Unknown:
    """A value the engine will only know at deploy time (``pulumi preview`` of a resource not yet created)."""

    _instance: "_Unknown | None" = None

    def __new__(cls) -> "_Unknown":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<unknown until deploy>"


UNKNOWN = _Unknown()


def plain(value: Any) -> Any:
    """Deep copy of ``value`` as plain dicts and lists, with every unknown sentinel replaced by ``UNKNOWN``."""
    if isinstance(value, Secret):
        value = value.value
    if isinstance(value, Mapping):
        return {key: plain(_item(value, key)) for key in value}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(_item(value, i)) for i in range(len(value))]
    if isinstance(value, str) and value in _SENTINELS:
        return UNKNOWN
    return value


def _item(container: Any, key: Any) -> Any:
    """``container[key]``; the SDK's unknown-checking proxy raises on an unknown, which becomes ``UNKNOWN``."""
    try:
        return container[key]
    except UnknownValueError:
        return UNKNOWN


def dig(obj: Any, *path: str | int, default: Any = None) -> Any:
    """``dig(props, "nodeConfig", "taints", 0, "key")``: the value at ``path``, ``default`` when absent,
    ``UNKNOWN`` when any step is unknown."""
    current = obj
    for step in path:
        if current is UNKNOWN:
            return UNKNOWN
        if isinstance(step, int):
            if not isinstance(current, list) or not -len(current) <= step < len(current):
                return default
            current = current[step]
        else:
            if not isinstance(current, dict) or step not in current:
                return default
            current = current[step]
        if current is None:
            return default
    return current


def as_int(value: Any) -> Any:
    """Wire numbers are floats (protobuf Struct): 8.0 -> 8. Strings of digits too. Unknown stays unknown."""
    if value is UNKNOWN:
        return UNKNOWN
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def as_bool(value: Any) -> Any:
    """Provider inputs spell booleans as bools or as the strings "true"/"false"."""
    if value is UNKNOWN or value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def as_list(value: Any) -> list:
    if isinstance(value, list):
        return value
    return []


def as_dict(value: Any) -> dict:
    if isinstance(value, dict):
        return value
    return {}
