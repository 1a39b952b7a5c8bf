"""Checks over rendered Helm releases: every object valid (Kubernetes 1.35 OpenAPI, or the CRD the stack's charts
ship), no kind/namespace/name rendered twice (across releases and the program's own objects), no floating image."""

from __future__ import annotations

import functools
from typing import Any, Iterable

import re

import jsonschema
import referencing
from kubernetes_validate import utils as kv_utils

from preview.engine import Recording
from tests.support.kube.crd_schemas import cel_errors_against, closed
from tests.support.kube.schema import unwrap_secrets

K8S_SCHEMA_VERSION = "1.35.0"
CLUSTER_SCOPED = {
    "Namespace",
    "Node",
    "PersistentVolume",
    "ClusterRole",
    "ClusterRoleBinding",
    "PriorityClass",
    "StorageClass",
    "CSIDriver",
    "RuntimeClass",
    "IngressClass",
    "CustomResourceDefinition",
    "APIService",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "DeviceClass",
}
NOT_OBJECTS = {"Release", "Directory", "ConfigGroup", "ConfigFile", "Chart"}
"""Pulumi Kubernetes resource types that are not one Kubernetes object."""

CRDs = dict[tuple[str, str], dict[str, Any]]


def group_of(obj: dict[str, Any]) -> str:
    return obj["apiVersion"].rpartition("/")[0]


def crds_of(objects: Iterable[dict[str, Any]]) -> CRDs:
    return {
        (c["spec"]["group"], c["spec"]["names"]["kind"]): c
        for c in objects
        if c.get("kind") == "CustomResourceDefinition"
    }


class _Key:
    """Hashable by identity: lets the validator cache hold one compiled schema per rendered CRD."""

    def __init__(self, crd: dict[str, Any]):
        self.crd = crd

    def __hash__(self) -> int:
        return id(self.crd["spec"])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and other.crd["spec"] is self.crd["spec"]


@functools.lru_cache(maxsize=None)
def _crd_validator(version: str, crd: _Key) -> jsonschema.Draft7Validator:
    served = {v["name"]: v for v in crd.crd["spec"]["versions"] if v.get("served")}
    return jsonschema.Draft7Validator(nullable(closed(served[version]["schema"]["openAPIV3Schema"])))


def nullable(schema: Any) -> Any:
    """OpenAPI's ``nullable: true`` in JSON Schema terms (``type: [T, "null"]``)."""
    if isinstance(schema, list):
        return [nullable(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: nullable(v) for k, v in schema.items()}
    if out.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def as_admitted(value: Any, schema: dict[str, Any]) -> Any:
    """What a CRD's validation sees, as the API server prepares it: nulls in non-nullable fields dropped, then
    schema defaults applied to missing fields (structural schemas, "Defaulting and Nullable")."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else None
        out = {}
        for key, child in value.items():
            sub = props.get(key) or extra or {}
            if child is None and not sub.get("nullable"):
                continue
            out[key] = as_admitted(child, sub)
        for key, sub in props.items():
            if key not in out and "default" in sub:
                out[key] = as_admitted(sub["default"], sub)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [as_admitted(v, schema["items"]) for v in value]
    return value


def object_errors(obj: dict[str, Any], crds: CRDs) -> list[str]:
    """Why the API server would refuse ``obj``: a custom resource against its CRD from ``crds`` (served version,
    unknown fields refused), anything else against the Kubernetes OpenAPI schema (strict)."""
    what = f"{obj.get('kind')} {obj.get('metadata', {}).get('namespace', '')}/{obj.get('metadata', {}).get('name')}"
    crd = crds.get((group_of(obj), obj.get("kind", "")))
    if crd is not None:
        version = obj["apiVersion"].rpartition("/")[2]
        if version not in {v["name"] for v in crd["spec"]["versions"] if v.get("served")}:
            return [f"{what}: {obj['apiVersion']} is not served by its CRD"]
        validator = _crd_validator(version, _Key(crd))
        schema = {v["name"]: v for v in crd["spec"]["versions"]}[version]["schema"]["openAPIV3Schema"]
        obj = as_admitted(obj, schema)
        cel, _ = cel_errors_against(obj, schema)
        return [
            f"{what}: {'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in validator.iter_errors(obj)
        ] + [f"{what}: {m}" for m in cel]
    k8s = _k8s_validator(obj.get("apiVersion", ""), obj.get("kind", ""))
    if k8s is None:
        return [f"{what}: {obj.get('apiVersion')} is neither built in nor a CRD this stack installs"]
    return [f"{what}: {'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in k8s.iter_errors(obj)]


@functools.lru_cache(maxsize=None)
def _k8s_validator(api_version: str, kind: str) -> jsonschema.protocols.Validator | None:
    """kubernetes-validate's strict schema for one kind, built once (``kubernetes_validate.validate`` re-reads the
    schema files on every call, which dominated the run time); None when the kind is not built in."""
    version = f"v{K8S_SCHEMA_VERSION}-local-strict"
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = kv_utils.schema_contents(
            f"kubernetes-json-schema/{version}/{kind.lower()}-{group}.json", K8S_SCHEMA_VERSION
        )
    except FileNotFoundError:
        return None
    registry = referencing.Resource.from_contents(schema) @ referencing.Registry()  # as kubernetes-validate does
    registry = referencing.Resource.from_contents(_k8s_definitions()) @ registry
    return jsonschema.Draft202012Validator(schema, registry=registry)


@functools.lru_cache(maxsize=None)
def _k8s_definitions() -> Any:
    return kv_utils.schema_contents(
        f"kubernetes-json-schema/v{K8S_SCHEMA_VERSION}-local-strict/_definitions.json", K8S_SCHEMA_VERSION
    )


def identity(obj: dict[str, Any], default_namespace: str, crds: CRDs) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name) as the API server keys it; '' namespace for cluster-scoped kinds."""
    kind, group = obj["kind"], group_of(obj)
    crd = crds.get((group, kind))
    scoped = crd["spec"]["scope"] == "Cluster" if crd is not None else kind in CLUSTER_SCOPED
    namespace = "" if scoped else (obj.get("metadata", {}).get("namespace") or default_namespace)
    return group, kind, namespace, obj["metadata"]["name"]


def program_objects(rec: Recording) -> list[dict[str, Any]]:
    """Kubernetes objects the program registers itself (not via a chart or a kustomize Directory), with an explicit
    name (Pulumi auto-names the others with a random suffix: they cannot collide)."""
    out = []
    for r in rec.resources:
        if (
            r.type.startswith("kubernetes:")
            and r.custom
            and r.type.rpartition(":")[2] not in NOT_OBJECTS
            and (r.inputs.get("metadata") or {}).get("name")
        ):
            out.append(unwrap_secrets(r.inputs))
    return out


def duplicates(owned: dict[str, list[dict[str, Any]]], namespaces: dict[str, str], crds: CRDs) -> list[str]:
    """``owner -> objects`` (``namespaces[owner]``: where unqualified objects land): every identity two owners (or
    one owner twice) create."""
    seen: dict[tuple[str, str, str, str], str] = {}
    out = []
    for owner, objects in owned.items():
        for obj in objects:
            key = identity(obj, namespaces.get(owner, "default"), crds)
            if key in seen:
                # named in a fixed order (the program last), whatever order the releases were registered in
                first, second = sorted((seen[key], owner), key=lambda o: (o == "the program", o))
                out.append(f"{key[1]} {key[2]}/{key[3]} ({key[0] or 'core'}): rendered by {first} and {second}")
            else:
                seen[key] = owner
    return out


def image_refs(value: Any, path: str = "") -> list[tuple[str, str]]:
    """(path, image reference) of every image an object runs: ``image:`` strings of containers and custom
    resources, and ``repository``/``image``/``version`` triples (GPU Operator ClusterPolicy); parts switched off
    with ``enabled: false`` are skipped."""
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        if value.get("enabled") is False:
            return out
        image = value.get("image")
        if isinstance(image, str):
            if "version" in value or "repository" in value:
                repo = value.get("repository")
                ref = f"{repo}/{image}" if repo else image
                out.append((f"{path}.image", f"{ref}:{value['version']}" if value.get("version") else ref))
            else:
                out.append((f"{path}.image", image))
        for key, child in value.items():
            out += image_refs(child, f"{path}.{key}")
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += image_refs(child, f"{path}[{i}]")
    return out


def floating(ref: str) -> bool:
    """No tag, or the ``latest`` tag (a digest pins, whatever the tag)."""
    if "@sha256:" in ref:
        return False
    last = ref.rsplit("/", 1)[-1]
    return ":" not in last or last.rsplit(":", 1)[1] in ("latest", "")


def floating_images(objects: Iterable[dict[str, Any]]) -> list[str]:
    return [
        f"{o['kind']} {o['metadata']['name']}{p}: {ref}" for o in objects for p, ref in image_refs(o) if floating(ref)
    ]
