"""One props conversion per resource for a whole in-process ``AnalyzeStack`` request.

The SDK's servicer converts every resource of the request (its props and its provider's props: protobuf ``Struct``
-> dict -> deserialized values -> a read-only proxy, built by walking all of it) once **per stack policy**: 16 stack rules x 1,237 resources of a 200-pool stack, the
largest part of what the pack costs. Within one request the same message converts to the same value every time, so
the offline preview, which serves the pack in its own process, lets the rules share one conversion per distinct
message (keyed by its bytes, so a provider's props shared by many resources convert once too). The rules only read
what they get (the SDK wraps it in a read-only proxy per rule). The Pulumi CLI's path (``--policy-pack-subprocess``)
converts as the SDK does; ``tests/policies/test_policy_paths_agree.py`` holds that both give the same findings.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from preview.sdk_private import POLICY_MODULE


@contextmanager
def shared_conversions() -> Iterator[None]:
    """Inside: the servicer's ``json_format.MessageToDict``, ``deserialize_properties`` and
    ``unknown_checking_proxy`` are memoized (the module's own names, swapped for the duration of one call and
    restored after)."""
    module = POLICY_MODULE
    json_format, deserialize, proxy = module.json_format, module.deserialize_properties, module.unknown_checking_proxy
    dicts: dict[bytes, Any] = {}
    by_id: dict[int, tuple[Any, Any]] = {}  # id(message) -> (the message, kept alive; its dict)
    values: dict[int, tuple[Any, Any]] = {}  # id(dict) -> (the dict, kept alive so its id stays its own; value)
    proxies: dict[int, tuple[Any, Any]] = {}

    def message_to_dict(message: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return json_format.MessageToDict(message, *args, **kwargs)
        seen = by_id.get(id(message))
        if seen is not None and seen[0] is message:  # the same message object, asked by the next rule
            return seen[1]
        key = message.DESCRIPTOR.full_name.encode() + b"\0" + message.SerializeToString(deterministic=True)
        if key not in dicts:
            dicts[key] = json_format.MessageToDict(message)
        by_id[id(message)] = (message, dicts[key])
        return dicts[key]

    def deserialize_properties(props: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return deserialize(props, *args, **kwargs)
        hit = values.get(id(props))
        if hit is None or hit[0] is not props:
            hit = (props, deserialize(props))
            values[id(props)] = hit
        return hit[1]

    def unknown_checking_proxy(value: Any) -> Any:
        """The SDK's read-only view walks the whole value when built: one per value, shared by every rule."""
        hit = proxies.get(id(value))
        if hit is None or hit[0] is not value:
            hit = (value, proxy(value))
            proxies[id(value)] = hit
        return hit[1]

    module.json_format = _Delegate(json_format, MessageToDict=message_to_dict)
    module.deserialize_properties = deserialize_properties
    module.unknown_checking_proxy = unknown_checking_proxy
    try:
        yield
    finally:
        module.json_format, module.deserialize_properties = json_format, deserialize
        module.unknown_checking_proxy = proxy


class _Delegate:
    """``module`` with some names replaced; every other name is the module's own."""

    def __init__(self, module: Any, **replaced: Any):
        self._module = module
        self.__dict__.update(replaced)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)
