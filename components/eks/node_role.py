"""The IAM role EKS nodes assume: the worker and CNI policies EKS documents, and image pulls only from the ECR
repositories the nodes use (components/eks/access.py) instead of AmazonEC2ContainerRegistryReadOnly, which reads every
repository of every account that lets it."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from components.eks.access import DLC_REPOSITORY, EKS_ADDON_REPOSITORIES, ecr_pull_policy

NODE_POLICIES = (
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
)
PULLED_REPOSITORIES = (*EKS_ADDON_REPOSITORIES, DLC_REPOSITORY)


def assume_role_policy(service: str, actions: tuple[str, ...] = ("sts:AssumeRole",)) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}],
        }
    )


class EksNodeRole(pulumi.ComponentResource):
    arn: pulumi.Output[str]

    def __init__(self, name: str, tags: dict[str, str], region: str, opts: pulumi.ResourceOptions | None = None):
        """``region``: the stack's; the nodes may read every repository of the deploying account there (its own
        images) and the named repositories anywhere."""
        super().__init__("gpu-cluster:aws:EksNodeRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=assume_role_policy("ec2.amazonaws.com"),
            description="EKS nodes, managed by gpu-cluster",
            tags=tags or None,
            opts=child,
        )
        for arn in NODE_POLICIES:
            aws.iam.RolePolicyAttachment(
                f"{name}-{arn.rsplit('/', 1)[1].lower()}", role=role.name, policy_arn=arn, opts=child
            )
        account = aws.get_caller_identity_output(opts=pulumi.InvokeOptions(parent=self)).account_id
        aws.iam.RolePolicy(
            f"{name}-ecr-pull",
            role=role.id,
            opts=child,
            policy=account.apply(lambda a: json.dumps(ecr_pull_policy(region, a, PULLED_REPOSITORIES))),
        )
        self.arn = role.arn
        self.register_outputs({"arn": self.arn})
