"""security-gke-secrets-encryption (mandatory) through the pack: encrypted with a key passes, every way of not being
encrypted is a violation with the exact message, a value known only at deploy passes, a waiver silences it; the
clusters gpu-cluster creates pass (the baseline of test_policy_security.py changes databaseEncryption)."""

from __future__ import annotations

import pytest

from tests.support.policy.harness import Pack, fake
from preview.engine import Registered

KMS = "security-gke-secrets-encryption"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's wire sentinel for "known at deploy"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def ours(diags, rule):
    return [d for d in diags if d[0] == rule]


def cluster(encryption) -> Registered:
    props = {"name": "ml", "location": "us-central1"}
    if encryption is not None:
        props["databaseEncryption"] = encryption
    return fake(GKE_CLUSTER, "ml", props)


KEY = "projects/p/locations/us-central1/keyRings/ml/cryptoKeys/secrets"
FIX = (
    "Fix: set databaseEncryption {state: ENCRYPTED, keyName: <CryptoKey in the cluster's region>} and grant the GKE "
    "service agent roles/cloudkms.cryptoKeyEncrypterDecrypter on it (gpu-cluster creates the key ring, a rotating "
    "key and the grant)"
)


@pytest.mark.parametrize(
    "encryption, observed",
    [
        (None, "databaseEncryption.state unset"),
        ({"state": "DECRYPTED"}, "databaseEncryption.state DECRYPTED"),
        ({"state": "ENCRYPTED"}, "databaseEncryption.keyName unset"),
        ({"state": "ENCRYPTED", "keyName": ""}, "databaseEncryption.keyName unset"),
    ],
)
def test_a_gke_cluster_without_kms_secrets_encryption_is_a_mandatory_violation(pack, encryption, observed):
    assert ours(pack.resource(cluster(encryption)), KMS) == [
        (
            KMS,
            "mandatory",
            (
                "cluster 'ml': Kubernetes Secrets are stored with only Google's default encryption at rest, not encrypted "
                f"with a key you control · observed: {observed} · required: databaseEncryption.state ENCRYPTED with a Cloud "
                f"KMS keyName\n{FIX}"
            ),
        )
    ]


def test_encrypted_with_a_key_passes_and_a_key_known_only_at_deploy_passes(pack):
    assert ours(pack.resource(cluster({"state": "ENCRYPTED", "keyName": KEY})), KMS) == []
    assert ours(pack.resource(cluster({"state": UNKNOWN_STRING, "keyName": UNKNOWN_STRING})), KMS) == []


def test_a_waiver_naming_the_cluster_silences_the_violation(pack):
    pack.configure({KMS: {"waivers": [{"rule": KMS, "resource": "ml", "reason": "central key applied by the org"}]}})
    try:
        assert ours(pack.resource(cluster(None)), KMS) == []
    finally:
        pack.configure()
