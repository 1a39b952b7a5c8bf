"""Who may do what on an EKS cluster the stack creates, as IAM documents: the admin access entries, the Cluster
Autoscaler role's Pod Identity trust, the nodes' image-pull permissions. Pure: JSON-shaped dicts, no Pulumi (they
take values known only at deploy, the account and the cluster's ARN, so the components build them in an ``apply``).

- Admins: the cluster is created with ``bootstrapClusterCreatorAdminPermissions: false``, so nobody is admin by
  having created it; each admin is an explicit access entry with AmazonEKSClusterAdminPolicy (visible in the stack,
  removable, reviewable).
- Pod Identity trust: ``pods.eks.amazonaws.com`` may assume the role only for this account, this cluster and this
  ServiceAccount (the session tags EKS Pod Identity sets: EKS User Guide, "Create IAM role with trust policy required
  by EKS Pod Identity" and "Enable or disable session tags"); without a condition any Pod Identity association in the
  account could take the role.
- Image pulls: the nodes may read the repositories they pull from (the EKS add-ons', the EFA device plugin, the AWS
  Deep Learning Container the EFA runtimes default to) and the stack's own account's repositories in its region,
  instead of every repository of every account (AmazonEC2ContainerRegistryReadOnly).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

ADMIN_POLICY_ARN = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"
ECR_PULL_ACTIONS = ("ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer")
EKS_ADDON_REPOSITORIES = (
    "amazon-k8s-cni",
    "amazon-k8s-cni-init",
    "amazon/aws-network-policy-agent",  # vpc-cni (with its policy agent)
    "eks/kube-proxy",
    "eks/coredns",
    "eks/pause",  # what every EKS cluster runs
    "eks/eks-pod-identity-agent",
    "eks/eks-node-monitoring-agent",  # add-ons gpu-cluster installs
    "eks/aws-efa-k8s-device-plugin",  # the EFA device plugin chart's default image
)
"""Repository names in the EKS add-on registries (one account per region, EKS User Guide "View Amazon container image
registries for Amazon EKS add-ons"); matched in any account and region, as the registry differs by region."""
DLC_REPOSITORY = "pytorch-training"
"""The AWS Deep Learning Container the EFA runtimes default to (catalog/data/fabric-images.csv)."""
_ROLE_SESSION = re.compile(r"^arn:(aws[a-z-]*):sts::([0-9]{12}):assumed-role/([^/]+)/.+$")


def cluster_account(cluster_arn: str) -> str:
    """``arn:aws:eks:<region>:<account>:cluster/<name>`` -> the account."""
    return cluster_arn.split(":")[4]


def pod_identity_trust(cluster_arn: str, namespace: str, service_account: str) -> dict[str, Any]:
    """The trust policy of a role one ServiceAccount of one cluster assumes through EKS Pod Identity."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "PodIdentityThisClusterAndServiceAccountOnly",
                "Effect": "Allow",
                "Principal": {"Service": POD_IDENTITY_SERVICE},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": {
                    "StringEquals": {
                        "aws:SourceAccount": cluster_account(cluster_arn),
                        "aws:RequestTag/eks-cluster-arn": cluster_arn,
                        "aws:RequestTag/kubernetes-namespace": namespace,
                        "aws:RequestTag/kubernetes-service-account": service_account,
                    }
                },
            }
        ],
    }


def ecr_pull_policy(region: str, account: str, repositories: Iterable[str] = EKS_ADDON_REPOSITORIES) -> dict[str, Any]:
    """Image pulls for the nodes: named repositories in any registry, and every repository of ``account`` in
    ``region`` (the stack's own images). ``ecr:GetAuthorizationToken`` takes no resource, so ``*``."""
    named = [f"arn:aws:ecr:*:*:repository/{repo}" for repo in sorted(set(repositories))]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "RegistryLogin", "Effect": "Allow", "Action": ["ecr:GetAuthorizationToken"], "Resource": "*"},
            {"Sid": "PullNamedRepositories", "Effect": "Allow", "Action": list(ECR_PULL_ACTIONS), "Resource": named},
            {
                "Sid": "PullThisAccountsRepositories",
                "Effect": "Allow",
                "Action": list(ECR_PULL_ACTIONS),
                "Resource": f"arn:aws:ecr:{region}:{account}:repository/*",
            },
        ],
    }


def session_role_arn(arn: str) -> str:
    """The IAM role behind an STS session ARN (what the deploying identity is when it assumed a role); other ARNs as
    they are. A role path, which the session ARN does not carry, is not restored: use ``iam.get_session_context``
    where the role may have one."""
    match = _ROLE_SESSION.match(arn)
    return f"arn:{match[1]}:iam::{match[2]}:role/{match[3]}" if match else arn
