"""Katib (hyperparameter tuning), standalone install at a pinned tag, with its MySQL password generated."""

from __future__ import annotations

from typing import Sequence

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from components.charts import KATIB_MANIFESTS, MANIFEST_MYSQL_IMAGE
from components.k8s.manifest_secrets import (
    BASELINE_PSS,
    ImageOverride,
    ManifestRewrites,
    SecretOverride,
    manifest_transform,
)

PASSWORD_LENGTH = 32


MYSQL_DEPLOYMENT = "katib-mysql"
UI_DEPLOYMENT = "katib-ui"
"""The UI authenticates nobody and creates Experiments in any namespace with katib-controller's rights: not run."""


def katib_rewrites(mysql_password: pulumi.Input[str]) -> ManifestRewrites:
    """Both MySQL and the DB manager read the root password from ``katib-mysql-secrets`` (upstream: ``test``); the UI
    is kept at 0 replicas; ``kubeflow`` gets Pod Security ``baseline``; MySQL runs the pinned 8.4 LTS image."""
    return ManifestRewrites(
        secrets=(SecretOverride("katib-mysql-secrets", {"MYSQL_ROOT_PASSWORD": mysql_password}),),
        images=(ImageOverride(MYSQL_DEPLOYMENT, MYSQL_DEPLOYMENT, MANIFEST_MYSQL_IMAGE),),
        namespace_labels=BASELINE_PSS,
        scale_to_zero=(UI_DEPLOYMENT,),
    )


class Katib(pulumi.ComponentResource):
    """Applies Katib's standalone kustomization (namespace ``kubeflow``) with the MySQL root password replaced by a
    generated one (the upstream Secret ``katib-mysql-secrets`` says ``test``, and both MySQL and the DB manager read
    the password from it), the UI at 0 replicas and ``kubeflow`` at Pod Security ``baseline``."""

    mysql_password: pulumi.Output[str]
    """Secret: the generated MySQL root password."""

    def __init__(self, name: str, after: Sequence[pulumi.Resource] = (), opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-cluster:scheduling:Katib", name, None, opts)
        password = random.RandomPassword(
            f"{name}-mysql-password", length=PASSWORD_LENGTH, special=False, opts=pulumi.ResourceOptions(parent=self)
        )
        self.mysql_password = pulumi.Output.secret(password.result)
        rewrites = katib_rewrites(self.mysql_password)
        self.manifests = k8s.kustomize.v2.Directory(
            f"{name}-manifests",
            directory=KATIB_MANIFESTS,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(after), transforms=[manifest_transform(rewrites)]),
        )
        self.register_outputs({"mysqlPassword": self.mysql_password})
