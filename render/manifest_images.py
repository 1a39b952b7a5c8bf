"""Upstream manifests applied at deploy (Katib, Kubeflow Pipelines) with every container that holds a Secret pinned
by digest: the manifests are fetched by ``pulumi up``, so their images cannot be listed ahead; the component's
transform hands each such image to a resolver (the registry's digest for it at deploy). Pure."""

from __future__ import annotations

import copy
from typing import Any, Callable, Mapping

from stacks.plan.host_access import WORKLOAD_KINDS, by_digest, pod_specs, secret_holding_containers


def pin_secret_holders(type_: str, props: Mapping[str, Any], resolve: Callable[[str], Any]) -> dict[str, Any] | None:
    """The workload with the image of every container that holds a Secret (a ``secret`` volume mounted, a
    ``secretKeyRef`` or ``envFrom.secretRef``: a database password, MinIO's keys, a webhook's serving key) replaced
    by ``resolve(image)`` (its digest), or None when every such container already runs a digest. A moved tag there
    would hand the key to whoever moved it. Pure but for ``resolve``."""
    kind = type_.rsplit(":", 1)[-1]
    if kind not in WORKLOAD_KINDS or not isinstance(props.get("spec"), dict):
        return None
    out = copy.deepcopy(dict(props))
    changed = False
    for _, spec in pod_specs({"kind": kind, "spec": out["spec"]}):
        holders = {c.container for c in secret_holding_containers(spec) if not by_digest(c.image)}
        for key in ("initContainers", "containers"):
            for c in spec.get(key) or []:
                if isinstance(c, dict) and c.get("name") in holders and isinstance(c.get("image"), str):
                    c["image"] = resolve(c["image"])
                    changed = True
    return out if changed else None
