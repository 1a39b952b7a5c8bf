"""The Cloud KMS key a GKE cluster encrypts Kubernetes Secrets with (application-layer Secrets encryption), as the
EKS path envelope-encrypts them: a key ring in the cluster's region, a CryptoKey that rotates, and the GKE service agent
allowed to encrypt and decrypt with it."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

ROTATION_PERIOD = "7776000s"
"""90 days: a new key version every quarter (new writes use it; existing Secrets stay readable with the old ones)."""
ENCRYPTER_DECRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"


def gke_service_agent(project_number: str) -> str:
    """The GKE service agent of a project, which wraps and unwraps the Secrets' data keys with the CryptoKey."""
    return f"serviceAccount:service-{project_number}@container-engine-robot.iam.gserviceaccount.com"


class GkeSecretsKey(pulumi.ComponentResource):
    """Key ring (auto-named: Cloud KMS never deletes a key ring, so a re-created stack needs a new name) and CryptoKey
    in ``region``, both protected like the cluster (destroying the key's versions makes every Secret in etcd
    unreadable), and the project's GKE service agent granted encrypt/decrypt on the key. Give the cluster
    ``databaseEncryption {state: ENCRYPTED, keyName: key_name}`` and make it depend on this component, so the grant
    exists before GKE first uses the key."""

    key_name: pulumi.Output[str]
    """``projects/<p>/locations/<region>/keyRings/<ring>/cryptoKeys/<key>``."""

    def __init__(
        self,
        name: str,
        project: str,
        region: str,
        protect: bool,
        labels: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:gcp:GkeSecretsKey", name, None, opts)
        keep = pulumi.ResourceOptions(parent=self, protect=protect)
        ring = gcp.kms.KeyRing(f"{name}-ring", location=region, project=project, opts=keep)
        key = gcp.kms.CryptoKey(
            f"{name}-key",
            key_ring=ring.id,
            purpose="ENCRYPT_DECRYPT",
            rotation_period=ROTATION_PERIOD,
            labels=labels or None,
            opts=keep,
        )
        number = gcp.organizations.get_project_output(project_id=project, opts=pulumi.InvokeOptions(parent=self)).number
        gcp.kms.CryptoKeyIAMMember(
            f"{name}-gke-service-agent",
            crypto_key_id=key.id,
            role=ENCRYPTER_DECRYPTER,
            member=number.apply(gke_service_agent),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.key_name = key.id
        self.register_outputs({"keyName": self.key_name})
