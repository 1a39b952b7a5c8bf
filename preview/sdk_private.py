"""The one place the offline preview uses names the Pulumi SDKs do not make public, guarded so an upgrade that drops
or renames one fails loudly, naming it, instead of silently changing what the preview records.

- ``pulumi.runtime.mocks.MockMonitor``: ``pulumi.runtime.set_mocks(monitor=...)`` accepts a monitor, but the class
  it expects is not exported from ``pulumi.runtime``. The recording engine (``preview/engine.py``) subclasses it to
  see every ``RegisterResource`` request (parent, dependencies, options), which ``Mocks.new_resource`` never gets.
- ``pulumi_policy.policy._PolicyAnalyzerServicer``: the servicer a ``PolicyPack`` serves over gRPC. ``PolicyPack``
  itself starts a server and blocks, so ``InProcessAnalyzer`` (``preview/policy/analyzer.py``) builds the servicer
  directly to run the pack without a subprocess in unit tests. ``SubprocessAnalyzer`` needs no private name.

- ``pulumi_policy.policy``'s own ``json_format``, ``deserialize_properties`` and ``unknown_checking_proxy``: the
  servicer converts each resource of an ``AnalyzeStack`` request once per stack policy through these names; ``preview/policy/shared_props.py``
  swaps them for memoized ones during one in-process call, so the conversion happens once per resource.

- the servicer's stack-policy machinery (its policies, stack tags, pack name and version, and the methods its
  ``AnalyzeStack`` uses: enforcement level, ``report_violation``, config, resource options and provider, and
  ``_NotApplicableError``): ``preview/policy/stack_once.py`` runs the stack policies as ``AnalyzeStack`` does, with
  the resources built once instead of once per policy (``servicer_internals``).

- ``pulumi.runtime.resource._get_stack_trace``: the SDK walks the whole Python stack on every registration to send
  the engine a stack trace and source position, which the recording engine never reads; the offline run swaps it
  for an empty trace (``preview/engine.py``, ``no_stack_traces``). A real ``pulumi preview`` is unaffected.

``tests/project/test_sdk_private.py`` checks all of them still resolve and still work, and that no other module of the
project reaches for a private or internal SDK name.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from types import SimpleNamespace
from typing import Any


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
        raise ImportError(
            f"{module}.{name} is gone ({package} {version}): gpu-cluster uses it {used_for}. Pin the "
            f"previous {package} in requirements.txt, or replace the name in {__name__}"
        ) from exc


MockMonitor: Any = private_name(
    "pulumi.runtime.mocks", "MockMonitor", "as the base of the offline engine's recording monitor (preview/engine.py)"
)

PolicyAnalyzerServicer: Any = private_name(
    "pulumi_policy.policy",
    "_PolicyAnalyzerServicer",
    "to run the policy pack in-process (preview/policy/analyzer.py InProcessAnalyzer)",
)


def _policy_module() -> Any:
    module = importlib.import_module("pulumi_policy.policy")
    for name in ("json_format", "deserialize_properties", "unknown_checking_proxy"):
        private_name(
            "pulumi_policy.policy",
            name,
            "to convert each resource once per in-process AnalyzeStack (preview/policy/shared_props.py)",
        )
    return module


POLICY_MODULE: Any = _policy_module()


NotApplicableError: Any = private_name(
    "pulumi_policy.policy",
    "_NotApplicableError",
    "to report a stack policy as not applicable, as the servicer does (preview/policy/stack_once.py)",
)

_SERVICER_METHODS = (
    "_configure_runtime_settings",
    "_get_enforcement_level",
    "_create_report_violation",
    "_get_policy_config",
    "_map_enforcement_level",
    "_get_provider_resource",
    "_get_resource_options",
)
_SERVICER_FIELDS = {
    "policies": "policies",
    "stack_tags": "stack_tags",
    "pack_name": "policy_pack_name",
    "pack_version": "policy_pack_version",
}
for _method in _SERVICER_METHODS:
    if not callable(getattr(PolicyAnalyzerServicer, _method, None)):
        raise ImportError(
            f"pulumi_policy.policy._PolicyAnalyzerServicer.{_method} is gone: gpu-cluster uses it to "
            f"run stack policies in-process (preview/policy/stack_once.py). Pin the previous "
            f"pulumi-policy in requirements.txt, or replace the name in {__name__}"
        )


def servicer_internals(svc: Any) -> SimpleNamespace:
    """The servicer's private state and methods that ``AnalyzeStack`` uses, by plain names."""
    fields = {}
    for ours, theirs in _SERVICER_FIELDS.items():
        mangled = f"_PolicyAnalyzerServicer__{theirs}"
        if not hasattr(svc, mangled):
            raise ImportError(
                f"the policy servicer has no {mangled} any more: gpu-cluster reads it to run stack "
                f"policies in-process (preview/policy/stack_once.py); pin the previous pulumi-policy"
            )
        fields[ours] = getattr(svc, mangled)
    methods = {m.lstrip("_"): getattr(svc, m) for m in _SERVICER_METHODS}
    return SimpleNamespace(**fields, **methods)


RESOURCE_MODULE: Any = importlib.import_module("pulumi.runtime.resource")
private_name(
    "pulumi.runtime.resource",
    "_get_stack_trace",
    "to skip the stack trace of each registration in the offline run (preview/engine.py no_stack_traces)",
)
