"""SlurmCluster as the program registers it: structure, pinned charts, values valid for the pinned charts (keys
against their values.yaml, the NodeSet against its CRD, the slurmd pod against the Kubernetes schema), NodeSets on
their pools, and secrets that stay secret."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import kubernetes_validate
import jsonschema
import pytest
import yaml
from pulumi.runtime import rpc

from catalog.image_digests import DEPLOY_DIGEST
from components.charts import SLURM, SLURM_CHARTS, SLURM_OPERATOR
from preview.engine import Recording, run_program
from preview.mocks.cloud import fake_random_bytes
from preview.run import preview_config
from tests.conftest import require_shared
from tests.support.spec.edit import DELETE, edit
from tests.support.helm.values import helm_merge, unknown_keys
from tests.support.kube.schema import K8S_VERSION
from tests.support.preview.recorded import of_type, one, parent_of
from tests.support.slurm.configs import EKS_ZONES, GKE_NO_ACCOUNTING, slurm_configs
from tests.support.spec.stack_configs import GKE

RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:Secret"


@pytest.fixture(scope="module")
def gke512() -> Recording:
    return run_program(slurm_configs()["gke-h100-512"], stack="gke-h100-512")


def _defaults(pin) -> dict[str, Any]:
    return yaml.safe_load(require_shared("schemas", pin.default_values).read_text())


def _crd_schema(kind_file: str) -> dict[str, Any]:
    doc = yaml.safe_load(require_shared("schemas", "slurm-operator/v1.2.1/config/crd/bases", kind_file).read_text())
    return doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_component_tree_types_names_and_parents(gke512):
    cluster = one(gke512, "gpu-cluster:slurm:SlurmCluster", "slurm")
    for type_, name in [
        (RELEASE, "slurm-operator"),
        (RELEASE, "slurm-slurm"),
        ("kubernetes:core/v1:Namespace", "slurm-ns"),
        ("gpu-cluster:slurm:SlurmSecrets", "slurm-secrets"),
        ("gpu-cluster:slurm:SlurmDatabase", "slurm-database"),
        ("gpu-cluster:slurm:SlurmAccounts", "slurm-accounts"),
    ]:
        assert parent_of(gke512, one(gke512, type_, name)).urn == cluster.urn, name
    ns = one(gke512, "kubernetes:core/v1:Namespace", "slurm-ns").inputs["metadata"]
    assert ns["name"] == "slurm" and ns["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    op_ns = one(gke512, "kubernetes:core/v1:Namespace", "slurm-operator-ns").inputs["metadata"]
    assert op_ns["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"


def test_charts_are_the_pinned_oci_charts_and_the_slurm_release_waits_for_the_operator(gke512):
    op, slurm = one(gke512, RELEASE, "slurm-operator"), one(gke512, RELEASE, "slurm-slurm")
    assert (op.inputs["chart"], op.inputs["version"]) == ("oci://ghcr.io/slinkyproject/charts/slurm-operator", "1.2.1")
    assert (slurm.inputs["chart"], slurm.inputs["version"]) == ("oci://ghcr.io/slinkyproject/charts/slurm", "1.2.1")
    # the operator (it reads the Slurm keys) and its webhook (its serving key) by the digest resolved at deploy
    assert op.inputs["values"] == {
        "crds": {"enabled": True},
        "certManager": {"enabled": False},
        **{
            part: {"image": {"repository": f"ghcr.io/slinkyproject/{image}", "digest": DEPLOY_DIGEST}}
            for part, image in (("operator", "slurm-operator"), ("webhook", "slurm-operator-webhook"))
        },
    }
    assert op.urn in slurm.dependencies
    # depends_on a component waits for its children: the key Secrets and the database exist before the cluster
    for type_, dep in (
        (SECRET, "slurm-secrets-slurm-key"),
        ("kubernetes:apps/v1:StatefulSet", "slurm-database-statefulset"),
    ):
        assert one(gke512, type_, dep).urn in slurm.dependencies, dep
    assert {p.version for p in SLURM_CHARTS} == {"1.2.1"}
    chart = yaml.safe_load(require_shared("schemas", "slurm-operator/v1.2.1/helm/slurm/Chart.yaml").read_text())
    assert (chart["version"], chart["appVersion"]) == (SLURM.version, "26.05")


def test_values_are_known_to_the_pinned_charts(gke512):
    for pin, name in ((SLURM_OPERATOR, "slurm-operator"), (SLURM, "slurm-slurm")):
        values = copy.deepcopy(one(gke512, RELEASE, name).redacted_inputs["values"])
        values.pop("partitions", None)  # a map keyed by partition name (values.yaml: map[string]object), below
        if name == "slurm-slurm":  # scaling: the chart passes podSpec (corev1.PodSpec) and the container through
            controller = values["controller"]
            assert (
                controller["podSpec"].pop("serviceAccountName"),
                controller["podSpec"].pop("volumes")[0]["name"],
                controller.pop("slurmctld")["volumeMounts"][0]["mountPath"],
            ) == ("slurm-scaler", "scaling-programs", "/usr/local/lib/gpu-cluster")
        assert unknown_keys(values, _defaults(pin)) == [], name
    values = one(gke512, RELEASE, "slurm-slurm").redacted_inputs["values"]
    defaults = _defaults(SLURM)
    for key, nodeset in values["nodesets"].items():
        selector = nodeset["podSpec"]["nodeSelector"]  # map[string]string: any label keys
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in selector.items())
        assert (
            unknown_keys(edit(nodeset, "podSpec.nodeSelector", DELETE), defaults["nodesetDefaults"], f"nodesets.{key}")
            == []
        )
    for key, part in values["partitions"].items():
        assert unknown_keys(part, defaults["partitions"]["all"], f"partitions.{key}") == []


def _nodeset_cr(key: str, nodeset: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The NodeSet object the chart renders from ``nodesetDefaults`` + our entry (templates/nodeset/nodeset-cr.yaml)."""
    ns = helm_merge(defaults["nodesetDefaults"], nodeset)
    slurmd = {
        **ns["slurmd"],
        "image": f"{ns['slurmd']['image']['repository']}:{ns['slurmd']['image']['tag']}",
        "imagePullPolicy": "IfNotPresent",
    }
    logfile = {**ns["logfile"], "image": "docker.io/library/alpine:latest"}
    spec = {
        "controllerRef": {"name": "slurm", "namespace": "slurm"},
        "extraConf": ns["extraConf"],
        "partition": {"enabled": ns["partition"]["enabled"]},
        "scalingMode": ns["scalingMode"],
        "replicas": ns["replicas"],
        "slurmd": slurmd,
        "logfile": logfile,
        "template": {"spec": {**ns["podSpec"], "hostname": f"{key}-"}},
        "updateStrategy": ns["updateStrategy"],
        "ordinalPadding": ns["ordinalPadding"],
        "pinToNode": ns["pinToNode"],
        "workloadDisruptionProtection": ns["workloadDisruptionProtection"],
        "pruneSlurmNodeRecords": ns["pruneSlurmNodeRecords"],
    }
    return {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "NodeSet",
        "metadata": {"name": f"slurm-worker-{key}", "namespace": "slurm"},
        "spec": spec,
    }


def test_nodesets_validate_against_the_nodeset_crd_and_the_pod_schema(gke512):
    values = one(gke512, RELEASE, "slurm-slurm").redacted_inputs["values"]
    defaults, schema = _defaults(SLURM), _crd_schema("slinky.slurm.net_nodesets.yaml")
    for key, nodeset in values["nodesets"].items():
        cr = _nodeset_cr(key, nodeset, defaults)
        jsonschema.validate(cr, schema)
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{key}-0"},
            "spec": {
                **cr["spec"]["template"]["spec"],
                "containers": [
                    {
                        **{k: v for k, v in cr["spec"]["slurmd"].items() if k != "image"},
                        "name": "slurmd",
                        "image": cr["spec"]["slurmd"]["image"],
                    }
                ],
            },
        }
        kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


def test_a_broken_nodeset_is_refused_by_the_crd_schema(gke512):
    """The CRD check is real: a partition without `enabled` fails it."""
    values = one(gke512, RELEASE, "slurm-slurm").redacted_inputs["values"]
    cr = _nodeset_cr("h100-mega", values["nodesets"]["h100-mega"], _defaults(SLURM))
    del cr["spec"]["partition"]["enabled"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(cr, _crd_schema("slinky.slurm.net_nodesets.yaml"))


def test_each_nodeset_is_pinned_to_its_pool_with_the_gpu_toleration_and_all_its_gpus(gke512):
    values = one(gke512, RELEASE, "slurm-slurm").redacted_inputs["values"]
    # l4-eval (0-8 nodes) follows the queue: its NodeSet starts at minNodes, Slurm power saving scales it
    expected = {"h100-mega": (64, "8", "gpu:h100:8"), "l4-eval": (0, "2", "gpu:l4:2")}
    assert set(values["nodesets"]) == set(expected)
    for pool, (replicas, gpus, gres) in expected.items():
        ns = values["nodesets"][pool]
        assert ns["replicas"] == replicas
        assert ns["podSpec"]["nodeSelector"]["gpu-cluster/pool"] == pool
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in ns["podSpec"]["tolerations"]
        res = ns["slurmd"]["resources"]
        assert res["requests"]["nvidia.com/gpu"] == res["limits"]["nvidia.com/gpu"] == gpus
        assert f"Gres={gres}" in ns["extraConf"].split(" ")
    assert values["nodesets"]["h100-mega"]["extraConf"] == "CPUs=195 Gres=gpu:h100:8 RealMemory=1763328"
    assert values["nodesets"]["h100-mega"]["slurmd"]["resources"]["requests"]["memory"] == "1722Gi"


def test_pool_taints_become_nodeset_tolerations():
    cfg = edit(GKE_NO_ACCOUNTING, "nodePools[1].taints", [{"key": "team", "value": "eval", "effect": "NoSchedule"}])
    values = one(run_program(cfg), RELEASE, "slurm-slurm").redacted_inputs["values"]
    assert {"key": "team", "operator": "Equal", "value": "eval", "effect": "NoSchedule"} in values["nodesets"]["l4"][
        "podSpec"
    ]["tolerations"]
    assert len(values["nodesets"]["h100"]["podSpec"]["tolerations"]) == 1


def test_keys_come_from_pulumi_secrets_and_the_chart_never_generates_them(gke512):
    values = one(gke512, RELEASE, "slurm-slurm").redacted_inputs["values"]
    assert values["slurmKey"] == {"create": False, "secretRef": {"name": "slurm-auth-slurm", "key": "slurm.key"}}
    assert values["jwtKey"] == {"create": False, "secretRef": {"name": "slurm-auth-jwt", "key": "jwt_hs256.key"}}
    assert values["accounting"]["storageConfig"]["passwordKeyRef"] == {"name": "slurm-db-password", "key": "password"}
    secrets = {r.name: r for r in of_type(gke512, SECRET)}
    assert set(secrets) >= {
        "slurm-secrets-slurm-key",
        "slurm-secrets-jwt-key",
        "slurm-secrets-db-password",
        "slurm-secrets-db-root-password",
    }
    for name in ("slurm-secrets-slurm-key", "slurm-secrets-jwt-key"):
        assert rpc.is_rpc_secret(secrets[name].inputs["data"]), name
        assert secrets[name].protect
    for name in ("slurm-secrets-db-password", "slurm-secrets-db-root-password"):
        assert rpc.is_rpc_secret(secrets[name].inputs["stringData"]), name
        assert secrets[name].protect
    assert secrets["slurm-secrets-db-root-password"].inputs["metadata"]["name"] == "slurm-db-root-password"
    key = one(gke512, "random:index/randomBytes:RandomBytes", "slurm-secrets-slurm-key")
    assert key.inputs["length"] == 1024


def _plaintexts() -> list[str]:
    slurm_key = fake_random_bytes("slurm-secrets-slurm-key", 1024)
    jwt_key = fake_random_bytes("slurm-secrets-jwt-key", 64)
    return [
        base64.b64encode(slurm_key).decode(),
        base64.b64encode(jwt_key).decode(),
        fake_random_bytes("slurm-secrets-db-password", 32).hex()[:32],
        fake_random_bytes("slurm-secrets-db-root-password", 32).hex()[:32],
    ]


def _strings_outside_secrets(value: Any) -> list[str]:
    if rpc.is_rpc_secret(value):
        return []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings_outside_secrets(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings_outside_secrets(v)]
    return [value] if isinstance(value, str) else []


def _strings_inside_secrets(value: Any, inside: bool = False) -> list[str]:
    if rpc.is_rpc_secret(value):
        return _strings_inside_secrets(value.get("value"), True)
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings_inside_secrets(v, inside)]
    if isinstance(value, list):
        return [s for v in value for s in _strings_inside_secrets(v, inside)]
    return [value] if inside and isinstance(value, str) else []


def test_no_generated_key_or_password_is_plaintext_anywhere(gke512):
    consumers = [r for r in gke512.resources if not r.type.startswith("random:")]
    plain = [s for r in consumers for s in _strings_outside_secrets(r.inputs)]
    wrapped = [s for r in consumers for s in _strings_inside_secrets(r.inputs)]
    outputs = json.dumps(gke512.outputs, default=str)
    for value in _plaintexts():
        assert value in wrapped, "the secret never reached a consumer: the check would be vacuous"
        assert not any(value in s for s in plain), "a generated secret is in plaintext in recorded inputs"
        assert value not in outputs
    report = json.dumps(preview_config("gke-h100-512", slurm_configs()["gke-h100-512"]).as_dict(), default=str)
    assert not any(value in report for value in _plaintexts())
    assert "[secret]" in report


def test_accounting_adds_the_database_and_the_accounts_job(gke512):
    sts = one(gke512, "kubernetes:apps/v1:StatefulSet", "slurm-database-statefulset")
    assert sts.protect
    # deleting the namespace would delete the database's claim with it: protected as the StatefulSet is
    assert one(gke512, "kubernetes:core/v1:Namespace", "slurm-ns").protect
    spec = sts.inputs["spec"]
    assert spec["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "50Gi"
    container = spec["template"]["spec"]["containers"][0]
    assert "--innodb-snapshot-isolation=OFF" in container["args"]
    env = {e["name"]: e for e in container["env"]}
    assert env["MARIADB_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "slurm-db-password", "key": "password"}
    # the root password comes from its own Secret; MARIADB_RANDOM_ROOT_PASSWORD would print it to the pod log
    assert env["MARIADB_ROOT_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "slurm-db-root-password",
        "key": "password",
    }
    assert not {"MARIADB_RANDOM_ROOT_PASSWORD", "MARIADB_ALLOW_EMPTY_ROOT_PASSWORD"} & set(env)
    assert all("value" not in e for n, e in env.items() if "PASSWORD" in n), "a password as a literal env value"
    secrets = {r.name: r.urn for r in of_type(gke512, SECRET)}
    assert {secrets["slurm-secrets-db-password"], secrets["slurm-secrets-db-root-password"]} <= set(sts.dependencies)
    config = one(gke512, "kubernetes:core/v1:ConfigMap", "slurm-accounts-config").inputs["data"]
    assert "add account pretraining" in config["apply-accounts.sh"]
    assert "fairshare=3" in config["apply-accounts.sh"]
    assert "AccountingStorageHost=slurm-accounting" in config["slurm.conf"]
    job = one(gke512, "kubernetes:batch/v1:Job", "slurm-accounts-job")
    assert one(gke512, RELEASE, "slurm-slurm").urn in job.dependencies
    volumes = {v["name"]: v for v in job.inputs["spec"]["template"]["spec"]["volumes"]}
    sources = volumes["slurm-etc"]["projected"]["sources"]
    assert {"key": "slurm.key", "path": "slurm.key", "mode": 0o440} in sources[1]["secret"]["items"]


def test_without_accounting_there_is_no_database_password_or_job():
    rec = run_program(GKE_NO_ACCOUNTING)
    names = {r.name for r in rec.resources}
    assert "slurm-slurm" in names and "slurm-secrets-slurm-key" in names
    assert not names & {
        "slurm-database",
        "slurm-accounts",
        "slurm-secrets-db-password",
        "slurm-secrets-db-root-password",
    }
    values = one(rec, RELEASE, "slurm-slurm").redacted_inputs["values"]
    assert values["accounting"] == {"enabled": False}
    assert "PriorityWeightFairshare" not in values["controller"]["extraConf"]


def test_stacks_without_slurm_install_no_slurm():
    assert not [r for r in run_program(GKE).resources if "slurm" in r.type or r.name.startswith("slurm")]


def test_eks_stack_gets_the_same_component():
    rec = run_program(EKS_ZONES)
    values = one(rec, RELEASE, "slurm-slurm").redacted_inputs["values"]
    assert set(values["partitions"]) == {"all", "p5-a", "p5-b", "l4", "train"}
    assert values["partitions"]["train"]["config"].endswith("PriorityTier=3 Topology=zones")
