"""Secrets set in config (`pulumi config set --secret`) stay secret all the way, or are refused
where a cloud cannot hold them; the offline preview reads `secure:` values as `[secret]` placeholders.

Two ways in, as in real life: a stack file with `secure:` values (the offline preview: nothing to decrypt with), and
the decrypted config plus the secret key list (what the Pulumi CLI hands the program: PULUMI_CONFIG and
PULUMI_CONFIG_SECRET_KEYS). The canary test runs the second way and looks for the plaintext everywhere.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest
from pulumi.runtime import rpc

from preview.engine import PROJECT_ROOT, execute_program, install_mocks, read_stack_file, run_program
from preview.render.markdown import render_markdown
from preview.render.sarif import render_sarif_text
from preview.render.text import render_text
from preview.run import preview_config

ACCOUNT = "210987654321"
"""A canary: an account ID no example and no mock uses."""
LABEL_SECRET = "canary-label-4f7b2"


def eks_stack() -> dict[str, Any]:
    return read_stack_file(PROJECT_ROOT / "Pulumi.eks-kueue.yaml")


def every_output(report) -> str:
    return "\n".join(
        [
            render_text(report, color=False),
            render_markdown(report),
            render_sarif_text(report),
            json.dumps(report.as_dict(), default=str, allow_nan=False),
        ]
    )


def plaintext_outside_secrets(value: Any, needle: str) -> bool:
    """True when ``needle`` occurs in ``value`` anywhere but inside a Pulumi secret (which state encrypts)."""
    if rpc.is_rpc_secret(value):
        return False
    if isinstance(value, dict):
        return any(plaintext_outside_secrets(v, needle) or needle in str(k) for k, v in value.items())
    if isinstance(value, list):
        return any(plaintext_outside_secrets(v, needle) for v in value)
    return needle in str(value)


# -- the canary -------------------------------------------------------------------------------------------------
def test_a_secret_account_id_never_appears_in_plaintext_anywhere():
    config = {**eks_stack(), "gpu-cluster:accountId": ACCOUNT}
    report = preview_config("eks-kueue", config, secret_keys=["gpu-cluster:accountId"])
    assert report.errors == [] and report.resources
    provider = next(r for r in report.resources if r.type == "pulumi:providers:aws")
    assert rpc.is_rpc_secret(provider.inputs["allowedAccountIds"])  # it did reach the provider, as a secret
    assert ACCOUNT in json.dumps(rpc.unwrap_rpc_secret(provider.inputs["allowedAccountIds"]))
    assert not [r.name for r in report.resources if plaintext_outside_secrets(r.inputs, ACCOUNT)]
    assert ACCOUNT not in every_output(report)
    recording = run_program(config, "eks-kueue", secret_keys=["gpu-cluster:accountId"])
    assert recording.outputs and ACCOUNT not in json.dumps(recording.outputs, default=str)


def test_without_the_secret_flag_the_account_id_is_plain():
    """The canary above can fail: the same config with no secret key shows the ID."""
    config = {**eks_stack(), "gpu-cluster:accountId": ACCOUNT}
    report = preview_config("eks-kueue", config, secret_keys=[])
    provider = next(r for r in report.resources if r.type == "pulumi:providers:aws")
    assert not rpc.is_rpc_secret(provider.inputs["allowedAccountIds"]) and ACCOUNT in every_output(report)


def test_a_secret_label_is_refused_and_never_shown():
    config = {**eks_stack(), "gpu-cluster:labels": {"team": "llm", "cost-center": LABEL_SECRET}}
    report = preview_config("eks-kueue", config, secret_keys=["gpu-cluster:labels"])
    assert report.resources == [] and report.exit_code == 2
    assert [(e.path, e.problem.split(",")[0]) for e in report.errors] == [("gpu-cluster:labels", "set as a secret")]
    assert report.errors[0].fix.startswith(
        "store it in plaintext: pulumi config set --plaintext --path 'gpu-cluster:labels…' VALUE"
    )
    assert LABEL_SECRET not in every_output(report)


def test_a_secret_whose_value_is_also_wrong_is_reported_masked():
    config = {**eks_stack(), "gpu-cluster:accountId": "21098765432"}  # 11 digits
    report = preview_config("eks-kueue", config, secret_keys=["gpu-cluster:accountId"])
    assert [(e.path, e.problem, e.value) for e in report.errors] == [
        ("gpu-cluster:accountId", "not a valid AWS account ID", "[secret]")
    ]
    assert "21098765432" not in every_output(report)


# -- the offline preview: secure: values in the stack file ---------------------------------------------------------
def test_a_secure_account_id_in_the_stack_file_previews_as_secret():
    """Was: "input should be a valid string" for `accountId: {secure: …}`."""
    config = {**eks_stack(), "gpu-cluster:accountId": {"secure": "v1:AAAABBBBccccDDDD"}}
    report = preview_config("eks-kueue", config)
    assert report.errors == [] and report.exit_code == 0
    provider = next(r for r in report.resources if r.type == "pulumi:providers:aws")
    assert provider.redacted_inputs["allowedAccountIds"] == "[secret]"
    assert "AAAABBBB" not in every_output(report)


def test_a_secure_leaf_makes_its_whole_key_secret_as_the_cli_does():
    config = {**eks_stack(), "gpu-cluster:labels": {"team": "llm", "owner": {"secure": "v1:QUJD"}}}
    report = preview_config("eks-kueue", config)
    assert [e.path for e in report.errors] == ["gpu-cluster:labels"]
    assert report.errors[0].value == "[secret]" and "QUJD" not in every_output(report)


def test_the_program_refuses_a_secret_label_before_any_resource():
    monitor = install_mocks(
        {**eks_stack(), "gpu-cluster:labels": {"team": "llm", "owner": LABEL_SECRET}},
        "eks-kueue",
        secret_keys=["gpu-cluster:labels"],
    )
    with pytest.raises(pulumi.RunError) as info:
        execute_program()
    assert monitor.registered == [] and LABEL_SECRET not in str(info.value)
    assert "error: gpu-cluster:labels: set as a secret" in str(info.value)
