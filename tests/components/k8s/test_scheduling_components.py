"""The Kueue/Kubeflow path as the program registers it (under the recording engine): charts, objects, order,
providers, and no known default credential: neither in what the program registers nor in what the transforms attached
to the Katib/Pipelines kustomize Directories make of the upstream objects (which mocks never expand)."""

from __future__ import annotations

import asyncio
import json

import pulumi
import pytest
import yaml

from catalog.image_digests import DEPLOY_DIGEST
from components.charts import KATIB_MANIFESTS, KFP_MINIO_IMAGE, KUBEFLOW_PIPELINES_MANIFESTS, MANIFEST_MYSQL_IMAGE
from components.k8s.manifest_secrets import KNOWN_DEFAULT_CREDENTIALS
from policies.rule import Resource
from policies.rules import security_default_credentials as default_credentials
from preview.engine import install_mocks, restored_config_environment, run_program
from preview.mocks.cloud import fake_random_bytes
from render.kueue import render_kueue
from render.trainer import training_runtimes
from tests.support.spec.edit import DELETE, edit, edits
from tests.support.preview.recorded import offline_pinned, of_type, one, parent_of
from catalog.known_defaults import KNOWN_DEFAULTS
from tests.support.spec.scheduling_fixtures import EKS_TEAMS, GKE_TEAMS, flat_config, spec_and_facts
from tests.support.kube.upstream_manifests import KATIB_MYSQL_DEPLOYMENT, MINIO_DEPLOYMENT, MYSQL_DEPLOYMENT, UPSTREAM

KUEUE_TYPES = ("kubernetes:kueue.x-k8s.io/v1beta2:", "kubernetes:trainer.kubeflow.org/v1alpha1:")


@pytest.fixture(scope="module")
def gke():
    raw = edit(GKE_TEAMS, "scheduling.kubeflow", {"katib": True, "pipelines": True})
    return raw, run_program(flat_config(raw))


def _custom(rec):
    return [r for r in rec.resources if r.type.startswith(KUEUE_TYPES)]


def test_kueue_chart_is_pinned_and_carries_the_rendered_configuration(gke):
    _, rec = gke
    release = one(rec, "kubernetes:helm.sh/v3:Release", "kueue-chart")
    inputs = release.redacted_inputs
    assert (inputs["chart"], inputs["version"], inputs["name"], inputs["namespace"]) == (
        "oci://registry.k8s.io/kueue/charts/kueue",
        "0.19.2",
        "kueue",
        "kueue-system",
    )
    config = yaml.safe_load(inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"]["timeout"] == "900s"
    assert config["fairSharing"]["preemptionStrategies"] == ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
    assert inputs["values"]["controllerManager"]["replicas"] == 2
    assert parent_of(rec, release).type == "gpu-cluster:scheduling:Kueue"
    ns = one(rec, "kubernetes:core/v1:Namespace", "kueue-namespace")
    assert ns.urn in release.dependencies
    assert ns.redacted_inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_every_kueue_object_is_registered_as_rendered_after_the_chart(gke):
    raw, rec = gke
    spec, facts = spec_and_facts(raw)
    objects = render_kueue(spec.scheduling, facts)
    expected = {(o["kind"], o["metadata"]["name"]): o for o in objects.custom_resources()}
    recorded = {
        (r.type.rsplit(":", 1)[1], r.redacted_inputs["metadata"]["name"]): r
        for r in _custom(rec)
        if r.type.startswith(KUEUE_TYPES[0])
    }
    assert set(recorded) == set(expected)
    release = one(rec, "kubernetes:helm.sh/v3:Release", "kueue-chart")
    for key, r in recorded.items():
        assert r.redacted_inputs == expected[key], key
        assert release.urn in r.dependencies, f"{key} must wait for the CRDs and webhooks of the chart"
        assert parent_of(rec, r).type == "gpu-cluster:scheduling:Kueue"
        assert "ml-train-k8s" in r.provider, f"{key} must go through the cluster's Kubernetes provider"
    lq = recorded[("LocalQueue", "product")]
    ns = one(rec, "kubernetes:core/v1:Namespace", "kueue-ns-product-ml")
    assert ns.urn in lq.dependencies and lq.redacted_inputs["metadata"]["namespace"] == "product-ml"


def test_flavors_and_topologies_are_replaced_create_first_and_their_users_wait_for_them(gke):
    """Deleting a referenced flavor or topology first would hang on Kueue's resource-in-use finalizer: they take a
    new (content-hashed) name instead and keep Pulumi's create-before-delete; the Pulumi resource name stays the
    pool's, and what references them depends on them (created before, deleted after their users are repointed)."""
    _, rec = gke
    kinds = {
        k: of_type(rec, f"kubernetes:kueue.x-k8s.io/v1beta2:{k}")
        for k in ("Topology", "ResourceFlavor", "ClusterQueue", "LocalQueue")
    }
    assert kinds["Topology"] and kinds["ResourceFlavor"]
    assert not [r.name for k in ("Topology", "ResourceFlavor") for r in kinds[k] if r.delete_before_replace]
    assert all(r.delete_before_replace for r in kinds["LocalQueue"])  # fixed name (the queue's): no finalizer
    assert sorted(r.name for r in kinds["ResourceFlavor"]) == ["kueue-flavor-h100", "kueue-flavor-l4"]
    urn = {(k, r.redacted_inputs["metadata"]["name"]): r.urn for k, rs in kinds.items() for r in rs}
    for flavor in kinds["ResourceFlavor"]:
        topology = flavor.redacted_inputs["spec"].get("topologyName")
        if topology:
            assert urn[("Topology", topology)] in flavor.dependencies
    for queue in kinds["ClusterQueue"]:
        for f in queue.redacted_inputs["spec"]["resourceGroups"][0]["flavors"]:
            assert urn[("ResourceFlavor", f["name"])] in queue.dependencies, (queue.name, f["name"])


def test_trainer_chart_and_one_runtime_per_pool(gke):
    raw, rec = gke
    release = one(rec, "kubernetes:helm.sh/v3:Release", "kubeflow-trainer")
    inputs = release.redacted_inputs
    assert (inputs["chart"], inputs["version"], inputs["namespace"]) == (
        "oci://ghcr.io/kubeflow/charts/kubeflow-trainer",
        "2.3.0",
        "kubeflow-system",
    )
    spec, facts = spec_and_facts(raw)
    expected = training_runtimes(facts, render_kueue(spec.scheduling, facts).placements)
    runtimes = of_type(rec, "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime")
    by_name = {r.redacted_inputs["metadata"]["name"]: r.redacted_inputs for r in runtimes}  # registration is async
    assert by_name == {e["metadata"]["name"]: offline_pinned(e) for e in expected}  # host-level images by digest
    assert all(release.urn in r.dependencies for r in runtimes)


def test_katib_and_pipelines_use_pinned_manifests_and_generated_secrets(gke):
    _, rec = gke
    dirs = {r.name: r.redacted_inputs["directory"] for r in of_type(rec, "kubernetes:kustomize/v2:Directory")}
    assert dirs == {
        "kubeflow-katib-manifests": KATIB_MANIFESTS,
        "kubeflow-pipelines-cluster-resources": KUBEFLOW_PIPELINES_MANIFESTS["cluster"],
        "kubeflow-pipelines-manifests": KUBEFLOW_PIPELINES_MANIFESTS["platform"],
    }
    assert "/tree/v0.18.0/" in KATIB_MANIFESTS and "/tree/2.5.0/" in KUBEFLOW_PIPELINES_MANIFESTS["platform"]
    passwords = of_type(rec, "random:index/randomPassword:RandomPassword")
    assert sorted(p.name for p in passwords) == [
        "kubeflow-katib-mysql-password",
        "kubeflow-pipelines-minio-access-key",
        "kubeflow-pipelines-minio-secret-key",
        "kubeflow-pipelines-mysql-password",
    ]
    assert all(p.redacted_inputs["length"] >= 20 and p.redacted_inputs["special"] is False for p in passwords)
    platform = one(rec, "kubernetes:kustomize/v2:Directory", "kubeflow-pipelines-manifests")
    assert (
        one(rec, "kubernetes:kustomize/v2:Directory", "kubeflow-pipelines-cluster-resources").urn
        in platform.dependencies
    )


def test_no_known_default_credential_is_in_any_registered_input(gke):
    """What the program registers itself (charts' values, the Secrets it creates). The upstream Katib/Pipelines
    objects are not among them: under mocks a kustomize Directory is never expanded, so its children (and the
    defaults they carry) are never registered here. The next test covers those."""
    _, rec = gke
    dump = json.dumps([r.redacted_inputs for r in rec.resources])
    for d in KNOWN_DEFAULTS:
        if len(d.value) >= 8:  # shorter ones ("test", "minio") occur in names; the next test checks them in place
            assert d.value not in dump, f"{d.what} leaked"
    assert "dGVzdA==" not in dump


def _resolve(value):
    """Plain data from a transform's output: every Output replaced by ``(value, is_secret)``. The outputs come from
    the finished program run, so their futures are already done."""
    if isinstance(value, pulumi.Output):
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(value.future()), loop.run_until_complete(value.is_secret())
        finally:
            loop.close()
    if isinstance(value, dict):
        return {k: _resolve(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    return value


def _transformed(directory, type_: str, doc: dict) -> dict:
    """``doc`` after every transform the Directory was registered with, as the engine would apply them to a child."""
    props, opts = doc, pulumi.ResourceOptions()
    for transform in directory.transforms:
        result = transform(pulumi.ResourceTransformArgs(True, type_, f"{directory.name}:child", props, opts))
        if result is not None:
            props, opts = result.props, result.opts
    return props


def _image_in_a_run(directory, doc: dict) -> str:
    """The first container's image of ``doc`` after the Directory's transforms, run inside a program (the digest
    lookup at deploy is an invoke; the offline mocks answer the stand-in)."""
    seen: dict[str, str] = {}
    with restored_config_environment():
        install_mocks({})

        @pulumi.runtime.test
        def run():
            new = _transformed(directory, "kubernetes:apps/v1:Deployment", doc)
            image = new["spec"]["template"]["spec"]["containers"][0]["image"]
            return pulumi.Output.from_input(image).apply(lambda v: seen.update(image=v))

        run()
    return seen["image"]


def _default_findings(doc: dict) -> list[str]:
    """security-default-credentials on one Secret, with the pack's default config."""
    resource = Resource("kubernetes:core/v1:Secret", doc["metadata"]["name"], "urn:test", doc)
    return [f.problem for f in default_credentials.check(resource, default_credentials.RULE.settings(None))]


@pytest.mark.parametrize(
    "install, directory", [("katib", "kubeflow-katib-manifests"), ("pipelines", "kubeflow-pipelines-manifests")]
)
def test_the_manifest_transform_on_the_directory_replaces_every_upstream_default(gke, install, directory):
    """The transform must be attached to the Directory's registration (deleting it fails here), and running what is
    attached over upstream-shaped objects must leave no known default: each becomes a generated Pulumi secret."""
    _, rec = gke
    registered = one(rec, "kubernetes:kustomize/v2:Directory", directory)
    assert registered.transforms, f"{directory} is registered without a transform: upstream defaults would deploy"
    generated = {
        fake_random_bytes(r.name, int(r.inputs["length"])).hex()[: int(r.inputs["length"])]
        for r in of_type(rec, "random:index/randomPassword:RandomPassword")
    }  # what the mocks return
    for type_, doc in UPSTREAM[install]:
        new = _resolve(_transformed(registered, type_, doc))
        if type_ == "kubernetes:apps/v1:Deployment":
            env = {e["name"]: e for c in new["spec"]["template"]["spec"]["containers"] for e in c["env"]}
            assert "MYSQL_ALLOW_EMPTY_PASSWORD" not in env
            assert env["MYSQL_ROOT_PASSWORD"]["valueFrom"] == {
                "secretKeyRef": {"name": "mysql-secret", "key": "password"}
            }
            continue
        name = doc["metadata"]["name"]
        assert _default_findings(doc), f"{name}: the pack must recognise the upstream default"
        assert "data" not in new
        for key, default in KNOWN_DEFAULT_CREDENTIALS[name].items():
            value, is_secret = new["stringData"][key]
            assert is_secret and value != default and value in generated, (name, key)
        plain = {k: (v[0] if isinstance(v, tuple) else v) for k, v in new["stringData"].items()}
        assert _default_findings({**new, "stringData": plain}) == [], name


@pytest.mark.parametrize(
    "directory, doc",
    [
        ("kubeflow-katib-manifests", KATIB_MYSQL_DEPLOYMENT),
        ("kubeflow-pipelines-manifests", MYSQL_DEPLOYMENT),
        ("kubeflow-pipelines-manifests", MINIO_DEPLOYMENT),
    ],
    ids=["katib-mysql", "kfp-mysql", "kfp-minio"],
)
def test_the_directory_transform_replaces_the_old_database_and_storage_images(gke, directory, doc):
    _, rec = gke
    registered = one(rec, "kubernetes:kustomize/v2:Directory", directory)
    image = _image_in_a_run(registered, doc)
    # MinIO's release tag holds the generated keys: the digest the registry returns at deploy (offline: the stand-in)
    assert (
        image in (MANIFEST_MYSQL_IMAGE, f"{KFP_MINIO_IMAGE}@{DEPLOY_DIGEST}")
        and image != doc["spec"]["template"]["spec"]["containers"][0]["image"]
    )


def test_katib_and_pipelines_are_off_by_default():
    rec = run_program(flat_config(GKE_TEAMS))
    assert not of_type(rec, "kubernetes:kustomize/v2:Directory")
    assert not of_type(rec, "random:index/randomPassword:RandomPassword")
    assert one(rec, "gpu-cluster:scheduling:Kubeflow")


def test_eks_stack_gets_the_eks_network_topology_through_its_own_provider():
    rec = run_program(flat_config(EKS_TEAMS))
    topology = one(rec, "kubernetes:kueue.x-k8s.io/v1beta2:Topology")
    assert topology.name == "kueue-topology-eks-network"
    assert topology.redacted_inputs["metadata"]["name"].startswith("eks-network-")
    flavor = one(rec, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "kueue-flavor-p5")
    assert flavor.redacted_inputs["spec"]["topologyName"] == topology.redacted_inputs["metadata"]["name"]
    assert "::llm-k8s::" in flavor.provider


@pytest.mark.parametrize("scheduling", [None, "slurm"])
def test_no_kueue_without_workload_kubeflow(scheduling):
    if scheduling is None:
        raw = edit(GKE_TEAMS, "scheduling", DELETE)
    else:
        raw = edits(
            GKE_TEAMS,
            {
                "scheduling.workload": scheduling,  # Kueue-only settings are refused with slurm
                "scheduling.topology": DELETE,
                "scheduling.gang": DELETE,
                "scheduling.queues[1].namespace": DELETE,
                "scheduling.queues[0].quotas[0].lendingLimit": DELETE,
            },
        )
    rec = run_program(flat_config(raw))
    assert not [
        r
        for r in rec.resources
        if r.type.startswith(("gpu-cluster:scheduling:Kueue", "gpu-cluster:scheduling:Kubeflow", *KUEUE_TYPES))
    ]
