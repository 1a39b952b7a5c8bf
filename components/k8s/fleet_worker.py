"""A fleet worker's side of MultiKueue: the manager's identity on this cluster, its kubeconfig, the fleet runtimes."""

from __future__ import annotations

import base64
from typing import Any, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.custom_resources import custom_resource
from components.image_digests import pinned
from render.fleet import fleet_runtimes
from render.trainer import TORCH_IMAGE
from render.fleet_worker import token_admission_objects, worker_access_objects, worker_kubeconfig


class FleetWorker(pulumi.ComponentResource):
    """In ``kueue-system``: the ServiceAccount ``multikueue-sa``, a read-only ClusterRole for the dispatched job kinds
    and its binding, a Role writing them in each mirrored namespace (``namespaces``), the admission policy refusing
    the token any write elsewhere, and a ``kubernetes.io/service-account-token`` Secret named after ``token_generation`` (raising the
    generation replaces it, which revokes the old token). ``kubeconfig`` (a Pulumi secret) holds the API endpoint, the
    cluster CA and that static token, as MultiKueue accepts it. Once Trainer is ready, the fleet runtimes
    ``fleet-<gpu model>`` of this cluster's GPU models.
    """

    kubeconfig: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        cluster_name: str,
        endpoint: pulumi.Input[str],
        token_generation: int,
        gpus_per_node: dict,
        after: Sequence[pulumi.Resource] = (),
        runtimes_after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
        namespaces: Sequence[str] = (),
        runtime_image: pulumi.Output[str | None] | None = None,
    ):
        """``after``: Kueue (its ``kueue-system`` namespace); ``runtimes_after``: the Trainer release (its CRDs);
        ``runtime_image``: the manager's fleet runtime image by digest (None, or resolving to None: this cluster
        pins the image itself), so that every cluster of the fleet runs the same bytes."""
        super().__init__("gpu-cluster:fleet:FleetWorker", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(after))
        # the token is refused anything outside the mirrored namespaces before it exists
        policy, policy_binding = token_admission_objects(namespaces)
        vap = custom_resource(f"{name}-token-policy", policy, child)
        guard = custom_resource(
            f"{name}-token-policy-binding",
            policy_binding,
            pulumi.ResourceOptions(parent=self, depends_on=[*after, vap]),
        )
        objects = worker_access_objects(token_generation, namespaces)
        sa, role, binding, token = objects[0], objects[1], objects[2], objects[-1]
        account = k8s.core.v1.ServiceAccount(
            f"{name}-sa", metadata=sa["metadata"], opts=pulumi.ResourceOptions(parent=self, depends_on=[*after, guard])
        )
        cluster_role = k8s.rbac.v1.ClusterRole(
            f"{name}-role", metadata=role["metadata"], rules=role["rules"], opts=child
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-binding",
            metadata=binding["metadata"],
            role_ref=binding["roleRef"],
            subjects=binding["subjects"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[account, cluster_role]),
        )
        for i in range(3, len(objects) - 1, 2):  # Role and RoleBinding per mirrored namespace
            r, rb = objects[i], objects[i + 1]
            ns = r["metadata"]["namespace"]
            writer = k8s.rbac.v1.Role(f"{name}-writer-{ns}", metadata=r["metadata"], rules=r["rules"], opts=child)
            k8s.rbac.v1.RoleBinding(
                f"{name}-writer-{ns}",
                metadata=rb["metadata"],
                role_ref=rb["roleRef"],
                subjects=rb["subjects"],
                opts=pulumi.ResourceOptions(parent=self, depends_on=[account, writer]),
            )
        # The provider waits until the token controller has filled in data.token (pulumi-kubernetes#2048).
        secret = k8s.core.v1.Secret(
            f"{name}-token",
            metadata=token["metadata"],
            type=token["type"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[account]),
        )
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(endpoint, secret.data).apply(lambda a: _kubeconfig(cluster_name, a[0], a[1] or {}))
        )
        for obj in fleet_runtimes(gpus_per_node):
            if runtime_image is not None:
                obj = _with_image(
                    obj,
                    TORCH_IMAGE,
                    pulumi.Output.all(runtime_image, pinned(TORCH_IMAGE)).apply(lambda a: a[0] or a[1]),
                )
            custom_resource(
                f"{name}-runtime-{obj['metadata']['name']}",
                obj,
                pulumi.ResourceOptions(parent=self, depends_on=list(runtimes_after)),
            )
        self.register_outputs({"kubeconfig": self.kubeconfig})


def _kubeconfig(cluster_name: str, endpoint: str, data: dict[str, Any]) -> str:
    """Secret ``data`` is base64: the CA stays so (``certificate-authority-data``), the token is decoded."""
    token = base64.b64decode(data.get("token", "")).decode()
    return worker_kubeconfig(cluster_name, endpoint, data.get("ca.crt", ""), token)


def _with_image(obj: Any, image: str, value: pulumi.Output[str]) -> Any:
    """A copy of ``obj`` with every ``image: <image>`` set to ``value``."""
    if isinstance(obj, dict):
        return {k: value if k == "image" and v == image else _with_image(v, image, value) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_with_image(v, image, value) for v in obj]
    return obj
