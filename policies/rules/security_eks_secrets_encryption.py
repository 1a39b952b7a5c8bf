"""security-eks-secrets-encryption-ckv-aws-58: EKS clusters envelope-encrypt Secrets with KMS (Checkov
CKV_AWS_58)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.resources import EKS_CLUSTER, cluster_subject
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN, as_dict, dig

ID = "security-eks-secrets-encryption-ckv-aws-58"


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    config = resource.props.get("encryptionConfig")
    if config is UNKNOWN:
        return
    resources = dig(as_dict(config), "resources", default=[])
    if resources is UNKNOWN or (isinstance(resources, list) and "secrets" in resources):
        return
    subject, keys = cluster_subject(resource)
    yield Finding(subject, "Kubernetes Secrets are not envelope-encrypted with a KMS key (encryptionConfig "
                  f"{'unset' if not config else 'without secrets'})", "encryptionConfig.resources: [secrets] with "
                  "provider.keyArn", "set encryptionConfig with a rotating KMS key (gpu-cluster creates one)", keys)


RULE = Rule(
    id=ID, title="EKS Secrets encryption", category=Category.SECURITY, checkov="CKV_AWS_58",
    description="EKS clusters encrypt Kubernetes Secrets with a KMS key (encryptionConfig.resources: [secrets]).",
    why=("Without envelope encryption, Secrets (cluster tokens, Slurm keys, database passwords) sit in etcd "
         "readable by anyone with access to its storage or backups."),
    remediation="1. Create a KMS key with rotation. 2. Set encryptionConfig {provider.keyArn, resources: [secrets]}.",
    severity=Severity.HIGH, enforcement=EnforcementLevel.MANDATORY, applies_to=(EKS_CLUSTER,), check=check,
)
