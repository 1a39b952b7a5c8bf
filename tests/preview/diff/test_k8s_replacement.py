"""Kubernetes objects in the stack diff: what the provider replaces (metadata.name/namespace, each kind's force-new
fields) and which in-place updates the API server refuses (a CRD's immutable fields), checked against the pinned CRDs
and on a real stack pair whose pool placement changes."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from google.protobuf import struct_pb2

from preview.diff.compare import diff_configs
from preview.diff.k8s_replacement import CRD_IMMUTABLE, classify_k8s, matches
from preview.diff.render_markdown import render_diff_markdown as render_markdown
from preview.diff.render_text import render_diff_text as render_text
from preview.diff.resources import diff_resources
from preview.engine import PROJECT_ROOT, Registered, read_stack_file
from tests.support.kube.crd_schemas import crd
from tests.support.preview.diff_fixtures import cached_previewer

RENDERED_CRDS = {  # (group, kind) -> the version gpu-cluster renders (render/ and components/)
    ("kueue.x-k8s.io", "AdmissionCheck"): "v1beta2",
    ("kueue.x-k8s.io", "ClusterQueue"): "v1beta2",
    ("kueue.x-k8s.io", "Cohort"): "v1beta2",
    ("kueue.x-k8s.io", "LocalQueue"): "v1beta2",
    ("kueue.x-k8s.io", "MultiKueueCluster"): "v1beta2",
    ("kueue.x-k8s.io", "MultiKueueConfig"): "v1beta2",
    ("kueue.x-k8s.io", "ResourceFlavor"): "v1beta2",
    ("kueue.x-k8s.io", "Topology"): "v1beta2",
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): "v1beta2",
    ("kueue.x-k8s.io", "ProvisioningRequestConfig"): "v1beta2",
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): "v1alpha1",
    ("resource.nvidia.com", "ComputeDomain"): "v1beta1",
}
CONDITIONAL = re.compile(r"^(?P<field>\w+) (?:is|are) immutable when (?P<when>\w+) is set$")
"""Kueue's ResourceFlavor: ``nodeLabels are immutable when topologyName is set`` (a transition rule on ``spec``)."""


def immutable_in_crd(schema: dict[str, Any], path: str = "") -> tuple[set[str], set[str]]:
    """(immutable paths, the fields they depend on) from the CRD's transition rules."""
    paths: set[str] = set()
    whens: set[str] = set()
    for rule in schema.get("x-kubernetes-validations", []) or []:
        if "oldSelf" not in rule.get("rule", ""):
            continue
        if rule["rule"].strip() == "self == oldSelf":
            paths.add(path)
            continue
        cond = CONDITIONAL.match(rule.get("message", ""))
        assert cond, f"{path}: a transition rule this test does not understand: {rule}"  # a new CRD version: look
        paths.add(f"{path}.{cond['field']}")
        whens.add(f"{path}.{cond['when']}")
    children = [(f"{path}.{k}" if path else k, s) for k, s in (schema.get("properties") or {}).items()]
    if isinstance(schema.get("items"), dict):
        children.append((f"{path}[*]", schema["items"]))
    for child_path, child in children:
        p, w = immutable_in_crd(child, child_path)
        paths |= p
        whens |= w
    return paths, whens


@pytest.mark.parametrize("group, kind", sorted(RENDERED_CRDS))
def test_the_immutable_table_is_what_the_pinned_crd_says(group, kind):
    doc = crd(group, kind)
    version = next(v for v in doc["spec"]["versions"] if v["name"] == RENDERED_CRDS[(group, kind)])
    paths, whens = immutable_in_crd(version["schema"]["openAPIV3Schema"])
    rule = CRD_IMMUTABLE.get((group, kind))
    assert set(rule.paths if rule else ()) == paths
    assert {rule.when} - {""} == whens if rule else not whens


def reg(type_: str, inputs: dict, name: str = "r") -> Registered:
    return Registered(
        type=type_,
        name=name,
        urn=f"urn:pulumi:s::p::{type_}::{name}",
        parent_urn="",
        custom=True,
        inputs=inputs,
        raw_inputs=struct_pb2.Struct(),
    )


@pytest.mark.parametrize(
    "type_, path, replaces",
    [
        ("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", "metadata.name", True),
        ("kubernetes:core/v1:Namespace", "metadata.labels.team", False),
        ("kubernetes:core/v1:ConfigMap", "metadata.namespace", True),
        ("kubernetes:batch/v1:Job", "spec.template.spec.containers[0].image", True),
        ("kubernetes:batch/v1:Job", "spec.backoffLimit", False),
        ("kubernetes:apps/v1:StatefulSet", "spec.volumeClaimTemplates[0].spec.resources.requests.storage", True),
        ("kubernetes:apps/v1:StatefulSet", "spec.replicas", False),
        ("kubernetes:apps/v1:DaemonSet", "spec.selector.matchLabels.app", True),
        ("kubernetes:apps/v1:DaemonSet", "spec.template.spec.containers[0].image", False),
        ("kubernetes:core/v1:Service", "spec.clusterIP", True),
        ("kubernetes:core/v1:Secret", "stringData.key", True),  # enableSecretMutable is off
        ("kubernetes:core/v1:ConfigMap", "data.slurm_conf", True),  # enableConfigMapMutable is off
        ("kubernetes:storage.k8s.io/v1:StorageClass", "parameters.type", True),
        ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "roleRef.name", True),
        ("kubernetes:helm.sh/v3:Release", "values.x", False),
        ("kubernetes:helm.sh/v3:Release", "namespace", True),
    ],
)
def test_kubernetes_force_new_fields(type_, path, replaces):
    verdict = classify_k8s(type_, [path], {}, {})
    assert verdict is not None and bool(verdict.replaces) == replaces, verdict


def test_wildcards_match_any_index_and_nothing_else():
    assert matches("a.b[*].c", "a.b[12].c.d") and not matches("a.b[*].c", "a.b[1].cd")
    assert matches("spec.template", "spec.template") and not matches("spec.template", "spec.templates")


def test_a_renamed_object_is_created_first_and_a_same_name_one_deleted_first():
    renamed = diff_resources(
        [reg("kubernetes:core/v1:ConfigMap", {"metadata": {"name": "a"}, "data": {"k": "1"}})],
        [reg("kubernetes:core/v1:ConfigMap", {"metadata": {"name": "b"}, "data": {"k": "1"}})],
    )
    same = diff_resources(
        [reg("kubernetes:core/v1:ConfigMap", {"metadata": {"name": "a"}, "data": {"k": "1"}})],
        [reg("kubernetes:core/v1:ConfigMap", {"metadata": {"name": "a"}, "data": {"k": "2"}})],
    )
    assert renamed.changes[0].action == same.changes[0].action == "replace"
    assert "creates the new object" in renamed.changes[0].note
    assert "deletes the old object before" in same.changes[0].note


def test_a_crd_immutable_field_is_a_refused_update_not_a_replacement():
    lq = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
    old = reg(lq, {"metadata": {"name": "q", "namespace": "t"}, "spec": {"clusterQueue": "a"}})
    new = reg(lq, {"metadata": {"name": "q", "namespace": "t"}, "spec": {"clusterQueue": "b"}})
    change = diff_resources([old], [new]).changes[0]
    assert change.action == "update" and set(change.refused) == {"spec.clusterQueue"}
    assert "API server refuses" in change.refused["spec.clusterQueue"]
    flavor = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"  # immutable only once it names a Topology
    free = diff_resources(
        [reg(flavor, {"metadata": {"name": "f"}, "spec": {"nodeLabels": {"a": "1"}}})],
        [reg(flavor, {"metadata": {"name": "f"}, "spec": {"nodeLabels": {"a": "2"}}})],
    )
    assert free.changes[0].refused == {}
    bound = diff_resources(
        [reg(flavor, {"metadata": {"name": "f"}, "spec": {"nodeLabels": {"a": "1"}, "topologyName": "t"}})],
        [reg(flavor, {"metadata": {"name": "f"}, "spec": {"nodeLabels": {"a": "2"}, "topologyName": "t"}})],
    )
    assert set(bound.changes[0].refused) == {"spec.nodeLabels.a"}


@pytest.fixture(scope="module")
def placement_diff():
    """gke-kueue with its fixed 4-node H100 pool made autoscaled (0-4): Kueue TAS no longer places its gangs, so the
    pool's content-named ResourceFlavor loses its Topology and gets a new name."""
    base = read_stack_file(PROJECT_ROOT / "Pulumi.gke-kueue.yaml")
    head = copy.deepcopy(base)
    h100 = next(p for p in head["gpu-cluster:nodePools"] if p["name"] == "h100")
    h100["minNodes"] = 0
    h100["capacity"] = {"type": "on-demand"}  # a reservation pool must keep its nodes
    return diff_configs("gke-kueue", base, head, "main", previewer=cached_previewer)


def test_a_placement_change_replaces_the_content_named_flavor(placement_diff):
    by_name = {c.name: c for c in placement_diff.resources.changes}
    flavor = by_name["kueue-flavor-h100"]
    assert flavor.action == "replace"
    assert (
        flavor.replace_reasons["metadata.name"] == "metadata.name changed: the Kubernetes provider replaces the object"
    )
    assert "creates the new object" in flavor.note
    assert by_name["kueue-topology-gke-network"].action == "remove"
    for cq in ("kueue-cq-research", "kueue-cq-product"):  # repointed at the new flavor, in place
        assert by_name[cq].action == "update" and not by_name[cq].refused
    node_pool = by_name["h100"]
    assert node_pool.action == "replace" and "nodeConfig.reservationAffinity" in " ".join(node_pool.replace_reasons)
    text = render_text(placement_diff)
    assert (
        "ResourceFlavor kueue-flavor-h100" in text
        and "metadata.name  (forces replacement: metadata.name changed: the Kubernetes provider replaces the object)"
        in text
    )
    md = render_markdown(placement_diff)
    assert (
        "- **replaces** `kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor` `kueue-flavor-h100`: metadata.name "
        "changed: the Kubernetes provider replaces the object" in md
    )
    as_json = json.loads(json.dumps(placement_diff.as_dict()))
    row = next(c for c in as_json["resources"]["changes"] if c["name"] == "kueue-flavor-h100")
    assert row["action"] == "replace" and "metadata.name" in row["replaceBecause"]
