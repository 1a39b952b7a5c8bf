"""The Slurm auth key, the JWT key and the accounting database's passwords (slurmdbd's user and MariaDB's root):
generated once by Pulumi, kept secret.

The slurm chart can generate keys itself (``randAscii`` at render time), but a key that changes on every deploy
breaks auth between slurmctld, slurmd and slurmdbd (SlinkyProject/containers#10). ``random.RandomBytes`` and
``RandomPassword`` are generated once and stay stable; their values reach Kubernetes only as Secret ``data``, marked
as Pulumi secrets, and never appear in Helm values, stack outputs or logs.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from components.k8s.objects import MANAGED_BY
from render.slurm_values import SecretRefs

SLURM_KEY_BYTES = 1024
"""auth/slurm key size (what Slinky's chart generates)."""
JWT_KEY_BYTES = 64
"""HS256 key for auth/jwt (slurmrestd); Slurm's docs use 32 random bytes, 64 is within HMAC-SHA256's block size."""
DB_PASSWORD_LENGTH = 32


class SlurmSecrets(pulumi.ComponentResource):
    """Kubernetes Secrets in the Slurm namespace, named as ``refs`` says, from Pulumi-generated randomness: the two
    keys, and with accounting the database user's and the database root's passwords."""

    refs: SecretRefs
    slurm_key: k8s.core.v1.Secret
    jwt_key: k8s.core.v1.Secret
    db_password: k8s.core.v1.Secret | None
    db_root_password: k8s.core.v1.Secret | None

    def __init__(
        self,
        name: str,
        namespace: pulumi.Input[str],
        accounting: bool,
        protect: bool,
        refs: SecretRefs = SecretRefs(),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:slurm:SlurmSecrets", name, None, opts)
        self.refs = refs
        kept = pulumi.ResourceOptions(parent=self, protect=protect)  # losing a key breaks auth across the cluster
        slurm_key = random.RandomBytes(f"{name}-slurm-key", length=SLURM_KEY_BYTES, opts=kept)
        jwt_key = random.RandomBytes(f"{name}-jwt-key", length=JWT_KEY_BYTES, opts=kept)
        self.slurm_key = self._secret(
            f"{name}-slurm-key", refs.slurm_key, namespace, {refs.slurm_key_key: slurm_key.base64}, kept
        )
        self.jwt_key = self._secret(
            f"{name}-jwt-key", refs.jwt_key, namespace, {refs.jwt_key_key: jwt_key.base64}, kept
        )
        self.db_password = self.db_root_password = None
        if accounting:
            password = random.RandomPassword(f"{name}-db-password", length=DB_PASSWORD_LENGTH, special=False, opts=kept)
            self.db_password = self._secret(
                f"{name}-db-password",
                refs.db_password,
                namespace,
                {refs.db_password_key: password.result},
                kept,
                encoded=False,
            )
            # Set explicitly: the image's MARIADB_RANDOM_ROOT_PASSWORD would print the root password to the pod log.
            root = random.RandomPassword(
                f"{name}-db-root-password", length=DB_PASSWORD_LENGTH, special=False, opts=kept
            )
            self.db_root_password = self._secret(
                f"{name}-db-root-password",
                refs.db_root_password,
                namespace,
                {refs.db_root_password_key: root.result},
                kept,
                encoded=False,
            )
        self.register_outputs(
            {
                "slurmKeySecret": refs.slurm_key,
                "jwtKeySecret": refs.jwt_key,
                "dbPasswordSecret": refs.db_password if accounting else None,
                "dbRootPasswordSecret": refs.db_root_password if accounting else None,
            }
        )

    @staticmethod
    def _secret(
        resource: str,
        name: str,
        namespace: pulumi.Input[str],
        data: dict[str, pulumi.Output[str]],
        opts: pulumi.ResourceOptions,
        encoded: bool = True,
    ) -> k8s.core.v1.Secret:
        """``encoded``: values are base64 already (``data``); else plain text (``string_data``). Either way the
        values are wrapped as Pulumi secrets here, whatever the provider does."""
        wrapped: dict[str, pulumi.Output[str]] = {k: pulumi.Output.secret(v) for k, v in data.items()}
        return k8s.core.v1.Secret(
            resource,
            metadata={"name": name, "namespace": namespace, "labels": MANAGED_BY},
            type="Opaque",
            data=wrapped if encoded else None,
            string_data=None if encoded else wrapped,
            opts=opts,
        )
