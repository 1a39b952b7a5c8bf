"""Credential rules of the security baseline: literal credentials in Helm values and publicly known default
credentials in values, ConfigMaps and Secrets are refused without being shown, from one list of defaults shared with
the manifest rewrites; each rule is waived per release or object."""

from __future__ import annotations

import json

import pytest

from tests.support.policy.harness import Pack, fake

RELEASE = "kubernetes:helm.sh/v3:Release"
M = "mandatory"


def observed(message: str) -> str:
    """The observed value of a violation message, without the ``, which is published upstream`` tail."""
    return message.split(" · observed: ")[1].split(" · ")[0].split(",")[0]


@pytest.fixture(scope="module")
def pack() -> Pack:
    p = Pack()
    p.configure()
    return p


def release(values: dict, name: str = "slurm") -> object:
    return fake(RELEASE, name, {"chart": "slurm", "version": "0.4.0", "namespace": "slurm", "values": values})


def test_helm_values_without_literal_credentials_pass(pack):
    refs = {
        "accounting": {"storageConfig": {"passwordKeyRef": {"name": "db", "key": "password"}}},
        "slurmKey": {"secretRef": {"name": "slurm-key"}},
        "auth": {"existingSecret": "auth", "tokenTtl": "1h"},
        "secretName": "x",
        "tokenPath": "/var/run/token",
        "passwordEnabled": "true",
    }
    assert pack.resource(release(refs)) == []


def test_helm_literal_credentials_are_refused_without_showing_them(pack):
    values = {
        "accounting": {"storageConfig": {"password": "hunter2-but-longer"}},
        "jwt": {"token": "abc.def"},
        "tls": {"key": "-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----"},
    }
    diags = pack.resource(release(values))
    assert diags == [
        (
            "security-helm-plaintext-secrets",
            M,
            "Helm release 'slurm' (chart slurm): values keys hold literal "
            "credentials, which Pulumi stores in state and which have leaked into outputs (pulumi/pulumi#9781) · "
            "observed: values.accounting.storageConfig.password, values.jwt.token, values.tls.key (values not shown) · "
            "required: credentials come from a Kubernetes Secret the chart references (existingSecret, secretRef, "
            "passwordKeyRef)\nFix: create the Secret from a Pulumi config secret or pulumi_random value, point the chart "
            "at it and remove the literal (or list a false positive in ignoredPaths)",
        )
    ]
    assert "hunter2" not in diags[0][2]
    pack.configure({"security-helm-plaintext-secrets": {"ignoredPaths": ["values.jwt.token"]}})
    try:
        assert "values.jwt.token" not in pack.resource(release(values))[0][2]
    finally:
        pack.configure()


def test_known_default_credentials_are_refused_in_values_configmaps_and_secrets(pack):
    dex = "$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72"
    diags = pack.resource(
        release({"dex": {"config": f"staticPasswords:\n- email: user@example.com\n  hash: {dex}\n"}}, name="kubeflow")
    )
    assert diags == [
        (
            "security-default-credentials",
            "mandatory",
            "Helm release 'kubeflow' (chart slurm): a publicly known default "
            "credential is deployed, so anyone who knows it can log in · observed: values.dex.config is the Kubeflow Dex "
            "password hash of user@example.com / 12341234, which is published upstream · required: a credential "
            "generated for this deployment\nFix: generate it (pulumi_random.RandomPassword; bcrypt it for Dex), keep it "
            "in a Secret and reference that",
        )
    ]
    cookie = fake(
        "kubernetes:core/v1:Secret",
        "oauth2",
        {"metadata": {"name": "oauth2-proxy"}, "data": {"cookie": "N2QxNmZlZTkyZjhkMTFiODk0MGIwODFiM2Y4YjhhY2I="}},
    )
    assert [observed(d[2]) for d in pack.resource(cookie)] == ["data.cookie is the Kubeflow oauth2-proxy cookie secret"]
    grafana = fake("kubernetes:core/v1:ConfigMap", "grafana", {"data": {"adminPassword": "prom-operator"}})
    assert [d[0] for d in pack.resource(grafana)] == ["security-default-credentials"]
    assert (
        pack.resource(fake("kubernetes:core/v1:ConfigMap", "ok", {"data": {"adminPassword": "prom-operator-2"}})) == []
    )


SECRET_T = "kubernetes:core/v1:Secret"


def test_the_katib_and_pipelines_defaults_are_refused_in_their_upstream_secrets(pack):
    """The credentials the Katib/Pipelines rewrites replace are the pack's too (one list, catalog/known_defaults.py):
    under the CLI each Secret of the kustomize Directory is analysed, so a rewrite that stops matching is refused."""
    from tests.support.kube.upstream_manifests import KATIB_SECRET, MINIO_SECRET, MYSQL_SECRET

    seen = [
        (d[2].split(":")[0], observed(d[2]))
        for doc in (KATIB_SECRET, MINIO_SECRET, MYSQL_SECRET)
        for d in pack.resource(fake(SECRET_T, doc["metadata"]["name"], doc))
    ]
    assert seen == [
        ("Secret 'katib-mysql-secrets'", "data.MYSQL_ROOT_PASSWORD is the Katib MySQL root password"),
        ("Secret 'mlpipeline-minio-artifact'", "stringData.accesskey is the Kubeflow Pipelines MinIO access key"),
        ("Secret 'mlpipeline-minio-artifact'", "stringData.secretkey is the Kubeflow Pipelines MinIO secret key"),
        ("Secret 'mysql-secret'", "stringData.password is the empty Kubeflow Pipelines MySQL root password"),
    ]
    # short and empty defaults count only in their Secret and key: elsewhere they are ordinary words
    assert (
        pack.resource(fake("kubernetes:core/v1:ConfigMap", "env", {"data": {"stage": "test", "host": "minio"}})) == []
    )
    assert pack.resource(fake(SECRET_T, "app", {"metadata": {"name": "app"}, "stringData": {"password": ""}})) == []
    generated = {**MYSQL_SECRET, "stringData": {"username": "root", "password": "x7Gq2mZ0pL9sW4vB8nK1cR6tY3hJ5dFa"}}
    assert pack.resource(fake(SECRET_T, "mysql-secret", generated)) == []


def test_the_pack_and_the_manifest_rewrites_read_one_list_of_defaults():
    from components.k8s.manifest_secrets import KNOWN_DEFAULT_CREDENTIALS
    from policies.rules.security_default_credentials import RULE
    from catalog.known_defaults import KNOWN_DEFAULTS

    assert RULE.defaults()["knownDefaults"] == [d.as_config() for d in KNOWN_DEFAULTS]
    assert KNOWN_DEFAULT_CREDENTIALS == {
        "katib-mysql-secrets": {"MYSQL_ROOT_PASSWORD": "test"},
        "mlpipeline-minio-artifact": {"accesskey": "minio", "secretkey": "minio123"},
        "mysql-secret": {"password": ""},
    }


def test_a_short_default_needs_a_secret_and_key_in_the_pack_config(pack):
    from preview.policy.config import PolicyConfigError, parse_config_text, reconcile

    bad = {"security-default-credentials": {"knownDefaults": [{"value": "", "what": "an empty password"}]}}
    with pytest.raises(PolicyConfigError) as exc:
        reconcile(pack.info, parse_config_text(json.dumps(bad), "org.json"), "org.json")
    assert exc.value.issues[0].path.startswith("org.json: security-default-credentials.knownDefaults.0")
    scoped = {
        "security-default-credentials": {
            "knownDefaults": [{"value": "", "what": "our empty DB password", "secret": "db", "key": "password"}]
        }
    }
    reconcile(pack.info, parse_config_text(json.dumps(scoped), "org.json"), "org.json")  # accepted


def test_credential_rules_are_waived_per_release_or_object(pack, waived):
    literal = release({"auth": {"password": "hunter2-but-longer"}})
    assert waived(pack, "security-helm-plaintext-secrets", "slurm", lambda: pack.resource(literal)) == []
    grafana = fake("kubernetes:core/v1:ConfigMap", "grafana", {"data": {"adminPassword": "prom-operator"}})
    assert waived(pack, "security-default-credentials", "grafana", lambda: pack.resource(grafana)) == []
