"""What the Kubernetes OpenAPI schema checks (``kubernetes_validate``) need: the version to validate against, and
recorded inputs as the API server would see them."""

from __future__ import annotations

from typing import Any

from pulumi.runtime import rpc

K8S_VERSION = "1.34.0"
"""The EKS default in the spec, and within GKE's REGULAR channel range."""


def unwrap_secrets(value: Any) -> Any:
    """Recorded inputs keep Pulumi secrets wrapped; the API server sees the plain value."""
    if rpc.is_rpc_secret(value):
        return unwrap_secrets(value["value"])
    if isinstance(value, dict):
        return {k: unwrap_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap_secrets(v) for v in value]
    return value
