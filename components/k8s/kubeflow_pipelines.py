"""Kubeflow Pipelines (standalone, platform-agnostic) at a pinned tag, with MinIO and MySQL credentials generated."""

from __future__ import annotations

from typing import Sequence

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from components.charts import KFP_MINIO_IMAGE, KUBEFLOW_PIPELINES_MANIFESTS, MANIFEST_MYSQL_IMAGE
from components.k8s.manifest_secrets import (
    BASELINE_PSS,
    EnvOverride,
    ImageOverride,
    ManifestRewrites,
    SecretOverride,
    manifest_transform,
)

PASSWORD_LENGTH = 32
MINIO_USER_LENGTH = 20


CACHE_DEPLOYMENTS = ("cache-deployer-deployment", "cache-server")
"""The v1 cache webhook: its deployer may create mutating webhooks and approve CSRs (cluster-admin in effect) and is
startable through the unauthenticated API; the server needs the certificate only the deployer makes. Not run."""
CACHE_DEPLOYER_CLUSTER_ROLE = "kubeflow-pipelines-cache-deployer-clusterrole"


def cluster_rewrites() -> ManifestRewrites:
    """The cluster-scoped install: the cache deployer's ClusterRole loses its rules."""
    return ManifestRewrites(emptied_cluster_roles=(CACHE_DEPLOYER_CLUSTER_ROLE,))


def pipelines_rewrites(
    minio_access_key: pulumi.Input[str], minio_secret_key: pulumi.Input[str], mysql_password: pulumi.Input[str]
) -> ManifestRewrites:
    """MinIO and the pipeline servers read ``mlpipeline-minio-artifact``; the API, cache and metadata servers read
    ``mysql-secret``, and MySQL itself now takes its root password from there too. MySQL and MinIO run current pinned
    images (``components/charts.py``); MinIO reads the same Secret under the variable names current releases use."""
    return ManifestRewrites(
        secrets=(
            SecretOverride("mlpipeline-minio-artifact", {"accesskey": minio_access_key, "secretkey": minio_secret_key}),
            SecretOverride("mysql-secret", {"username": "root", "password": mysql_password}),
        ),
        env=(
            EnvOverride(
                deployment="mysql",
                container="mysql",
                drop="MYSQL_ALLOW_EMPTY_PASSWORD",
                name="MYSQL_ROOT_PASSWORD",
                secret="mysql-secret",
                key="password",
            ),
            EnvOverride(
                deployment="minio",
                container="minio",
                drop="MINIO_ACCESS_KEY",
                name="MINIO_ROOT_USER",
                secret="mlpipeline-minio-artifact",
                key="accesskey",
            ),
            EnvOverride(
                deployment="minio",
                container="minio",
                drop="MINIO_SECRET_KEY",
                name="MINIO_ROOT_PASSWORD",
                secret="mlpipeline-minio-artifact",
                key="secretkey",
            ),
        ),
        images=(
            ImageOverride("mysql", "mysql", MANIFEST_MYSQL_IMAGE),
            ImageOverride("minio", "minio", KFP_MINIO_IMAGE),
        ),
        namespace_labels=BASELINE_PSS,
        scale_to_zero=CACHE_DEPLOYMENTS,
    )


class KubeflowPipelines(pulumi.ComponentResource):
    """Applies the cluster-scoped resources (CRDs) and then the platform-agnostic install (namespace ``kubeflow``).

    Upstream ships MinIO with ``minio``/``minio123`` (Secret ``mlpipeline-minio-artifact``, read by MinIO and the
    pipeline servers) and MySQL with an empty root password (``MYSQL_ALLOW_EMPTY_PASSWORD`` and Secret
    ``mysql-secret``). Both Secrets get generated values, and MySQL takes its root password from ``mysql-secret``.
    The cache deployer and server run at 0 replicas with the deployer's ClusterRole emptied, and ``kubeflow`` gets
    Pod Security ``baseline``; the API is unauthenticated (single-user mode), so the Kubeflow component's
    NetworkPolicies keep everything outside ``kubeflow`` away from it.
    The rewrite applies to fresh installs: an existing MySQL volume keeps the password it was initialised with.
    """

    minio_secret_key: pulumi.Output[str]
    mysql_password: pulumi.Output[str]

    def __init__(self, name: str, after: Sequence[pulumi.Resource] = (), opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-cluster:scheduling:KubeflowPipelines", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        access = random.RandomPassword(f"{name}-minio-access-key", length=MINIO_USER_LENGTH, special=False, opts=child)
        secret = random.RandomPassword(f"{name}-minio-secret-key", length=PASSWORD_LENGTH, special=False, opts=child)
        mysql = random.RandomPassword(f"{name}-mysql-password", length=PASSWORD_LENGTH, special=False, opts=child)
        self.minio_secret_key = pulumi.Output.secret(secret.result)
        self.mysql_password = pulumi.Output.secret(mysql.result)
        rewrites = pipelines_rewrites(pulumi.Output.secret(access.result), self.minio_secret_key, self.mysql_password)
        crds = k8s.kustomize.v2.Directory(
            f"{name}-cluster-resources",
            directory=KUBEFLOW_PIPELINES_MANIFESTS["cluster"],
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=list(after), transforms=[manifest_transform(cluster_rewrites())]
            ),
        )
        self.manifests = k8s.kustomize.v2.Directory(
            f"{name}-manifests",
            directory=KUBEFLOW_PIPELINES_MANIFESTS["platform"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[crds], transforms=[manifest_transform(rewrites)]),
        )
        self.register_outputs({"minioSecretKey": self.minio_secret_key, "mysqlPassword": self.mysql_password})
