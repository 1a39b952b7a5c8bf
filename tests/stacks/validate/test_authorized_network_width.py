"""``cluster.authorizedNetworks`` wider than a /16 is a warning (wider than a /8 is an error: spec error cases)."""

from __future__ import annotations

from tests.support.spec.cases import config_for
from stacks.validate.load import load_spec


def test_a_network_wider_than_a_slash_16_is_warned_about():
    _, warnings = load_spec(config_for("gke", {"cluster.authorizedNetworks": ["10.0.0.0/12"]}))
    assert [str(w) for w in warnings if "authorizedNetworks" in str(w)] == [
        "warning: gpu-cluster:cluster.authorizedNetworks[0]: 1,048,576 addresses may reach the Kubernetes API\n"
        "  received: '10.0.0.0/12'\n"
        "  allowed:  /16 or narrower is what an office or VPN needs\n"
        "  fix:      narrow it to the ranges that run kubectl/pulumi"
    ]


def test_a_slash_16_passes_quietly():
    _, warnings = load_spec(config_for("gke", {"cluster.authorizedNetworks": ["10.0.0.0/16"]}))
    assert not [w for w in warnings if "authorizedNetworks" in str(w)]
