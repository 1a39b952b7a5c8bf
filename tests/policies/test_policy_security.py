"""Security baseline rules (each names the Checkov check it re-implements in its metadata): baseline passes, one
field changed per case gives the exact message."""
from __future__ import annotations

import json
import re

import pytest

from tests.support.spec.edit import DELETE, edit, edits
from tests.support.policy.harness import Pack, baseline, fake, find, wire, with_props

NP, GC = "gcp:container/nodePool:NodePool", "gcp:container/cluster:Cluster"
NG, LT, EC = "aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate", "aws:eks/cluster:Cluster"
RELEASE = "kubernetes:helm.sh/v3:Release"
M = "mandatory"
UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's wire sentinel for "known at deploy"

SB_FIX = "Fix: set nodeConfig.shieldedInstanceConfig.enableSecureBoot: true (gpu-cluster sets it)"
CASES = [
    ("gcp", GC, "ml", "enableShieldedNodes", False, [(
        "security-gke-shielded-nodes", M,
        "cluster 'ml': Shielded GKE Nodes are turned off · observed: enableShieldedNodes false · required: true "
        "(or unset)\nFix: set enableShieldedNodes: true (gpu-cluster sets it)")]),
    ("gcp", NP, "h100", "nodeConfig.shieldedInstanceConfig.enableSecureBoot", False, [(
        "security-gke-secure-boot", M,
        "pool 'h100': Secure Boot is off, so unsigned boot components and kernel modules load · observed: "
        "nodeConfig.shieldedInstanceConfig.enableSecureBoot false · required: true\nFix: set "
        "nodeConfig.shieldedInstanceConfig.enableSecureBoot: true (gpu-cluster sets it)")]),
    ("gcp", NP, "h100", "nodeConfig.workloadMetadataConfig.mode", 'GCE_METADATA', [(
        "security-gke-metadata-server", M,
        "pool 'h100': pods can read the node's metadata and credentials · observed: "
        "nodeConfig.workloadMetadataConfig.mode GCE_METADATA · required: GKE_METADATA\nFix: set "
        "nodeConfig.workloadMetadataConfig.mode: GKE_METADATA (gpu-cluster sets it) and give pods Workload Identity")]),
    ("gcp", GC, "ml", "nodeConfig.workloadMetadataConfig", DELETE, [(
        "security-gke-metadata-server", M,
        "cluster 'ml' (default node config): pods can read the node's metadata and credentials · observed: "
        "nodeConfig.workloadMetadataConfig.mode unset · required: GKE_METADATA\nFix: set "
        "nodeConfig.workloadMetadataConfig.mode: GKE_METADATA (gpu-cluster sets it) and give pods Workload Identity")]),
    ("gcp", NP, "h100", "management.autoRepair", False, [(
        "security-gke-auto-repair", M,
        "pool 'h100': auto-repair is off, so broken GPU nodes are never replaced · observed: "
        "management.autoRepair false · required: true\nFix: set management.autoRepair: true (gpu-cluster sets it)")]),
    ("gcp", NP, "h100", "management.autoUpgrade", False, [(
        "security-gke-auto-upgrade", M,
        "pool 'h100': auto-upgrade is off, so nodes miss kernel, containerd and driver fixes · observed: "
        "management.autoUpgrade false · required: true\nFix: set management.autoUpgrade: true (gpu-cluster sets "
        "it; upgrades follow maxSurge/maxUnavailable)")]),
    ("gcp", NP, "h100", "nodeConfig.serviceAccount", '123456789-compute@developer.gserviceaccount.com', [(
        "security-gke-node-service-account", M,
        "pool 'h100': nodes run as the Compute Engine default service account, which has Editor on the project "
        "· observed: nodeConfig.serviceAccount 123456789-compute@developer.gserviceaccount.com · required: a "
        "dedicated service account with only roles/container.defaultNodeServiceAccount (plus registry "
        "read)\nFix: set nodeConfig.serviceAccount to a dedicated account (gpu-cluster creates one per pool)")]),
    ("gcp", NP, "h100", "nodeConfig.serviceAccount", UNKNOWN_STRING, []),  # created in this stack: not the default
    ("gcp", GC, "ml", "privateClusterConfig.enablePrivateNodes", False, [(
        "security-gke-private-nodes", M,
        "cluster 'ml': nodes get public IP addresses · observed: privateClusterConfig.enablePrivateNodes false "
        "· required: true\nFix: set privateClusterConfig.enablePrivateNodes: true (gpu-cluster sets it) and "
        "reach the internet through Cloud NAT")]),
    ("gcp", NP, "h100", "networkConfig.enablePrivateNodes", False, [(
        "security-gke-private-nodes", M,
        "pool 'h100': the pool overrides the cluster and gives its nodes public IP addresses · observed: "
        "networkConfig.enablePrivateNodes false · required: true (or unset)\nFix: remove "
        "networkConfig.enablePrivateNodes from the pool")]),
    ("aws", LT, "p5-lt", "metadataOptions.httpTokens", 'optional', [(
        "security-eks-imdsv2", M,
        "pool 'p5' (launch template 'p5-lt'): instances accept IMDSv1 requests, which SSRF can forge · "
        "observed: metadataOptions.httpTokens optional · required: required (IMDSv2 session tokens only)\nFix: "
        "set metadataOptions.httpTokens: required (gpu-cluster sets it)")]),
    ("aws", NG, "p5", "launchTemplate", DELETE, [(
        "security-eks-imdsv2", M,
        "pool 'p5': the node group has no launch template, so its nodes use the EKS default settings and cannot "
        "be held to IMDSv2 · observed: launchTemplate unset · required: a launch template with "
        "metadataOptions.httpTokens: required\nFix: give the node group a launch template (gpu-cluster creates "
        "one per pool)")]),
    ("aws", LT, "p5-lt", "metadataOptions.httpPutResponseHopLimit", 2, [(
        "security-eks-imds-hop-limit", M,
        "pool 'p5' (launch template 'p5-lt'): pods can reach the node's metadata credentials · observed: "
        "metadataOptions.httpPutResponseHopLimit 2 · required: at most 1, from maxHopLimit\nFix: set "
        "metadataOptions.httpPutResponseHopLimit: 1 and give pods their own role with EKS Pod Identity or IRSA")]),
    ("aws", LT, "p5-lt", "metadataOptions.httpPutResponseHopLimit", DELETE, [(
        "security-eks-imds-hop-limit", M,
        "pool 'p5' (launch template 'p5-lt'): pods can reach the node's metadata credentials · observed: "
        "metadataOptions.httpPutResponseHopLimit unset (AL2023 EKS AMIs then answer at 2 hops) · required: at "
        "most 1, from maxHopLimit\nFix: set metadataOptions.httpPutResponseHopLimit: 1 and give pods their own "
        "role with EKS Pod Identity or IRSA")]),
    ("aws", EC, "ml", "enabledClusterLogTypes", ['api', 'audit'], [(
        "security-eks-control-plane-logs", M,
        "cluster 'ml': control-plane log types authenticator, controllerManager, scheduler are off, so who did "
        "what cannot be investigated · observed: enabledClusterLogTypes [api, audit] · required: all of api, "
        "audit, authenticator, controllerManager, scheduler, from requiredLogTypes\nFix: add the missing types "
        "to enabledClusterLogTypes (gpu-cluster enables all five)")]),
    ("gcp", GC, "ml", "databaseEncryption", DELETE, [(
        "security-gke-secrets-encryption", M,
        "cluster 'ml': Kubernetes Secrets are stored with only Google's default encryption at rest, not encrypted "
        "with a key you control · observed: databaseEncryption.state unset · required: databaseEncryption.state "
        "ENCRYPTED with a Cloud KMS keyName\nFix: set databaseEncryption {state: ENCRYPTED, keyName: <CryptoKey in "
        "the cluster's region>} and grant the GKE service agent roles/cloudkms.cryptoKeyEncrypterDecrypter on it "
        "(gpu-cluster creates the key ring, a rotating key and the grant)")]),
    ("aws", EC, "ml", "encryptionConfig", DELETE, [(
        "security-eks-secrets-encryption", M,
        "cluster 'ml': Kubernetes Secrets are not envelope-encrypted with a KMS key · observed: "
        "encryptionConfig.resources unset · required: includes secrets\nFix: set encryptionConfig "
        "{provider.keyArn, resources: [secrets]} with a rotating KMS key (gpu-cluster creates one)")]),
]


def observed(message: str) -> str:
    """The observed value of a violation message, without the ``, which is published upstream`` tail."""
    return message.split(" · observed: ")[1].split(" · ")[0].split(",")[0]


@pytest.fixture(scope="module")
def pack() -> Pack:
    p = Pack()
    p.configure()
    return p


@pytest.mark.parametrize("cloud,type_,name,path,value,expected", CASES,
                         ids=[f"{c[2]}.{c[3]}={c[4] if c[4] is not DELETE else 'unset'}" for c in CASES])
def test_one_field_changed(pack, cloud, type_, name, path, value, expected):
    rs = baseline(cloud)
    r = find(rs, type_, name)
    assert pack.resource(r, rs) == []  # the baseline passes ...
    assert pack.resource(with_props(r, edit(wire(r), path, value)), rs) == expected  # ... one change fails


FAILING = [c for c in CASES if c[5]]


@pytest.mark.parametrize("cloud,type_,name,path,value,expected", FAILING,
                         ids=[f"{c[5][0][0]}:{c[2]}.{c[3]}" for c in FAILING])
def test_a_waiver_naming_the_rule_and_the_pool_or_cluster_silences_it(pack, cloud, type_, name, path, value,
                                                                     expected):
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
    own = edits(wire(pool), {
        "nodeConfig.shieldedInstanceConfig": DELETE,
        "nodeConfig.guestAccelerators[0].gpuDriverInstallationConfig.gpuDriverVersion": "INSTALLATION_DISABLED"})
    assert pack.resource(with_props(pool, own), rs) == [(
        "security-gke-secure-boot", M, "pool 'h100': Secure Boot is off, so unsigned boot components and kernel "
        "modules load · observed: nodeConfig.shieldedInstanceConfig.enableSecureBoot unset (off) · required: true\n"
        f"{SB_FIX}; this pool installs its own driver (INSTALLATION_DISABLED): if the GPU Operator compiles it, Secure "
        "Boot rejects the unsigned module, so waive security-gke-secure-boot for this pool with that reason instead")]
    waiver = {"rule": "security-gke-secure-boot", "resource": "h100",
              "reason": "GPU Operator compiles the driver on Ubuntu nodes"}
    pack.configure({"security-gke-secure-boot": {"waivers": [waiver]}})
    try:
        assert pack.resource(with_props(pool, own), rs) == []
    finally:
        pack.configure()


def release(values: dict, name: str = "slurm") -> object:
    return fake(RELEASE, name, {"chart": "slurm", "version": "0.4.0", "namespace": "slurm", "values": values})


def test_helm_values_without_literal_credentials_pass(pack):
    refs = {"accounting": {"storageConfig": {"passwordKeyRef": {"name": "db", "key": "password"}}},
            "slurmKey": {"secretRef": {"name": "slurm-key"}}, "auth": {"existingSecret": "auth", "tokenTtl": "1h"},
            "secretName": "x", "tokenPath": "/var/run/token", "passwordEnabled": "true"}
    assert pack.resource(release(refs)) == []


def test_helm_literal_credentials_are_refused_without_showing_them(pack):
    values = {"accounting": {"storageConfig": {"password": "hunter2-but-longer"}}, "jwt": {"token": "abc.def"},
              "tls": {"key": "-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----"}}
    diags = pack.resource(release(values))
    assert diags == [(
        "security-helm-plaintext-secrets", M, "Helm release 'slurm' (chart slurm): values keys hold literal "
        "credentials, which Pulumi stores in state and which have leaked into outputs (pulumi/pulumi#9781) · "
        "observed: values.accounting.storageConfig.password, values.jwt.token, values.tls.key (values not shown) · "
        "required: credentials come from a Kubernetes Secret the chart references (existingSecret, secretRef, "
        "passwordKeyRef)\nFix: create the Secret from a Pulumi config secret or pulumi_random value, point the chart "
        "at it and remove the literal (or list a false positive in ignoredPaths)")]
    assert "hunter2" not in diags[0][2]
    pack.configure({"security-helm-plaintext-secrets": {"ignoredPaths": ["values.jwt.token"]}})
    try:
        assert "values.jwt.token" not in pack.resource(release(values))[0][2]
    finally:
        pack.configure()


def test_known_default_credentials_are_refused_in_values_configmaps_and_secrets(pack):
    dex = "$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72"
    diags = pack.resource(release({"dex": {"config": f"staticPasswords:\n- email: user@example.com\n  hash: {dex}\n"}},
                                  name="kubeflow"))
    assert diags == [(
        "security-default-credentials", "mandatory", "Helm release 'kubeflow' (chart slurm): a publicly known default "
        "credential is deployed, so anyone who knows it can log in · observed: values.dex.config is the Kubeflow Dex "
        "password hash of user@example.com / 12341234, which is published upstream · required: a credential "
        "generated for this deployment\nFix: generate it (pulumi_random.RandomPassword; bcrypt it for Dex), keep it "
        "in a Secret and reference that")]
    cookie = fake("kubernetes:core/v1:Secret", "oauth2", {"metadata": {"name": "oauth2-proxy"},
                                                          "data": {"cookie": "N2QxNmZlZTkyZjhkMTFiODk0MGIwODFiM2Y4YjhhY2I="}})
    assert [observed(d[2]) for d in pack.resource(cookie)] == [
        "data.cookie is the Kubeflow oauth2-proxy cookie secret"]
    grafana = fake("kubernetes:core/v1:ConfigMap", "grafana", {"data": {"adminPassword": "prom-operator"}})
    assert [d[0] for d in pack.resource(grafana)] == ["security-default-credentials"]
    assert pack.resource(fake("kubernetes:core/v1:ConfigMap", "ok", {"data": {"adminPassword": "prom-operator-2"}})) == []


SECRET_T = "kubernetes:core/v1:Secret"


def test_the_katib_and_pipelines_defaults_are_refused_in_their_upstream_secrets(pack):
    """The credentials the Katib/Pipelines rewrites replace are the pack's too (one list, catalog/known_defaults.py):
    under the CLI each Secret of the kustomize Directory is analysed, so a rewrite that stops matching is refused."""
    from tests.support.kube.upstream_manifests import KATIB_SECRET, MINIO_SECRET, MYSQL_SECRET
    seen = [(d[2].split(":")[0], observed(d[2])) for doc in (KATIB_SECRET, MINIO_SECRET, MYSQL_SECRET)
            for d in pack.resource(fake(SECRET_T, doc["metadata"]["name"], doc))]
    assert seen == [
        ("Secret 'katib-mysql-secrets'", "data.MYSQL_ROOT_PASSWORD is the Katib MySQL root password"),
        ("Secret 'mlpipeline-minio-artifact'", "stringData.accesskey is the Kubeflow Pipelines MinIO access key"),
        ("Secret 'mlpipeline-minio-artifact'", "stringData.secretkey is the Kubeflow Pipelines MinIO secret key"),
        ("Secret 'mysql-secret'", "stringData.password is the empty Kubeflow Pipelines MySQL root password")]
    # short and empty defaults count only in their Secret and key: elsewhere they are ordinary words
    assert pack.resource(fake("kubernetes:core/v1:ConfigMap", "env", {"data": {"stage": "test", "host": "minio"}})) == []
    assert pack.resource(fake(SECRET_T, "app", {"metadata": {"name": "app"}, "stringData": {"password": ""}})) == []
    generated = {**MYSQL_SECRET, "stringData": {"username": "root", "password": "x7Gq2mZ0pL9sW4vB8nK1cR6tY3hJ5dFa"}}
    assert pack.resource(fake(SECRET_T, "mysql-secret", generated)) == []


def test_the_pack_and_the_manifest_rewrites_read_one_list_of_defaults():
    from components.k8s.manifest_secrets import KNOWN_DEFAULT_CREDENTIALS
    from policies.rules.security_default_credentials import RULE
    from catalog.known_defaults import KNOWN_DEFAULTS
    assert RULE.defaults()["knownDefaults"] == [d.as_config() for d in KNOWN_DEFAULTS]
    assert KNOWN_DEFAULT_CREDENTIALS == {"katib-mysql-secrets": {"MYSQL_ROOT_PASSWORD": "test"},
                                         "mlpipeline-minio-artifact": {"accesskey": "minio", "secretkey": "minio123"},
                                         "mysql-secret": {"password": ""}}


def test_a_short_default_needs_a_secret_and_key_in_the_pack_config(pack):
    from preview.policy.config import PolicyConfigError, parse_config_text, reconcile
    bad = {"security-default-credentials": {"knownDefaults": [{"value": "", "what": "an empty password"}]}}
    with pytest.raises(PolicyConfigError) as exc:
        reconcile(pack.info, parse_config_text(json.dumps(bad), "org.json"), "org.json")
    assert exc.value.issues[0].path.startswith("org.json: security-default-credentials.knownDefaults.0")
    scoped = {"security-default-credentials": {"knownDefaults": [
        {"value": "", "what": "our empty DB password", "secret": "db", "key": "password"}]}}
    reconcile(pack.info, parse_config_text(json.dumps(scoped), "org.json"), "org.json")  # accepted


def test_credential_rules_are_waived_per_release_or_object(pack, waived):
    literal = release({"auth": {"password": "hunter2-but-longer"}})
    assert waived(pack, "security-helm-plaintext-secrets", "slurm", lambda: pack.resource(literal)) == []
    grafana = fake("kubernetes:core/v1:ConfigMap", "grafana", {"data": {"adminPassword": "prom-operator"}})
    assert waived(pack, "security-default-credentials", "grafana", lambda: pack.resource(grafana)) == []
