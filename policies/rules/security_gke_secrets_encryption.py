"""security-gke-secrets-encryption: GKE clusters encrypt Secrets at the application layer with a Cloud KMS key
(``databaseEncryption {state: ENCRYPTED, keyName}``), as EKS clusters envelope-encrypt them
(security-eks-secrets-encryption). OSS Checkov has no check for it; the CIS GKE Benchmark asks for it."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding, shown
from policies.resources import GKE_CLUSTER, cluster_subject
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.values import UNKNOWN, dig

ID = "security-gke-secrets-encryption"
ENCRYPTED = "ENCRYPTED"


def check(r: Resource, cfg: Config) -> Iterable[Finding]:
    state = dig(r.props, "databaseEncryption", "state")
    key = dig(r.props, "databaseEncryption", "keyName")
    if state is UNKNOWN or key is UNKNOWN:
        return  # known at deploy (a key created in this stack has its name then): the API refuses a bad one
    if state == ENCRYPTED and isinstance(key, str) and key:
        return
    subject, keys = cluster_subject(r)
    observed = f"databaseEncryption.state {shown(state)}" if state != ENCRYPTED else "databaseEncryption.keyName unset"
    yield Finding(
        subject,
        "Kubernetes Secrets are stored with only Google's default encryption at rest, not "
        "encrypted with a key you control",
        observed=observed,
        required=f"databaseEncryption.state {ENCRYPTED} with a Cloud KMS keyName",
        fix="set databaseEncryption {state: ENCRYPTED, keyName: <CryptoKey in the cluster's region>} and "
        "grant the GKE service agent roles/cloudkms.cryptoKeyEncrypterDecrypter on it (gpu-cluster "
        "creates the key ring, a rotating key and the grant)",
        keys=keys,
    )


RULE = register(
    Rule(
        id=ID,
        title="GKE Secrets encryption",
        category=Category.SECURITY,
        description="GKE clusters encrypt Kubernetes Secrets with a Cloud KMS key (databaseEncryption.state ENCRYPTED).",
        why=(
            "Secrets hold the Slurm key and JWT key, database passwords, fleet tokens and ServiceAccount tokens. "
            "Application-layer encryption wraps them in etcd with a key in your Cloud KMS: a copy of etcd or of its "
            "backups is unreadable without that key, access to the key is logged, and revoking it cuts access. "
            "Mandatory, as on EKS, because gpu-cluster creates the key by default; waive it per cluster where an "
            "organisation policy forbids project-level keys or a central key is applied outside the stack."
        ),
        remediation=(
            "1. Create a KMS key ring in the cluster's region and a CryptoKey with a rotation period. "
            "2. Grant service-<project number>@container-engine-robot.iam.gserviceaccount.com "
            "roles/cloudkms.cryptoKeyEncrypterDecrypter on the key. "
            "3. Set databaseEncryption {state: ENCRYPTED, keyName}."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_CLUSTER,),
        check=check,
    ),
    order=4115,
)
