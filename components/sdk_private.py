"""The one place components use a private name of a Pulumi SDK, guarded so an upgrade that drops it fails loudly.

``pulumi_kubernetes._utilities.get_version()`` is the provider plugin version the package's own resource classes
pin; the generic ``kubernetes:<apiVersion>:<Kind>`` resources in ``custom_resources.py`` need the same pin, and the
SDK has no public accessor for it. ``tests/project/test_sdk_private.py`` checks the name still resolves and still answers the
installed package's version.
"""
from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any, Callable


def private_name(module: str, name: str, used_for: str) -> Any:
    """``module.name``, or an ImportError saying what broke, where, and what to do."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        package = module.split(".")[0]
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        raise ImportError(f"{module}.{name} is gone ({package} {version}): gpu-cluster uses it {used_for}. Pin the "
                          f"previous {package} in requirements.txt, or replace the name in {__name__}") from exc


_get_version: Callable[[], str] = private_name(
    "pulumi_kubernetes._utilities", "get_version",
    "to pin the Kubernetes provider version of generic custom resources (components/custom_resources.py)")


def kubernetes_provider_version() -> str:
    """The Kubernetes provider plugin version that matches the installed ``pulumi_kubernetes`` (semver)."""
    return _get_version()
