"""The metadata and labels every serving object carries (the stack's managed-by labels, the vLLM app labels). Pure."""

from __future__ import annotations

from typing import Any

from stacks.spec.serving import Service

MANAGED = {"app.kubernetes.io/part-of": "gpu-cluster", "app.kubernetes.io/managed-by": "pulumi"}


def meta(name: str, namespace: str | None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "labels": {**MANAGED, **(labels or {})}}
    if namespace is not None:
        out["namespace"] = namespace
    return out


def app_labels(svc: Service) -> dict[str, str]:
    return {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": svc.name}
