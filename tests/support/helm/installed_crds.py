"""CRDs a stack gets from somewhere other than its Helm releases, for the release checks: CRD manifests the program
applies from a pinned URL (read from the staged copy in ``../shared/schemas``), and the Gateway API CRDs GKE installs
when a cluster turns its Gateway controller on (the staged upstream v1.6.1 standard channel; GKE's own version may
differ), and the InferencePool CRD GKE installs from the version serving stacks must pin (the staged upstream v1 CRD,
``stacks/validate/serving_gateway.py``; GKE's own copy may differ). GKE's policy kinds (GCPBackendPolicy, HealthCheckPolicy) have no staged schema: they are listed as known
kinds and reported as not validated, never passed with a stand-in schema."""

from __future__ import annotations

from typing import Any

import yaml

from preview.engine import Recording
from tests.conftest import require_shared
from tests.support.helm.checks import CRDs, crds_of

STAGED_URLS = {
    "inference.networking.k8s.io_inferencepools.yaml": "gateway-api-inference-extension/v1.6.0/config/crd/bases/inference.networking.k8s.io_inferencepools.yaml",
}
GATEWAY_API = (
    "gateway.networking.k8s.io_gatewayclasses.yaml",
    "gateway.networking.k8s.io_gateways.yaml",
    "gateway.networking.k8s.io_httproutes.yaml",
    "gateway.networking.k8s.io_referencegrants.yaml",
)
GKE_UNSTAGED = frozenset({("networking.gke.io", "GCPBackendPolicy"), ("networking.gke.io", "HealthCheckPolicy")})
"""Installed by GKE with the Gateway controller; no schema staged, so objects of these kinds are not validated."""


def _staged(path: str) -> dict[str, Any]:
    return yaml.safe_load(require_shared("schemas", path).read_text(encoding="utf-8"))


def installed_crds(rec: Recording) -> tuple[CRDs, frozenset[tuple[str, str]]]:
    """(CRDs with a staged schema, kinds known but not validated) the recording installs outside Helm."""
    docs = []
    for r in rec.resources:
        if r.type == "kubernetes:yaml/v2:ConfigFile":
            name = str(r.inputs.get("file", "")).rsplit("/", 1)[-1]
            if name in STAGED_URLS:
                docs.append(_staged(STAGED_URLS[name]))
    gateway = any(r.type == "gcp:container/cluster:Cluster" and r.inputs.get("gatewayApiConfig") for r in rec.resources)
    if gateway:
        docs += [_staged(f"gateway-api/v1.6.1/config/crd/standard/{f}") for f in GATEWAY_API]
        docs.append(_staged(STAGED_URLS["inference.networking.k8s.io_inferencepools.yaml"]))
    return crds_of(docs), (GKE_UNSTAGED if gateway else frozenset())
