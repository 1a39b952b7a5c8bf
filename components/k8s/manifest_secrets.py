"""Replace the known default credentials of upstream Kubeflow manifests with generated Pulumi secrets.

Katib and Kubeflow Pipelines ship no Helm chart; their kustomizations carry fixed credentials that are public
(Katib's MySQL root password ``test``; KFP's MinIO ``minio``/``minio123`` and a MySQL root user with an empty
password). A Pulumi transform on the kustomize ``Directory`` rewrites those objects before they are created, so the
defaults never reach the cluster or the state; the same transform pins every container that then holds a Secret
by the digest its tag names at deploy (``render/manifest_images.py``). The rewrites are plain functions of the object,
tested without Pulumi.
The defaults themselves are listed once, in ``catalog/known_defaults.py``, which the policy pack reads too.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import pulumi

from catalog.known_defaults import upstream_secret_defaults
from components.image_digests import resolved
from render.manifest_images import pin_secret_holders

BASELINE_PSS = {
    "pod-security.kubernetes.io/enforce": "baseline",
    "pod-security.kubernetes.io/warn": "restricted",
    "pod-security.kubernetes.io/audit": "restricted",
}
"""The shared ``kubeflow`` namespace: nothing there needs more than baseline."""
KNOWN_DEFAULT_CREDENTIALS: dict[str, dict[str, str]] = upstream_secret_defaults()
"""Upstream Secret name -> key -> its published value (what must never be deployed); every Secret named here must be
overridden by a component's rewrites, key for key (tests check)."""


@dataclass(frozen=True)
class SecretOverride:
    name: str
    """``metadata.name`` of the upstream Secret."""
    string_data: Mapping[str, Any]
    """Every key the upstream Secret defines, with its new value (a Pulumi secret Output, or a plain user name)."""


@dataclass(frozen=True)
class EnvOverride:
    """Replace one environment variable of a Deployment's container with a value read from a Secret."""

    deployment: str
    container: str
    drop: str
    """The upstream variable to remove, e.g. ``MYSQL_ALLOW_EMPTY_PASSWORD``."""
    name: str
    secret: str
    key: str


@dataclass(frozen=True)
class ImageOverride:
    """Replace the image of one Deployment's container (an outdated or moving upstream image)."""

    deployment: str
    container: str
    image: str


@dataclass(frozen=True)
class ManifestRewrites:
    secrets: tuple[SecretOverride, ...] = ()
    env: tuple[EnvOverride, ...] = ()
    images: tuple[ImageOverride, ...] = ()
    shared_namespaces: tuple[str, ...] = field(default=("kubeflow",))
    """Namespaces several installs declare: kept on delete, so removing one install leaves the other running."""
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    """Labels added to the shared namespaces (Pod Security ``baseline``)."""
    scale_to_zero: tuple[str, ...] = ()
    """Deployments kept at 0 replicas: components that must not run (an unauthenticated UI, the KFP cache
    deployer). Pulumi transforms can change an object but not drop it; 0 replicas runs nothing."""
    emptied_cluster_roles: tuple[str, ...] = ()
    """ClusterRoles whose rules are removed (the KFP cache deployer's: CSR approval, mutating webhooks)."""


def rewrite_secret(props: Mapping[str, Any], overrides: tuple[SecretOverride, ...]) -> dict[str, Any] | None:
    """The Secret with its upstream ``data``/``stringData`` replaced, or None when no override names it."""
    name = (props.get("metadata") or {}).get("name")
    match = next((o for o in overrides if o.name == name), None)
    if match is None:
        return None
    out = {k: v for k, v in props.items() if k not in ("data", "stringData")}
    out["stringData"] = dict(match.string_data)
    return out


def rewrite_env(props: Mapping[str, Any], overrides: tuple[EnvOverride, ...]) -> dict[str, Any] | None:
    """The Deployment with the overridden variables swapped for secret references, or None when none apply."""
    name = (props.get("metadata") or {}).get("name")
    todo = [o for o in overrides if o.deployment == name]
    if not todo:
        return None
    out = copy.deepcopy(dict(props))
    for container in out.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        for o in (o for o in todo if o.container == container.get("name")):
            env = [e for e in container.get("env", []) if e.get("name") not in (o.drop, o.name)]
            env.append({"name": o.name, "valueFrom": {"secretKeyRef": {"name": o.secret, "key": o.key}}})
            container["env"] = env
    return out


def rewrite_images(props: Mapping[str, Any], overrides: tuple[ImageOverride, ...]) -> dict[str, Any] | None:
    """The Deployment with the overridden containers' images replaced, or None when none apply."""
    name = (props.get("metadata") or {}).get("name")
    todo = {o.container: o.image for o in overrides if o.deployment == name}
    if not todo:
        return None
    out = copy.deepcopy(dict(props))
    for container in out.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        if container.get("name") in todo:
            container["image"] = todo[container["name"]]
    return out


def rewrite_object(type_: str, props: Mapping[str, Any], rewrites: ManifestRewrites) -> dict[str, Any] | None:
    """The object as gpu-cluster creates it, or None when no rewrite applies. Pure (tests run it over upstream-shaped
    documents)."""
    name = (props.get("metadata") or {}).get("name")
    if type_ == "kubernetes:core/v1:Secret":
        return rewrite_secret(props, rewrites.secrets)
    if type_ == "kubernetes:apps/v1:Deployment":
        new = rewrite_env(props, rewrites.env)
        new = rewrite_images(new if new is not None else props, rewrites.images) or new
        if name in rewrites.scale_to_zero:
            new = copy.deepcopy(dict(new if new is not None else props))
            new.setdefault("spec", {})["replicas"] = 0
        return new
    if type_ == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole" and name in rewrites.emptied_cluster_roles:
        return {**copy.deepcopy(dict(props)), "rules": []}
    if type_ == "kubernetes:core/v1:Namespace" and name in rewrites.shared_namespaces and rewrites.namespace_labels:
        meta = dict(props.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), **rewrites.namespace_labels}
        return {**dict(props), "metadata": meta}
    return None


def manifest_transform(
    rewrites: ManifestRewrites, resolve: Callable[[str], Any] = resolved
) -> Callable[[pulumi.ResourceTransformArgs], pulumi.ResourceTransformResult | None]:
    """A Pulumi transform for the kustomize ``Directory``'s children applying ``rewrites``, then pinning every
    secret-holding container's image by the digest ``resolve`` gives (by default the registry's, at deploy)."""

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        props: Mapping[str, Any] = args.props or {}
        new = rewrite_object(args.type_, props, rewrites)
        new = pin_secret_holders(args.type_, new if new is not None else props, resolve) or new
        if (
            args.type_ == "kubernetes:core/v1:Namespace"
            and (props.get("metadata") or {}).get("name") in rewrites.shared_namespaces
        ):
            keep = pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(retain_on_delete=True))
            return pulumi.ResourceTransformResult(props=new if new is not None else dict(props), opts=keep)
        return pulumi.ResourceTransformResult(props=new, opts=args.opts) if new is not None else None

    return transform
