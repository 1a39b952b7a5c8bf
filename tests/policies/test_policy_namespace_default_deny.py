"""security-namespace-default-deny through the pack: every example passes (every namespace it creates, system ones
included, has a default-deny ingress policy); removing one namespace's default deny is a mandatory violation with
the exact message; a waiver naming the namespace silences it."""

from __future__ import annotations

import pytest

from tests.policies.test_policy_tenancy import M, Pack, ours, recorded, waived, without  # noqa: F401
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS

RULE = "security-namespace-default-deny"
NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


@pytest.mark.slow
def test_every_example_passes(pack):
    for stack in EXAMPLE_STACKS:
        assert ours(pack.stack(recorded(stack)), RULE) == [], stack


@pytest.mark.parametrize(
    "stack, namespace",
    [
        ("gke-kueue", "kueue-system"),
        ("gke-kueue", "kubeflow-system"),
        ("gke-h100-512", "slinky"),
        ("gke-operator-mig", "gpu-operator"),
        ("eks-p5-efa", "nvidia-device-plugin"),
        ("gke-kueue", "research"),
    ],
)
def test_a_namespace_without_default_deny_is_refused(pack, stack, namespace):
    bare = without(
        recorded(stack),
        lambda r: (
            r.type == NETPOL
            and r.inputs["metadata"]["namespace"] == namespace
            and r.inputs["metadata"]["name"] == "default-deny-ingress"
        ),
    )
    assert ours(pack.stack(bare), RULE) == [
        (
            RULE,
            M,
            (
                f"namespace '{namespace}': any pod in the cluster, a tenant's included, can open connections to every port "
                f"of every pod in it (webhooks, controllers, databases, job ports) · observed: no default-deny ingress "
                f"NetworkPolicy in namespace {namespace} · required: a NetworkPolicy in {namespace} selecting every pod for "
                "Ingress with no rule, plus only the allows its components need\nFix: keep the namespace's NetworkPolicies "
                "gpu-cluster renders (render/network_policies.py, render/system_network_policies.py)"
            ),
        )
    ]
    assert waived(pack, RULE, namespace, bare) == []
