"""The stack config as the Pulumi CLI hands it to the program, for ``__main__.py`` (the pure loader never imports
Pulumi).

pulumi-language-python (``sdk/python/cmd/pulumi-language-python/main.go`` in pulumi/pulumi) sets ``PULUMI_CONFIG``, a
JSON object of every ``<namespace>:<key>`` to its string value, on the process it runs the program in;
``pulumi-language-python-exec`` copies it into the SDK before running ``__main__.py``. ``pulumi.Config`` reads one
known key at a time, but the loader needs every ``gpu-cluster:*`` key (to refuse unknown ones), so it reads the same
channel through the SDK's public ``pulumi.runtime.get_config_env()``. The offline engine (``preview/engine.py``) sets
the same variable, so both paths read config the same way.
"""

from __future__ import annotations

from typing import Any

import pulumi

from stacks.validate.load import decode_config
from stacks.validate.secrets import names_in_namespace


def raw_config_from_pulumi() -> dict[str, Any]:
    """Every ``gpu-cluster:*`` key of the stack config, decoded from its JSON strings."""
    return decode_config(pulumi.runtime.get_config_env())


def secret_config_keys() -> frozenset[str]:
    """The ``gpu-cluster:*`` keys set with ``pulumi config set --secret`` (a key is listed when any value inside it
    is secret), as the language host hands them over (``PULUMI_CONFIG_SECRET_KEYS``), without the namespace."""
    return frozenset(names_in_namespace(pulumi.runtime.get_config_secret_keys_env()))
