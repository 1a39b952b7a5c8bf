"""A dedicated, least-privilege Google service account for GKE nodes (never the Compute Engine default)."""

from __future__ import annotations

import hashlib

import pulumi
import pulumi_gcp as gcp

NODE_ROLES = (
    "roles/container.defaultNodeServiceAccount",  # logging, monitoring, metadata: GKE's node baseline
    "roles/artifactregistry.reader",  # pull images from Artifact Registry
)


def service_account_id(cluster: str, role: str) -> str:
    """GCP account IDs are 6-30 chars; keep them readable and unique per cluster and role."""
    full = f"{cluster}-{role}"
    if len(full) <= 30:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:6]
    return f"{full[:23].rstrip('-')}-{digest}"


class GkeNodeServiceAccount(pulumi.ComponentResource):
    """Service account plus the project roles a GKE node needs, and nothing more."""

    email: pulumi.Output[str]

    def __init__(self, name: str, account_id: str, project: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-cluster:gcp:GkeNodeServiceAccount", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        account = gcp.serviceaccount.Account(
            f"{name}-sa",
            account_id=account_id,
            project=project,
            display_name=f"GKE nodes ({account_id}), managed by gpu-cluster",
            opts=child,
        )
        self.email = account.email
        for role in NODE_ROLES:
            gcp.projects.IAMMember(
                f"{name}-{role.split('/')[1].replace('.', '-').lower()}",
                project=project,
                role=role,
                member=account.email.apply(lambda e: f"serviceAccount:{e}"),
                opts=child,
            )
        self.register_outputs({"email": self.email})
