"""The pre-pull DaemonSet of a pool (``podStart.prepull``): one pod per node of the pool whose init containers pull the
pool's declared images as soon as the node joins, so a job's pod scheduled there later finds them on disk. Pure.

Each image runs once as an init container with ``sh -c 'exit 0'`` as user nobody: the kubelet must pull an image to
start it, and exiting at once costs nothing (images without a shell still get pulled; their init container fails and
retries with back-off, which the preview's docs mention). No GPU is requested, so the pod never holds one; it tolerates
exactly the pool's taints and selects the pool by its label. The namespace enforces the restricted Pod Security level
and the pod meets it.
"""

from __future__ import annotations

from typing import Any, Sequence

from stacks.plan.facts import PoolFacts
from stacks.plan.pod_start import PREPULL_NAMESPACE

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
"""Keeps the pod Running once the pulls are done (Kubernetes' own pause image, pinned)."""
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpu-cluster"}
RESTRICTED = {f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "audit", "warn")}
NOBODY = 65534
_SECURITY = {
    "runAsNonRoot": True,
    "runAsUser": NOBODY,
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
}
_SMALL = {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}}


def daemonset_name(pool: str) -> str:
    return f"prepull-{pool}"


def prepull_namespace() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": PREPULL_NAMESPACE, "labels": {**RESTRICTED, **MANAGED_BY}},
    }


def _puller(index: int, image: str) -> dict[str, Any]:
    return {
        "name": f"pull-{index}",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["sh", "-c", "exit 0"],
        "resources": _SMALL,
        "securityContext": _SECURITY,
    }


def prepull_daemonset(pool: PoolFacts, images: Sequence[str]) -> dict[str, Any]:
    """The DaemonSet pulling ``images`` (in order) onto every node of ``pool``."""
    name = daemonset_name(pool.name)
    labels = {"app.kubernetes.io/name": "image-prepull", "app.kubernetes.io/instance": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": PREPULL_NAMESPACE, "labels": {**labels, **MANAGED_BY}},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": dict(pool.pool_label),
                    "tolerations": [dict(t) for t in pool.tolerations],
                    "automountServiceAccountToken": False,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": NOBODY,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "terminationGracePeriodSeconds": 1,
                    "initContainers": [_puller(i, image) for i, image in enumerate(images)],
                    "containers": [
                        {"name": "pause", "image": PAUSE_IMAGE, "resources": _SMALL, "securityContext": _SECURITY}
                    ],
                },
            },
        },
    }
