"""The one place the pack uses private names of the pulumi_policy SDK, guarded so an upgrade that drops them fails
loudly instead of silently leaving rules with proxies they cannot read.

The SDK hands rules its inputs wrapped in proxies (``pulumi_policy.proxy._DictProxy``/``_ListProxy``, which raise on
values unknown until deploy, and ``pulumi_policy.secret._DictSecretsProxy``/``_ListSecretsProxy``, which unwrap
secrets). It has no public way to get the wrapped object back; ``policies/values.py`` needs it to read unknowns as
``UNKNOWN`` instead of raising. ``tests/project/test_sdk_private.py`` checks the names still resolve and still unwrap.
"""
from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any, cast

TARGET_KEY = "__target"
"""The key every SDK proxy answers with the object it wraps."""


def private_name(module: str, name: str) -> Any:
    """``module.name``, or an ImportError saying what broke, where, and what to do."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        try:
            version = importlib.metadata.version("pulumi_policy")
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        raise ImportError(f"{module}.{name} is gone (pulumi_policy {version}): the policy pack unwraps the SDK's "
                          "property proxies with it (policies/values.py). Pin the previous pulumi_policy in "
                          f"requirements.txt, or replace the name in {__name__}") from exc


PROXY_TYPES: tuple[type, ...] = tuple(private_name(m, n) for m, n in (
    ("pulumi_policy.proxy", "_DictProxy"), ("pulumi_policy.proxy", "_ListProxy"),
    ("pulumi_policy.secret", "_DictSecretsProxy"), ("pulumi_policy.secret", "_ListSecretsProxy")))


def unwrap_proxy(value: Any) -> Any:
    """The object an SDK proxy wraps (one level), or ``value`` itself when it is not a proxy."""
    if isinstance(value, PROXY_TYPES):
        return cast(Any, value)[TARGET_KEY]
    return value
