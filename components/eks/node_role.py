"""The IAM role EKS nodes assume, with the managed policies EKS documents and nothing broader."""
from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

NODE_POLICIES = (
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
)


def assume_role_policy(service: str, actions: tuple[str, ...] = ("sts:AssumeRole",)) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}]})


class EksNodeRole(pulumi.ComponentResource):
    arn: pulumi.Output[str]

    def __init__(self, name: str, tags: dict[str, str], opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-cluster:aws:EksNodeRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(f"{name}-role", assume_role_policy=assume_role_policy("ec2.amazonaws.com"),
                            description="EKS nodes, managed by gpu-cluster", tags=tags or None, opts=child)
        for arn in NODE_POLICIES:
            aws.iam.RolePolicyAttachment(f"{name}-{arn.rsplit('/', 1)[1].lower()}", role=role.name, policy_arn=arn,
                                         opts=child)
        self.arn = role.arn
        self.register_outputs({"arn": self.arn})
