"""Which input changes make ``pulumi up`` replace a Kubernetes object, and which the API server refuses.

Data, not logic, in two tables a reviewer can check against their sources:

- ``FORCE_NEW``: fields whose change makes the Kubernetes provider replace the object (Pulumi ``replaces``).
  Source: pulumi/pulumi-kubernetes ``provider/pkg/provider/diff.go`` @ cafe8c4a (the v4 provider; pulumi-kubernetes
  4.34.2 is pinned): ``metadata.name`` and ``metadata.namespace`` for every kind; per kind the ``forceNew`` table;
  Secrets (``type``, ``data``, ``stringData``) and ConfigMaps (``data``, ``binaryData``) because our providers leave
  ``enableSecretMutable``/``enableConfigMapMutable`` off (the default). A Helm ``Release`` replaces on its ``name``
  and ``namespace`` (``helm_release.go``, ``forceNewFields``).
- ``CRD_IMMUTABLE``: fields a custom resource's CRD declares immutable (``x-kubernetes-validations`` with
  ``self == oldSelf``). The provider does not know these, so it updates in place and the API server refuses the
  update ("field is immutable"): ``pulumi up`` fails on that object. Source: the pinned CRDs in ``../shared/schemas``
  (Kueue v0.19.2, Kubeflow Trainer v2.3.0) and the NVIDIA DRA driver chart v0.4.0's ComputeDomain CRD;
  ``tests/preview/diff/test_k8s_replacement.py`` re-reads them and fails when they disagree.

Paths are Pulumi input paths (camelCase, as the API spells them); ``[*]`` matches any list index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

METADATA = ("metadata.name", "metadata.namespace")
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
HELM_FORCE_NEW = ("name", "namespace")
_SELECTOR = ("spec.selector",)  # covers matchLabels and matchExpressions
FORCE_NEW: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "DaemonSet"): _SELECTOR,
    ("apps", "Deployment"): _SELECTOR,
    ("apps", "StatefulSet"): (
        "spec.podManagementPolicy",
        "spec.revisionHistoryLimit",
        "spec.selector",
        "spec.serviceName",
        "spec.volumeClaimTemplates",
    ),
    ("batch", "Job"): ("spec.completions", "spec.parallelism", "spec.selector", "spec.template"),
    ("core", "PersistentVolumeClaim"): (
        "spec.accessModes",
        "spec.selector",
        "spec.storageClassName",
        "spec.volumeName",
    ),
    ("core", "ResourceQuota"): ("spec.scopes",),
    ("core", "Secret"): ("type", "data", "stringData"),
    ("core", "ConfigMap"): ("data", "binaryData"),
    ("core", "Service"): ("spec.clusterIP",),
    ("rbac.authorization.k8s.io", "RoleBinding"): ("roleRef",),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): ("roleRef",),
    ("storage.k8s.io", "StorageClass"): ("parameters", "provisioner"),
}
"""(API group, kind) -> the fields besides ``metadata.name``/``namespace`` whose change replaces the object."""


@dataclass(frozen=True)
class Immutable:
    paths: tuple[str, ...]
    when: str = ""
    """Only while the old object has this field (Kueue: a ResourceFlavor's fields are immutable once it names a
    Topology)."""


CRD_IMMUTABLE: dict[tuple[str, str], Immutable] = {
    ("kueue.x-k8s.io", "AdmissionCheck"): Immutable(("spec.controllerName",)),
    ("kueue.x-k8s.io", "LocalQueue"): Immutable(("spec.clusterQueue",)),
    ("kueue.x-k8s.io", "Topology"): Immutable(("spec.levels",)),
    ("kueue.x-k8s.io", "ResourceFlavor"): Immutable(
        ("spec.nodeLabels", "spec.tolerations", "spec.topologyName"), when="spec.topologyName"
    ),
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): Immutable(
        (
            "spec.template.spec.failurePolicy",
            "spec.template.spec.network",
            "spec.template.spec.replicatedJobs[*].dependsOn",
            "spec.template.spec.startupPolicy",
            "spec.template.spec.successPolicy",
            "spec.template.spec.volumeClaimPolicies",
        )
    ),
    ("resource.nvidia.com", "ComputeDomain"): Immutable(("spec",)),  # the whole spec (numNodes, channel)
}
"""(API group, kind) -> the fields its CRD makes immutable, for the custom resources gpu-cluster renders."""


def group_kind(resource_type: str) -> tuple[str, str] | None:
    """``kubernetes:apps/v1:StatefulSet`` -> ``("apps", "StatefulSet")``; ``core/v1`` is the core group."""
    parts = resource_type.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes":
        return None
    return parts[1].split("/")[0], parts[2]


def _pattern(prefix: str) -> re.Pattern[str]:
    body = re.escape(prefix).replace(r"\[\*\]", r"\[\d+\]")
    return re.compile(rf"^{body}(?:$|[.\[])")


def matches(prefix: str, path: str) -> bool:
    """``spec.template`` matches ``spec.template.spec.x``; ``a[*].b`` matches ``a[3].b.c``."""
    return bool(_pattern(prefix).match(path))


@dataclass(frozen=True)
class K8sVerdict:
    replaces: dict[str, str] = field(default_factory=dict)
    """Changed path -> why the provider replaces the object."""
    refused: dict[str, str] = field(default_factory=dict)
    """Changed path -> why the API server refuses the in-place update."""
    delete_first: bool = False
    """The replacement keeps the object's name and namespace, so the provider deletes the old object before it
    creates the new one (the object is absent meanwhile); a renamed or auto-named object is created first."""


def classify_k8s(resource_type: str, changed: list[str], old_inputs: dict, new_inputs: dict) -> K8sVerdict | None:
    """None for a type that is no Kubernetes object."""
    if resource_type == HELM_RELEASE:
        return K8sVerdict(
            replaces={
                p: f"{p} changed: the Kubernetes provider replaces a Helm release whose {p} changes"
                for p in changed
                if any(matches(f, p) for f in HELM_FORCE_NEW)
            }
        )  # helm_release.go: DeleteBeforeReplace false
    gk = group_kind(resource_type)
    if gk is None:
        return None
    replaces: dict[str, str] = {}
    for p in changed:
        hit = next((f for f in METADATA if matches(f, p)), None)
        if hit is not None:
            replaces[p] = f"{hit} changed: the Kubernetes provider replaces the object"
            continue
        hit = next((f for f in FORCE_NEW.get(gk, ()) if matches(f, p)), None)
        if hit is not None:
            replaces[p] = f"{hit} changed: the Kubernetes provider replaces a {gk[1]} on it"
    refused: dict[str, str] = {}
    rule = CRD_IMMUTABLE.get(gk)
    if rule is not None and not replaces and (not rule.when or _has(old_inputs, rule.when)):
        for p in changed:
            hit = next((f for f in rule.paths if matches(f, p)), None)
            if hit is not None:
                refused[p] = (
                    f"{hit} is immutable in the {gk[1]} CRD: the API server refuses the update, so "
                    "`pulumi up` fails on this object (a new metadata.name would replace it instead)"
                )
    renamed = any(matches(m, p) for m in METADATA for p in replaces)
    named = _has(new_inputs, "metadata.name")
    return K8sVerdict(replaces=replaces, refused=refused, delete_first=bool(replaces) and named and not renamed)


def _has(obj: dict, path: str) -> bool:
    value: object = obj
    for step in path.split("."):
        if not isinstance(value, dict) or step not in value:
            return False
        value = value[step]
    return value is not None
