"""The stack config as the Pulumi runtime holds it, for ``__main__.py`` (the pure loader never imports Pulumi)."""
from __future__ import annotations

from typing import Any

from pulumi.runtime import config as rtconfig

from validation.load import decode_config


def raw_config_from_pulumi() -> dict[str, Any]:
    """Every ``gpu-cluster:*`` key the Pulumi runtime holds, decoded from its JSON strings."""
    merged: dict[str, Any] = {**rtconfig.get_config_env(), **rtconfig.CONFIG.get()}
    return decode_config(merged)
