"""Who administers the clusters and how their Secrets are encrypted (tenants never reach cluster admin or plaintext
Secrets), as the program registers them: EKS without the creator's implicit admin but with explicit access entries; GKE
Secrets encrypted with a rotating Cloud KMS key the GKE service agent may use; the Cluster Autoscaler's role trusted
only for its ServiceAccount on this cluster; EKS nodes reading only the ECR repositories they pull from."""

from __future__ import annotations

import json

import pytest

from components.eks.access import ADMIN_POLICY_ARN, EKS_ADDON_REPOSITORIES
from preview.engine import run_program
from preview.mocks.cloud import FAKE_ACCOUNT, FAKE_DEPLOYER_ROLE, FAKE_PROJECT_NUMBER
from tests.support.preview.recorded import of_type, one
from tests.support.spec.edit import edit
from tests.support.spec.stack_configs import EKS, GKE

ENTRY, ASSOCIATION = "aws:eks/accessEntry:AccessEntry", "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
ADMIN = "arn:aws:iam::123456789012:role/platform-admin"


@pytest.fixture(scope="module")
def eks():
    return run_program(EKS)


@pytest.fixture(scope="module")
def gke():
    return run_program(GKE)


# -- EKS: admins ---------------------------------------------------------------------------------------------------
def test_the_cluster_creator_is_not_admin_by_creating_it(eks):
    cluster = one(eks, "aws:eks/cluster:Cluster")
    assert cluster.inputs["accessConfig"] == {
        "authenticationMode": "API",
        "bootstrapClusterCreatorAdminPermissions": False,
    }
    # the setting forces a new cluster: a cluster created with the old default keeps it instead of being replaced
    assert "accessConfig.bootstrapClusterCreatorAdminPermissions" in cluster.ignore_changes


def test_the_deploying_identity_is_admin_through_an_explicit_access_entry(eks):
    (entry,) = of_type(eks, ENTRY)
    assert entry.inputs == {
        "clusterName": "ml",
        "principalArn": FAKE_DEPLOYER_ROLE,
        "type": "STANDARD",
        **({"tags": entry.inputs["tags"]} if "tags" in entry.inputs else {}),
    }
    (association,) = of_type(eks, ASSOCIATION)
    assert association.inputs["policyArn"] == ADMIN_POLICY_ARN
    assert association.inputs["accessScope"] == {"type": "cluster"}
    assert association.inputs["principalArn"] == FAKE_DEPLOYER_ROLE and entry.urn in association.dependencies
    # every Kubernetes object waits for the grant: the provider's kubeconfig depends on the association
    provider = one(eks, "pulumi:providers:kubernetes")
    assert association.urn in provider.dependencies


def test_configured_admins_replace_the_default():
    rec = run_program(edit(EKS, "cluster.adminPrincipalArns", [ADMIN, FAKE_DEPLOYER_ROLE]))
    assert sorted(e.inputs["principalArn"] for e in of_type(rec, ENTRY)) == sorted([ADMIN, FAKE_DEPLOYER_ROLE])
    assert sorted(a.inputs["principalArn"] for a in of_type(rec, ASSOCIATION)) == sorted([ADMIN, FAKE_DEPLOYER_ROLE])


def test_an_existing_cluster_gets_no_access_entries():
    rec = run_program(edit(EKS, "cluster.mode", "existing"))
    assert of_type(rec, ENTRY) == [] and of_type(rec, ASSOCIATION) == []


# -- EKS: image pulls and the autoscaler's role ----------------------------------------------------------------------
def test_nodes_read_named_repositories_not_every_repository(eks):
    attached = {r.inputs["policyArn"] for r in of_type(eks, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")}
    assert "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly" not in attached
    pull = json.loads(one(eks, "aws:iam/rolePolicy:RolePolicy", "ml-nodes-ecr-pull").inputs["policy"])
    by_sid = {s["Sid"]: s for s in pull["Statement"]}
    assert {r.rsplit("repository/", 1)[1] for r in by_sid["PullNamedRepositories"]["Resource"]} >= set(
        EKS_ADDON_REPOSITORIES
    )
    assert by_sid["PullThisAccountsRepositories"]["Resource"] == f"arn:aws:ecr:us-east-1:{FAKE_ACCOUNT}:repository/*"


def test_the_autoscaler_role_trusts_only_its_service_account_on_this_cluster(eks):
    trust = json.loads(one(eks, "aws:iam/role:Role", "cluster-autoscaler-role").inputs["assumeRolePolicy"])
    (statement,) = trust["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Condition"] == {
        "StringEquals": {
            "aws:SourceAccount": FAKE_ACCOUNT,
            "aws:RequestTag/eks-cluster-arn": f"arn:aws:eks:offline:{FAKE_ACCOUNT}:cluster/ml",
            "aws:RequestTag/kubernetes-namespace": "kube-system",
            "aws:RequestTag/kubernetes-service-account": "cluster-autoscaler",
        }
    }


# -- GKE: Secrets encryption -------------------------------------------------------------------------------------
def test_gke_secrets_are_encrypted_with_a_rotating_kms_key_in_the_clusters_region(gke):
    cluster = one(gke, "gcp:container/cluster:Cluster")
    key = one(gke, "gcp:kms/cryptoKey:CryptoKey")
    ring = one(gke, "gcp:kms/keyRing:KeyRing")
    assert cluster.inputs["databaseEncryption"] == {"state": "ENCRYPTED", "keyName": f"{key.name}-id"}
    assert key.inputs["rotationPeriod"] == "7776000s" and key.inputs["purpose"] == "ENCRYPT_DECRYPT"
    assert ring.inputs["location"] == cluster.inputs["location"] == "us-central1"
    assert key.protect is True and ring.protect is True  # losing the key loses every Secret in etcd
    grant = one(gke, "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember")
    assert grant.inputs["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    assert grant.inputs["member"] == (
        f"serviceAccount:service-{FAKE_PROJECT_NUMBER}@container-engine-robot.iam.gserviceaccount.com"
    )
    assert grant.urn in cluster.dependencies, "GKE must be allowed to use the key before it creates the cluster"


def test_an_existing_gke_cluster_gets_no_key():
    rec = run_program(edit(GKE, "cluster.mode", "existing"))
    assert of_type(rec, "gcp:kms/cryptoKey:CryptoKey") == []
