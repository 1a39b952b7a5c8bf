"""The fleet example's stack configs (decoded), for the fleet tests."""

from __future__ import annotations

import functools
from typing import Any

from preview.engine import PROJECT_ROOT, read_stack_file
from stacks.validate.load import decode_config


def stack_config(stack: str) -> dict[str, Any]:
    """``Pulumi.<stack>.yaml`` as the engine reads it (``gpu-cluster:<key>`` -> value)."""
    return read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")


@functools.cache
def _raw(stack: str) -> dict[str, Any]:
    return decode_config(stack_config(stack))


def raw(stack: str) -> dict[str, Any]:
    """The decoded config (``<key>`` -> value), a fresh deep copy each call."""
    import copy

    return copy.deepcopy(_raw(stack))


def encoded(raw_config: dict[str, Any], base: str = "fleet") -> dict[str, Any]:
    """A decoded config back in the engine's form, keeping the base stack's non-project keys (``gcp:project``)."""
    out = {k: v for k, v in stack_config(base).items() if not k.startswith("gpu-cluster:")}
    out.update({f"gpu-cluster:{k}": v for k, v in raw_config.items()})
    return out
