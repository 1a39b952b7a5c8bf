"""Security baseline rules (each names the Checkov check it re-implements in its metadata): baseline passes, one
field changed per case gives the exact message. The credential rules (Helm values, known defaults) are tested in
``test_policy_credentials.py``."""

from __future__ import annotations

import re

import pytest

from tests.support.spec.edit import DELETE, edit, edits
from tests.support.policy.harness import Pack, baseline, find, wire, with_props

NP, GC = "gcp:container/nodePool:NodePool", "gcp:container/cluster:Cluster"
NG, LT, EC = "aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate", "aws:eks/cluster:Cluster"
M = "mandatory"
UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's wire sentinel for "known at deploy"

SB_FIX = "Fix: set nodeConfig.shieldedInstanceConfig.enableSecureBoot: true (gpu-cluster sets it)"
CASES = [
    (
        "gcp",
        GC,
        "ml",
        "enableShieldedNodes",
        False,
        [
            (
                "security-gke-shielded-nodes",
                M,
                "cluster 'ml': Shielded GKE Nodes are turned off · observed: enableShieldedNodes false · required: true "
                "(or unset)\nFix: set enableShieldedNodes: true (gpu-cluster sets it)",
            )
        ],
    ),
    (
        "gcp",
        NP,
        "h100",
        "nodeConfig.shieldedInstanceConfig.enableSecureBoot",
        False,
        [
            (
                "security-gke-secure-boot",
                M,
                "pool 'h100': Secure Boot is off, so unsigned boot components and kernel modules load · observed: "
                "nodeConfig.shieldedInstanceConfig.enableSecureBoot false · required: true\nFix: set "
                "nodeConfig.shieldedInstanceConfig.enableSecureBoot: true (gpu-cluster sets it)",
            )
        ],
    ),
    (
        "gcp",
        NP,
        "h100",
        "nodeConfig.workloadMetadataConfig.mode",
        "GCE_METADATA",
        [
            (
                "security-gke-metadata-server",
                M,
                "pool 'h100': pods can read the node's metadata and credentials · observed: "
                "nodeConfig.workloadMetadataConfig.mode GCE_METADATA · required: GKE_METADATA\nFix: set "
                "nodeConfig.workloadMetadataConfig.mode: GKE_METADATA (gpu-cluster sets it) and give pods Workload Identity",
            )
        ],
    ),
    (
        "gcp",
        GC,
        "ml",
        "nodeConfig.workloadMetadataConfig",
        DELETE,
        [
            (
                "security-gke-metadata-server",
                M,
                "cluster 'ml' (default node config): pods can read the node's metadata and credentials · observed: "
                "nodeConfig.workloadMetadataConfig.mode unset · required: GKE_METADATA\nFix: set "
                "nodeConfig.workloadMetadataConfig.mode: GKE_METADATA (gpu-cluster sets it) and give pods Workload Identity",
            )
        ],
    ),
    (
        "gcp",
        NP,
        "h100",
        "management.autoRepair",
        False,
        [
            (
                "security-gke-auto-repair",
                M,
                "pool 'h100': auto-repair is off, so broken GPU nodes are never replaced · observed: "
                "management.autoRepair false · required: true\nFix: set management.autoRepair: true (gpu-cluster sets it)",
            )
        ],
    ),
    (
        "gcp",
        NP,
        "h100",
        "management.autoUpgrade",
        False,
        [
            (
                "security-gke-auto-upgrade",
                M,
                "pool 'h100': auto-upgrade is off, so nodes miss kernel, containerd and driver fixes · observed: "
                "management.autoUpgrade false · required: true\nFix: set management.autoUpgrade: true (gpu-cluster sets "
                "it; upgrades follow maxSurge/maxUnavailable)",
            )
        ],
    ),
    (
        "gcp",
        NP,
        "h100",
        "nodeConfig.serviceAccount",
        "123456789-compute@developer.gserviceaccount.com",
        [
            (
                "security-gke-node-service-account",
                M,
                "pool 'h100': nodes run as the Compute Engine default service account, which has Editor on the project "
                "· observed: nodeConfig.serviceAccount 123456789-compute@developer.gserviceaccount.com · required: a "
                "dedicated service account with only roles/container.defaultNodeServiceAccount (plus registry "
                "read)\nFix: set nodeConfig.serviceAccount to a dedicated account (gpu-cluster creates one per pool)",
            )
        ],
    ),
    ("gcp", NP, "h100", "nodeConfig.serviceAccount", UNKNOWN_STRING, []),  # created in this stack: not the default
    (
        "gcp",
        GC,
        "ml",
        "privateClusterConfig.enablePrivateNodes",
        False,
        [
            (
                "security-gke-private-nodes",
                M,
                "cluster 'ml': nodes get public IP addresses · observed: privateClusterConfig.enablePrivateNodes false "
                "· required: true\nFix: set privateClusterConfig.enablePrivateNodes: true (gpu-cluster sets it) and "
                "reach the internet through Cloud NAT",
            )
        ],
    ),
    (
        "gcp",
        NP,
        "h100",
        "networkConfig.enablePrivateNodes",
        False,
        [
            (
                "security-gke-private-nodes",
                M,
                "pool 'h100': the pool overrides the cluster and gives its nodes public IP addresses · observed: "
                "networkConfig.enablePrivateNodes false · required: true (or unset)\nFix: remove "
                "networkConfig.enablePrivateNodes from the pool",
            )
        ],
    ),
    (
        "aws",
        LT,
        "p5-lt",
        "metadataOptions.httpTokens",
        "optional",
        [
            (
                "security-eks-imdsv2",
                M,
                "pool 'p5' (launch template 'p5-lt'): instances accept IMDSv1 requests, which SSRF can forge · "
                "observed: metadataOptions.httpTokens optional · required: required (IMDSv2 session tokens only)\nFix: "
                "set metadataOptions.httpTokens: required (gpu-cluster sets it)",
            )
        ],
    ),
    (
        "aws",
        NG,
        "p5",
        "launchTemplate",
        DELETE,
        [
            (
                "security-eks-imdsv2",
                M,
                "pool 'p5': the node group has no launch template, so its nodes use the EKS default settings and cannot "
                "be held to IMDSv2 · observed: launchTemplate unset · required: a launch template with "
                "metadataOptions.httpTokens: required\nFix: give the node group a launch template (gpu-cluster creates "
                "one per pool)",
            )
        ],
    ),
    (
        "aws",
        LT,
        "p5-lt",
        "metadataOptions.httpPutResponseHopLimit",
        2,
        [
            (
                "security-eks-imds-hop-limit",
                M,
                "pool 'p5' (launch template 'p5-lt'): pods can reach the node's metadata credentials · observed: "
                "metadataOptions.httpPutResponseHopLimit 2 · required: at most 1, from maxHopLimit\nFix: set "
                "metadataOptions.httpPutResponseHopLimit: 1 and give pods their own role with EKS Pod Identity or IRSA",
            )
        ],
    ),
    (
        "aws",
        LT,
        "p5-lt",
        "metadataOptions.httpPutResponseHopLimit",
        DELETE,
        [
            (
                "security-eks-imds-hop-limit",
                M,
                "pool 'p5' (launch template 'p5-lt'): pods can reach the node's metadata credentials · observed: "
                "metadataOptions.httpPutResponseHopLimit unset (AL2023 EKS AMIs then answer at 2 hops) · required: at "
                "most 1, from maxHopLimit\nFix: set metadataOptions.httpPutResponseHopLimit: 1 and give pods their own "
                "role with EKS Pod Identity or IRSA",
            )
        ],
    ),
    (
        "aws",
        EC,
        "ml",
        "enabledClusterLogTypes",
        ["api", "audit"],
        [
            (
                "security-eks-control-plane-logs",
                M,
                "cluster 'ml': control-plane log types authenticator, controllerManager, scheduler are off, so who did "
                "what cannot be investigated · observed: enabledClusterLogTypes [api, audit] · required: all of api, "
                "audit, authenticator, controllerManager, scheduler, from requiredLogTypes\nFix: add the missing types "
                "to enabledClusterLogTypes (gpu-cluster enables all five)",
            )
        ],
    ),
    (
        "gcp",
        GC,
        "ml",
        "databaseEncryption",
        DELETE,
        [
            (
                "security-gke-secrets-encryption",
                M,
                "cluster 'ml': Kubernetes Secrets are stored with only Google's default encryption at rest, not encrypted "
                "with a key you control · observed: databaseEncryption.state unset · required: databaseEncryption.state "
                "ENCRYPTED with a Cloud KMS keyName\nFix: set databaseEncryption {state: ENCRYPTED, keyName: <CryptoKey in "
                "the cluster's region>} and grant the GKE service agent roles/cloudkms.cryptoKeyEncrypterDecrypter on it "
                "(gpu-cluster creates the key ring, a rotating key and the grant)",
            )
        ],
    ),
    (
        "aws",
        EC,
        "ml",
        "encryptionConfig",
        DELETE,
        [
            (
                "security-eks-secrets-encryption",
                M,
                "cluster 'ml': Kubernetes Secrets are not envelope-encrypted with a KMS key · observed: "
                "encryptionConfig.resources unset · required: includes secrets\nFix: set encryptionConfig "
                "{provider.keyArn, resources: [secrets]} with a rotating KMS key (gpu-cluster creates one)",
            )
        ],
    ),
]


@pytest.fixture(scope="module")
def pack() -> Pack:
    p = Pack()
    p.configure()
    return p


@pytest.mark.parametrize(
    "cloud,type_,name,path,value,expected",
    CASES,
    ids=[f"{c[2]}.{c[3]}={c[4] if c[4] is not DELETE else 'unset'}" for c in CASES],
)
def test_one_field_changed(pack, cloud, type_, name, path, value, expected):
    rs = baseline(cloud)
    r = find(rs, type_, name)
    assert pack.resource(r, rs) == []  # the baseline passes ...
    assert pack.resource(with_props(r, edit(wire(r), path, value)), rs) == expected  # ... one change fails


FAILING = [c for c in CASES if c[5]]


@pytest.mark.parametrize(
    "cloud,type_,name,path,value,expected", FAILING, ids=[f"{c[5][0][0]}:{c[2]}.{c[3]}" for c in FAILING]
)
def test_a_waiver_naming_the_rule_and_the_pool_or_cluster_silences_it(pack, cloud, type_, name, path, value, expected):
    rs = baseline(cloud)
    broken = with_props(find(rs, type_, name), edit(wire(find(rs, type_, name)), path, value))
    rule, subject = expected[0][0], re.match(r"^\w+(?: \w+)? '([^']+)'", expected[0][2]).group(1)
    waiver = {"rule": rule, "resource": subject, "reason": "accepted risk, see ticket SEC-42"}
    pack.configure({rule: {"waivers": [waiver]}})
    try:
        assert pack.resource(broken, rs) == []
        assert [n for n, _ in pack.not_applicable(broken, rs)] == [rule]
    finally:
        pack.configure()


def test_secure_boot_message_explains_the_operator_driver_waiver(pack):
    rs = baseline("gcp")
    pool = find(rs, NP, "h100")
    own = edits(
        wire(pool),
        {
            "nodeConfig.shieldedInstanceConfig": DELETE,
            "nodeConfig.guestAccelerators[0].gpuDriverInstallationConfig.gpuDriverVersion": "INSTALLATION_DISABLED",
        },
    )
    assert pack.resource(with_props(pool, own), rs) == [
        (
            "security-gke-secure-boot",
            M,
            "pool 'h100': Secure Boot is off, so unsigned boot components and kernel "
            "modules load · observed: nodeConfig.shieldedInstanceConfig.enableSecureBoot unset (off) · required: true\n"
            f"{SB_FIX}; this pool installs its own driver (INSTALLATION_DISABLED): if the GPU Operator compiles it, Secure "
            "Boot rejects the unsigned module, so waive security-gke-secure-boot for this pool with that reason instead",
        )
    ]
    waiver = {
        "rule": "security-gke-secure-boot",
        "resource": "h100",
        "reason": "GPU Operator compiles the driver on Ubuntu nodes",
    }
    pack.configure({"security-gke-secure-boot": {"waivers": [waiver]}})
    try:
        assert pack.resource(with_props(pool, own), rs) == []
    finally:
        pack.configure()
