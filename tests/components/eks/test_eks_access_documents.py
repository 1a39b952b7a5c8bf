"""The IAM documents of components/eks/access.py: the Pod Identity trust names this cluster, account and
ServiceAccount; the node pull policy names repositories, not every repository of every account; session ARNs map to
their role."""

from __future__ import annotations

import json

import pytest

from components.eks.access import (
    DLC_REPOSITORY,
    ECR_PULL_ACTIONS,
    EKS_ADDON_REPOSITORIES,
    ecr_pull_policy,
    pod_identity_trust,
    session_role_arn,
)

CLUSTER = "arn:aws:eks:us-east-1:123456789012:cluster/ml"


def test_the_pod_identity_trust_is_for_one_account_cluster_and_service_account():
    trust = pod_identity_trust(CLUSTER, "kube-system", "cluster-autoscaler")
    (statement,) = trust["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Condition"] == {
        "StringEquals": {
            "aws:SourceAccount": "123456789012",
            "aws:RequestTag/eks-cluster-arn": CLUSTER,
            "aws:RequestTag/kubernetes-namespace": "kube-system",
            "aws:RequestTag/kubernetes-service-account": "cluster-autoscaler",
        }
    }


def test_the_pull_policy_has_no_wildcard_repository_outside_the_stacks_account():
    policy = ecr_pull_policy("us-east-1", "123456789012", (*EKS_ADDON_REPOSITORIES, DLC_REPOSITORY))
    login, named, own = policy["Statement"]
    assert login["Action"] == ["ecr:GetAuthorizationToken"] and login["Resource"] == "*"  # takes no resource
    assert named["Action"] == own["Action"] == list(ECR_PULL_ACTIONS)
    assert all(r.startswith("arn:aws:ecr:*:*:repository/") and not r.endswith("/*") for r in named["Resource"])
    assert "arn:aws:ecr:*:*:repository/pytorch-training" in named["Resource"]
    assert "arn:aws:ecr:*:*:repository/amazon-k8s-cni" in named["Resource"]
    assert own["Resource"] == "arn:aws:ecr:us-east-1:123456789012:repository/*"
    assert '"Resource": "*"' not in json.dumps(policy["Statement"][1:])


@pytest.mark.parametrize(
    "arn, role",
    [
        ("arn:aws:sts::123456789012:assumed-role/Admin/jane@example.com", "arn:aws:iam::123456789012:role/Admin"),
        ("arn:aws-us-gov:sts::123456789012:assumed-role/ci/run-7", "arn:aws-us-gov:iam::123456789012:role/ci"),
        ("arn:aws:iam::123456789012:user/jane", "arn:aws:iam::123456789012:user/jane"),
    ],
)
def test_session_arns_map_to_their_role(arn, role):
    assert session_role_arn(arn) == role
