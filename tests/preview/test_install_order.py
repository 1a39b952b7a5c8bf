"""The preview's JSON records each resource's ``dependsOn`` (URNs), and the order that matters holds in every example
stack: namespaces before what lives in them; the releases that install CRDs (Kueue, Kubeflow Trainer,
slurm-operator, GPU Operator, ...) before objects of their kinds; slurmdbd's database and secrets before the Slurm
release; the system pool before the cluster autoscaler and every add-on (children do not inherit a component's
``depends_on``, pulumi/pulumi#8721, so each add-on's root objects wait for the cluster explicitly)."""

from __future__ import annotations

import functools

import pytest

from preview.report import PreviewReport
from preview.run import preview_stack
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS
from tests.support.helm.examples import recording, rendered
from tests.support.helm.render import RELEASE
from tests.support.kube.install_order import Order, kind_of

SYSTEM_POOL_TYPES = ("gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup")
ADD_ON_TYPES = (
    RELEASE,
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:batch/v1:Job",
    "kubernetes:kustomize/v2:Directory",
    "kubernetes:yaml/v2:ConfigFile",
)
"""What must schedule somewhere (or installs something that must): it waits for the system pool."""


@functools.cache
def order(stack: str) -> Order:
    """The preview JSON's resources (``PreviewReport.as_dict``) of the recorded example."""
    return Order(PreviewReport(stack=stack, resources=recording(stack).resources).as_dict()["resources"])


def test_the_preview_json_records_depends_on():
    doc = preview_stack("gke-h100-512").as_dict()
    release = next(r for r in doc["resources"] if r["type"] == RELEASE and r["name"] == "slurm-slurm")
    assert any(u.endswith("SlurmCluster$kubernetes:helm.sh/v3:Release::slurm-operator") for u in release["dependsOn"])
    assert all(isinstance(r["dependsOn"], list) for r in doc["resources"])


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_namespaces_before_what_lives_in_them(stack):
    o = order(stack)
    namespaces = {r["inputs"]["metadata"]["name"]: r["urn"] for r in o.of_type("kubernetes:core/v1:Namespace")}
    wrong, checked = [], 0
    for r in o.by_urn.values():
        ns = (
            r["inputs"].get("namespace")
            if r["type"] == RELEASE
            else (r["inputs"].get("metadata") or {}).get("namespace")
        )
        if ns in namespaces:
            checked += 1
            if not o.before(namespaces[ns], r["urn"]):
                wrong.append(f"{r['type']} {r['name']} before namespace {ns}")
    assert wrong == []
    assert checked or not namespaces


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_crd_installing_releases_before_objects_of_their_kinds(stack):
    o = order(stack)
    installer = {
        (c["spec"]["group"], c["spec"]["names"]["kind"]): release
        for release, objects in rendered(stack).releases.items()
        for c in objects
        if c["kind"] == "CustomResourceDefinition"
    }
    releases = {r["name"]: r["urn"] for r in o.of_type(RELEASE)}
    wrong = [
        f"{r['type']} {r['name']} before release {installer[kind_of(r)]}"
        for r in o.k8s_objects()
        if kind_of(r) in installer and not o.before(releases[installer[kind_of(r)]], r["urn"])
    ]
    assert wrong == []


def test_the_crd_order_check_has_objects_to_check():
    kinds = {kind_of(r)[0] for s in EXAMPLE_STACKS for r in order(s).k8s_objects()}
    assert {"kueue.x-k8s.io", "trainer.kubeflow.org"} <= kinds


@pytest.mark.parametrize("stack", [s for s in EXAMPLE_STACKS if "SlurmDatabase" in str(recording(s).resources)])
def test_database_and_secrets_before_slurmdbd(stack):
    o = order(stack)
    slurm = next(r for r in o.of_type(RELEASE) if r["name"] == "slurm-slurm")
    needed = [
        r
        for r in o.by_urn.values()
        if ("SlurmDatabase$" in r["urn"] or "SlurmSecrets$" in r["urn"])
        and r["type"] in ("kubernetes:apps/v1:StatefulSet", "kubernetes:core/v1:Service", "kubernetes:core/v1:Secret")
    ]
    assert {r["type"] for r in needed} == {
        "kubernetes:apps/v1:StatefulSet",
        "kubernetes:core/v1:Service",
        "kubernetes:core/v1:Secret",
    }
    assert [r["name"] for r in needed if not o.before(r["urn"], slurm["urn"])] == []


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_system_pool_before_the_autoscaler_and_every_add_on(stack):
    o = order(stack)
    system = [r for r in o.by_urn.values() if r["type"] in SYSTEM_POOL_TYPES and r["name"].endswith("-system")]
    assert len(system) == 1, [r["name"] for r in system]
    add_ons = [r for r in o.by_urn.values() if r["type"] in ADD_ON_TYPES]
    assert [f"{r['type']} {r['name']}" for r in add_ons if not o.before(system[0]["urn"], r["urn"])] == []


def test_the_order_check_sees_an_add_on_that_does_not_wait():
    """The checker itself: drop the namespace's dependencies and the Slurm release no longer waits for the pool."""
    o = order("gke-h100-512")
    broken = [dict(r, dependsOn=[]) if r["type"] == "kubernetes:core/v1:Namespace" else r for r in o.by_urn.values()]
    system = next(r for r in broken if r["name"].endswith("-system") and r["type"] in SYSTEM_POOL_TYPES)
    slurm = next(r for r in broken if r["name"] == "slurm-slurm")
    assert order("gke-h100-512").before(system["urn"], slurm["urn"])
    assert not Order(broken).before(system["urn"], slurm["urn"])
