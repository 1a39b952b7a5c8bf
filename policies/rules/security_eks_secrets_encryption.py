"""security-eks-secrets-encryption: EKS clusters envelope-encrypt Secrets with KMS (Checkov CKV_AWS_58)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Severity

from policies.field_check import FieldCheck, Includes, applies_to, field_checks
from policies.resources import EKS_CLUSTER
from policies.rule import Category, Rule
from policies.registry import register

ID = "security-eks-secrets-encryption"
CHECKS = (
    FieldCheck(
        types=(EKS_CLUSTER,),
        path=("encryptionConfig", "resources"),
        required=Includes(("secrets",)),
        problem="Kubernetes Secrets are not envelope-encrypted with a KMS key",
        fix="set encryptionConfig {provider.keyArn, resources: [secrets]} with a rotating KMS key "
        "(gpu-cluster creates one)",
    ),
)

RULE = register(
    Rule(
        id=ID,
        title="EKS Secrets encryption",
        category=Category.SECURITY,
        checkov="CKV_AWS_58",
        former_ids=("security-eks-secrets-encryption-ckv-aws-58",),
        description="EKS clusters encrypt Kubernetes Secrets with a KMS key (encryptionConfig.resources: [secrets]).",
        why=(
            "Without envelope encryption, Secrets (cluster tokens, Slurm keys, database passwords) sit in etcd "
            "readable by anyone with access to its storage or backups."
        ),
        remediation="1. Create a KMS key with rotation. 2. Set encryptionConfig {provider.keyArn, resources: [secrets]}.",
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=applies_to(CHECKS),
        check=field_checks(CHECKS),
    ),
    order=4110,
)
