"""Private Pulumi SDK names: the one shim that still needs them resolves them and they still work, an upgrade that
drops one fails with a message saying what and where, and no other module of the project (any package, the tests)
imports or reaches by attribute a private or internal SDK name.

The public routes that replaced the others are checked here too: the program's config channel (``PULUMI_CONFIG``),
the Kubernetes provider version (package metadata) and the pack's proxies walked as ``Mapping``/``Sequence``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re

import pulumi
import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy
from pulumi_policy.secret import Secret, secrets_preserving_proxy

from components.k8s.custom_resources import kubernetes_provider_version
from compose.config import raw_config_from_pulumi, secret_config_keys
from policies.values import UNKNOWN, plain
from preview import sdk_private as preview_shim
from preview.engine import (
    CONFIG_VARIABLES,
    PROJECT_ROOT,
    RecordingMonitor,
    install_mocks,
    language_host_environment,
    restored_config_environment,
)
from preview.policy.analyzer import InProcessAnalyzer
from tests.support.project.import_graph import project_files
from tests.support.project.sdk_names import private_sdk_uses

SHIMS = {"preview/sdk_private.py"}
"""The only files allowed to name private SDK names: one per package that needs any."""


def test_the_preview_shim_resolves_the_mock_monitor_and_the_engine_records_through_it():
    assert issubclass(RecordingMonitor, preview_shim.MockMonitor)

    @pulumi.runtime.test
    def register_one():
        return pulumi.CustomResource("test:index:Thing", "thing", {"size": 1}).urn

    with restored_config_environment():
        monitor = install_mocks({})
        register_one()
    assert [(r.type, r.name, r.inputs) for r in monitor.registered] == [("test:index:Thing", "thing", {"size": 1.0})]


def test_the_preview_shim_resolves_the_policy_servicer_and_it_answers():
    info = InProcessAnalyzer().info()
    assert info.name and len(info.policies) > 10


VANISHED = ("pulumi.runtime.mocks", "_gone_in_a_future_release")
"""A private name no SDK has (passed by tuple, so the scan below does not count this test as a use)."""


def test_a_vanished_private_name_fails_loudly_naming_it_and_the_fix():
    with pytest.raises(ImportError) as exc:
        preview_shim.private_name(*VANISHED, "to record")
    message = str(exc.value)
    assert "pulumi.runtime.mocks._gone_in_a_future_release is gone (pulumi " in message
    assert "Pin the previous pulumi" in message and "replace the name in preview.sdk_private" in message
    with pytest.raises(ImportError, match="no_such_module.x is gone"):
        preview_shim.private_name("no_such_module", "x", "never")


def test_the_program_reads_config_through_the_language_hosts_channel():
    config = {
        "gpu-cluster:cloud": "gcp",
        "gpu-cluster:nodePools": [{"name": "a"}],
        "gcp:project": "p",
        "gpu-cluster:token": {"secure": "v1:abc"},
    }
    env = language_host_environment(config)
    assert json.loads(env["PULUMI_CONFIG"]) == {
        "gpu-cluster:cloud": "gcp",
        "gpu-cluster:nodePools": '[{"name": "a"}]',
        "gcp:project": "p",
        "gpu-cluster:token": '{"secure": "v1:abc"}',
    }  # every value a string, as the CLI sends them
    assert json.loads(env["PULUMI_CONFIG_SECRET_KEYS"]) == ["gpu-cluster:token"]
    before = {name: os.environ.get(name) for name in CONFIG_VARIABLES}
    with restored_config_environment():
        install_mocks(config)
        # offline nothing decrypts a secure: value: the program reads a placeholder (stacks/validate/secrets.py)
        assert raw_config_from_pulumi() == {"cloud": "gcp", "nodePools": [{"name": "a"}], "token": "[secret]"}
        assert secret_config_keys() == {"token"}
        assert pulumi.Config("gcp").get("project") == "p"  # the SDK's public API sees the same config
        assert pulumi.runtime.is_config_secret("gpu-cluster:token")
    assert {name: os.environ.get(name) for name in CONFIG_VARIABLES} == before


def test_the_kubernetes_provider_version_is_the_installed_release():
    version = kubernetes_provider_version()
    assert version == importlib.metadata.version("pulumi_kubernetes")
    # a release: its PEP 440 form is the plugin's semver; a pre-release pin would need the SDK's conversion
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version


def test_policy_values_walk_every_kind_of_sdk_proxy_without_private_classes():
    target = {"a": [1, {"b": "c"}]}
    assert plain(unknown_checking_proxy(target)) == target
    assert type(plain(unknown_checking_proxy(target))["a"]) is list
    # what the rules get: plain data, secrets opened, unknowns as UNKNOWN (the proxy itself raises on the unknown)
    nested = unknown_checking_proxy({"x": {"id": UNKNOWN_STRING_VALUE}, "s": ["y", UNKNOWN_STRING_VALUE]})
    assert plain(nested) == {"x": {"id": UNKNOWN}, "s": ["y", UNKNOWN]}
    assert plain(secrets_preserving_proxy({"k": Secret("v"), "l": [Secret("w")]})) == {"k": "v", "l": ["w"]}
    assert plain(("t", Secret(UNKNOWN_STRING_VALUE))) == ["t", UNKNOWN]
    assert plain("plain") == "plain"


def _rel(path) -> str:
    return path.relative_to(PROJECT_ROOT).as_posix()


@pytest.mark.parametrize("path", [p for p in project_files(PROJECT_ROOT) if _rel(p) not in SHIMS], ids=_rel)
def test_no_module_outside_the_shim_uses_a_private_or_internal_sdk_name(path):
    uses = private_sdk_uses(path.read_text(encoding="utf-8"))
    assert not uses, f"{_rel(path)}: {uses}: move it into a shim ({sorted(SHIMS)}) or use a public route"


def test_the_shim_is_what_the_scan_would_refuse():
    shim = (PROJECT_ROOT / "preview" / "sdk_private.py").read_text(encoding="utf-8")
    assert [use.split(": ")[1] for use in private_sdk_uses(shim)] == [
        "pulumi.runtime.mocks.MockMonitor",
        "pulumi_policy.policy._PolicyAnalyzerServicer",
        "pulumi_policy.policy._NotApplicableError",
        "pulumi.runtime.resource._get_stack_trace",
    ]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from pulumi.runtime import settings as s\ns.ROOT.set(None)\n", ["line 2: pulumi.runtime.settings.ROOT"]),
        ("import pulumi\npulumi.runtime.config.CONFIG.get()\n", ["line 2: pulumi.runtime.config.CONFIG"]),
        ("from pulumi.runtime import config\nconfig.CONFIG.get()\n", ["line 2: pulumi.runtime.config.CONFIG"]),
        (
            "from pulumi.runtime import mocks\nclass M(mocks.MockMonitor): ...\n",
            ["line 2: pulumi.runtime.mocks.MockMonitor"],
        ),
        (
            "def f():\n    from pulumi_policy.policy import _PolicyAnalyzerServicer\n",
            ["line 2: pulumi_policy.policy._PolicyAnalyzerServicer"],
        ),
        ("from pulumi_kubernetes import _utilities\n", ["line 1: pulumi_kubernetes._utilities"]),
        ("import pulumi_kubernetes._utilities as u\n", ["line 1: pulumi_kubernetes._utilities"]),
        ("import pulumi_policy.proxy as p\nx = p._DictProxy\n", ["line 2: pulumi_policy.proxy._DictProxy"]),
        ("from pulumi.runtime.settings import SETTINGS\n", ["line 1: pulumi.runtime.settings.SETTINGS"]),
        ("import pulumi\npulumi.runtime.settings._set_stack('x')\n", ["line 2: pulumi.runtime.settings._set_stack"]),
        (
            "import importlib\nimportlib.import_module('pulumi_kubernetes._utilities')\n",
            ["line 2: pulumi_kubernetes._utilities"],
        ),
        ("from pulumi.runtime import settings\ngetattr(settings, 'ROOT')\n", ["line 2: pulumi.runtime.settings.ROOT"]),
        ("lookup('pulumi_policy.proxy', '_ListProxy')\n", ["line 1: pulumi_policy.proxy._ListProxy"]),
    ],
)
def test_the_scan_refuses_synthetic_private_uses(source, expected):
    assert private_sdk_uses(source) == expected


def test_the_scan_accepts_public_routes_and_unrelated_privates():
    source = (
        "import pulumi\nfrom pulumi.runtime import rpc\npulumi.runtime.reset_options(project='p')\n"
        "pulumi.runtime.get_config_env()\nrpc.deserialize_properties\npulumi.Output.__name__\n"
        "class X:\n    _hidden = 1\nX._hidden\nimport yaml\nyaml._private\n"
    )
    assert private_sdk_uses(source) == []
