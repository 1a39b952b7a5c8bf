"""The two shims over private Pulumi SDK names: they still resolve and still do what we use them for, an upgrade that
drops them fails with a message saying what and where, and nothing else in the project reaches for private names."""
from __future__ import annotations

import ast
import importlib.metadata

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy
from pulumi_policy.secret import Secret, secrets_preserving_proxy

from components import sdk_private as k8s_shim
from policies import sdk_private as policy_shim
from policies.values import UNKNOWN, plain
from preview.engine import PROJECT_ROOT

SHIMS = {"components/sdk_private.py", "policies/sdk_private.py"}
PRIVATE_MODULES = ("pulumi_kubernetes._utilities",)


def test_the_kubernetes_provider_version_is_the_installed_packages():
    version = k8s_shim.kubernetes_provider_version()
    installed = importlib.metadata.version("pulumi_kubernetes")
    assert version == installed, (version, installed)  # a release version: PEP 440 and semver agree


def test_the_policy_shim_unwraps_every_kind_of_sdk_proxy():
    target = {"a": [1, {"b": "c"}]}
    unknowns = unknown_checking_proxy(target)
    secrets = secrets_preserving_proxy({"k": Secret("v"), "l": [Secret("w")]})
    assert type(policy_shim.unwrap_proxy(unknowns)) is dict and set(policy_shim.unwrap_proxy(unknowns)) == {"a"}
    assert type(policy_shim.unwrap_proxy(unknowns["a"])) is list  # the SDK proxies every level
    assert plain(unknowns) == target
    assert set(policy_shim.unwrap_proxy(secrets)) == {"k", "l"}
    assert isinstance(policy_shim.unwrap_proxy(secrets["l"])[0], Secret)
    assert len(policy_shim.PROXY_TYPES) == 4
    assert policy_shim.unwrap_proxy("plain") == "plain"
    # what the rules get: plain data, secrets opened, unknowns as UNKNOWN (a proxy would raise on the unknown)
    nested = unknown_checking_proxy({"x": {"id": UNKNOWN_STRING_VALUE}, "s": ["y"]})
    assert plain(nested) == {"x": {"id": UNKNOWN}, "s": ["y"]}
    assert plain(secrets) == {"k": "v", "l": ["w"]}


@pytest.mark.parametrize("shim, module, fix", [
    (lambda m, n: k8s_shim.private_name(m, n, "to pin versions"), "pulumi_kubernetes._utilities", "components."),
    (policy_shim.private_name, "pulumi_policy.proxy", "policies."),
])
def test_a_vanished_private_name_fails_loudly_naming_it_and_the_fix(shim, module, fix):
    with pytest.raises(ImportError) as exc:
        shim(module, "_gone_in_a_future_release")
    message = str(exc.value)
    assert f"{module}._gone_in_a_future_release is gone (" in message
    assert "Pin the previous" in message and f"replace the name in {fix}sdk_private" in message
    with pytest.raises(ImportError, match="no_such_module.x is gone"):
        shim("no_such_module", "x")


def _private_imports(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0].startswith("pulumi"):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
            if any(part.startswith("_") for part in node.module.split(".")):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith(PRIVATE_MODULES)]
    return found


def test_no_other_project_module_imports_a_private_sdk_name():
    layers = ("components", "policies", "stacks", "scheduling", "catalog")
    offenders = {str(p.relative_to(PROJECT_ROOT)): _private_imports(p) for layer in layers
                 for p in (PROJECT_ROOT / layer).rglob("*.py") if str(p.relative_to(PROJECT_ROOT)) not in SHIMS}
    assert {k: v for k, v in offenders.items() if v} == {}
