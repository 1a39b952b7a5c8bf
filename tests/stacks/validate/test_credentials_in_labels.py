"""Credentials in labels and taints are refused, and the message never repeats them."""

from __future__ import annotations

import pytest

from tests.support.spec.edit import edits
from tests.support.spec.cases import EKS_BASELINE, GKE_BASELINE, errors_of, issues_of

TOKENS = {
    "hf": "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456",
    "ghp": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github-pat": "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnop",
    "sk": "sk-" + "proj-abcdefghijklmnopqrstuvwx",
    "slack": "xoxb-" + "123456789012-123456789012-AbCdEfGhIjKl",
    "aws-key-id": "AKIA" + "IOSFODNN7EXAMPLE",
    "aws-session-key-id": "ASIA" + "Y34FZKBOKMUTVV7A",
    "high-entropy": "Zk3JqP9vR2mX8wL5tY7nB4cH6dF1gS0a",
}


@pytest.mark.parametrize("name", sorted(TOKENS))
def test_a_token_as_a_node_label_value_is_refused_without_echoing_it(name):
    token = TOKENS[name]
    (error,) = errors_of(edits(GKE_BASELINE, {"nodePools[0].labels": {"owner": token}}))
    assert error.startswith(
        "error: gpu-cluster:nodePools[0].labels.owner: pool 'h100': the node label value looks like "
    )
    assert token not in error and token[4:12] not in error
    assert "secret store" in error  # the fix says where secrets belong


def test_a_token_as_a_cloud_label_is_refused_once():
    """The cloud label check (lower case only) would refuse it too, and echo it: one message, masked."""
    token = TOKENS["ghp"]
    (error,) = errors_of(edits(GKE_BASELINE, {"labels": {"team": token}}))
    assert "looks like a GitHub token" in error and token not in error


def test_a_token_as_a_taint_value_is_refused():
    cfg = edits(
        EKS_BASELINE, {"nodePools[0].taints": [{"key": "owner", "value": TOKENS["aws-key-id"], "effect": "NoSchedule"}]}
    )
    (error,) = errors_of(cfg)
    assert error.startswith(
        "error: gpu-cluster:nodePools[0].taints[0].value: pool 'h100': the taint value looks like an AWS access key ID"
    )


@pytest.mark.parametrize("key", ["hf-token", "db_password", "example.com/api-key", "client-secret", "APIKEY"])
def test_a_key_named_like_a_secret_is_refused(key):
    (error,) = errors_of(edits(GKE_BASELINE, {"nodePools[0].labels": {key: "x"}}))
    assert "key named like a secret" in error and "secret store" in error


def test_a_taint_key_named_like_a_secret_is_refused():
    cfg = edits(GKE_BASELINE, {"nodePools[0].taints": [{"key": "token", "value": "x", "effect": "NoSchedule"}]})
    assert [e.splitlines()[0] for e in errors_of(cfg)] == [
        "error: gpu-cluster:nodePools[0].taints[0].key: pool 'h100': a taint key named like a secret ('token'): "
        "taints are plaintext, readable by anyone who may list nodes"
    ]


@pytest.mark.parametrize(
    "value",
    [
        "3f2a9c1d4b5e6f708192a3b4c5d6e7f809a1b2c3",  # a commit SHA
        "ml-platform-research-team-2026",
        "us-central1-a",
        "skylake",
        "sk-team",
        "hf_small",
        "AKIA",
    ],
)
def test_ordinary_values_are_not_taken_for_credentials(value):
    from stacks.validate.credentials import credential_kind

    assert credential_kind(value) is None


@pytest.mark.parametrize("key", ["team", "cost-center", "gpu-cluster.io/tier", "owner"])
def test_ordinary_keys_are_not_taken_for_secrets(key):
    from stacks.validate.credentials import secret_key_word

    assert secret_key_word(key) is None


def test_example_like_labels_pass():
    cfg = edits(
        GKE_BASELINE,
        {
            "labels": {"team": "ml-platform", "cost-center": "4711"},
            "nodePools[0].labels": {"git-sha": "3f2a9c1d4b5e6f708192a3b4c5d6e7f809a1b2c3"},
        },
    )
    assert not [i for i in issues_of(cfg) if "secret" in i.problem or "credential" in i.problem]
