"""The Slurm block annotator's objects (pure dicts): a one-replica Deployment running
``render/slurm_block_annotator_program.py`` (shipped in a ConfigMap) in the ``slurm`` namespace, and its
ServiceAccount, bound to a ClusterRole that may list and patch nodes and nothing else (listing finds the labelled
nodes; one patch writes the annotation and drops the registration taint). See ``stacks/plan/slurm_block_nodes.py``
for why the blocks are known before the nodes exist and why the taint is needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from render.image_prepull import MANAGED_BY

NAME = "slurm-block-annotator"
PROGRAM = "annotator.py"
PROGRAM_SOURCE = Path(__file__).with_name("slurm_block_annotator_program.py")
IMAGE = "docker.io/library/python:3.13-alpine3.22"
"""Docker Official Image with ``python3`` (the program needs the standard library only)."""
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/part-of": "slurm", **MANAGED_BY}


def annotator_objects(namespace: str, topologies: dict[str, str]) -> list[dict[str, Any]]:
    """``topologies``: pool -> its block topology name (``StackPlan.slurm_block_topologies``)."""
    meta = {"name": NAME, "namespace": namespace, "labels": LABELS}
    role = {"name": f"gpu-cluster-{NAME}", "labels": LABELS}
    container = {
        "name": "annotator",
        "image": IMAGE,
        "command": ["python3", f"/program/{PROGRAM}"],
        "env": [{"name": "TOPOLOGIES", "value": json.dumps(topologies, sort_keys=True)}],
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "program", "mountPath": "/program", "readOnly": True}],
    }
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": role,
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "patch"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": role,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["name"]},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}],
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta,
            "data": {PROGRAM: PROGRAM_SOURCE.read_text(encoding="utf-8")},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta,
            "spec": {
                "replicas": 1,
                "strategy": {"type": "Recreate"},
                "selector": {"matchLabels": {"app.kubernetes.io/name": NAME}},
                "template": {
                    "metadata": {"labels": LABELS},
                    "spec": {
                        "serviceAccountName": NAME,
                        "securityContext": {
                            "runAsNonRoot": True,
                            "runAsUser": 65534,
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                        "containers": [container],
                        "volumes": [{"name": "program", "configMap": {"name": NAME}}],
                    },
                },
            },
        },
    ]
