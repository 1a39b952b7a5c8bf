"""Where GKE nodes get images fast: the Container File System API that image streaming needs, and Artifact Registry
remote repositories mirroring nvcr.io / ghcr.io (``cluster.imageMirrors``) so GPU images come from Artifact Registry,
which image streaming can stream and which keeps pulls in the region."""

from __future__ import annotations

from typing import Sequence

import pulumi
import pulumi_gcp as gcp

from stacks.plan.stack import MirrorPlan

STREAMING_API = "containerfilesystem.googleapis.com"
"""GKE image streaming requires the Container File System API (GKE docs, "Use Image streaming")."""
REGISTRY_API = "artifactregistry.googleapis.com"


def remote_repository_config(mirror: MirrorPlan) -> dict:
    """A Docker remote repository on a custom upstream (``common_repository.uri``; the older
    ``docker_repository.custom_repository`` is deprecated in pulumi-gcp 10.2.0), with upstream credentials from
    Secret Manager when given."""
    config: dict = {
        "description": f"{mirror.upstream}, mirrored by gpu-cluster",
        "common_repository": {"uri": f"https://{mirror.upstream}"},
    }
    if mirror.username is not None:
        config["upstream_credentials"] = {
            "username_password_credentials": {
                "username": mirror.username,
                "password_secret_version": mirror.password_secret_version,
            }
        }
    return config


class GkeImageSources(pulumi.ComponentResource):
    """The APIs image streaming and mirrors need (never disabled on destroy: other workloads may use them) and one
    remote repository per mirror. Node pools that stream wait for ``streaming_api``."""

    streaming_api: gcp.projects.Service | None
    repositories: dict[str, gcp.artifactregistry.Repository]

    def __init__(
        self,
        name: str,
        project: str,
        region: str,
        streaming: bool,
        mirrors: Sequence[MirrorPlan],
        labels: dict[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:gcp:GkeImageSources", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.streaming_api = (
            gcp.projects.Service(
                f"{name}-containerfilesystem",
                project=project,
                service=STREAMING_API,
                disable_on_destroy=False,
                opts=child,
            )
            if streaming
            else None
        )
        self.repositories = {}
        if mirrors:
            api = gcp.projects.Service(
                f"{name}-artifactregistry", project=project, service=REGISTRY_API, disable_on_destroy=False, opts=child
            )
            for mirror in mirrors:
                repo_id = mirror.repository
                self.repositories[mirror.upstream] = gcp.artifactregistry.Repository(
                    f"{name}-{repo_id}",
                    project=project,
                    location=region,
                    repository_id=repo_id,
                    format="DOCKER",
                    mode="REMOTE_REPOSITORY",
                    description=f"Remote repository for {mirror.upstream} (GPU images), managed by gpu-cluster",
                    remote_repository_config=remote_repository_config(mirror),
                    labels=labels or None,
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[api]),
                )
        self.register_outputs({"mirrors": {u: r.name for u, r in self.repositories.items()}})
