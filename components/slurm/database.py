"""MariaDB for slurmdbd: a one-replica StatefulSet with a persistent volume and a ClusterIP Service.

The slurm chart expects an external database (``accounting.storageConfig``); this is it. Both passwords come from
Secrets ``SlurmSecrets`` made from Pulumi-generated values: slurmdbd's user (the image's ``MARIADB_PASSWORD``) and
root (``MARIADB_ROOT_PASSWORD``, read only by this container). Root is set explicitly because the image's
``MARIADB_RANDOM_ROOT_PASSWORD`` prints the generated password to the pod log. Both apply when the volume is first
initialised; to read the root password: ``kubectl -n slurm get secret slurm-db-root-password -o
jsonpath='{.data.password}' | base64 -d``.
The volume outlives the StatefulSet (``persistentVolumeClaimRetentionPolicy: Retain``) and the StatefulSet is
retained on delete, so job history survives a ``pulumi destroy`` of the Slurm layer.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.charts import MARIADB_IMAGE
from components.k8s.custom_resources import custom_resource
from components.k8s.objects import MANAGED_BY
from render.slurm_values import DATABASE, DATABASE_USER, MARIADB_PORT, SecretRefs

MARIADB_ARGS = ("--innodb-snapshot-isolation=OFF", "--innodb-lock-wait-timeout=900", "--innodb-buffer-pool-size=4G")
"""What slurmdbd 26.05 checks on connect: with MariaDB 11.8's default snapshot isolation it logs an error and would
die on a write conflict; a smaller buffer pool or lock timeout is logged as "not recommended" (checked against real
slurmdbd 26.05.5 + MariaDB 11.8 in tests/render/test_slurm_real.py, which starts MariaDB with these same arguments)."""
LABELS = {"app.kubernetes.io/name": "mariadb", "app.kubernetes.io/part-of": "slurm", **MANAGED_BY}
MYSQL_UID = 999
"""The mysql user of the official image."""


class SlurmDatabase(pulumi.ComponentResource):
    """One MariaDB pod on the system pool, its data on a ``storage_gib`` PersistentVolumeClaim."""

    service_name: str

    def __init__(
        self,
        name: str,
        namespace: pulumi.Input[str],
        refs: SecretRefs,
        storage_gib: int = 50,
        protect: bool = True,
        after: list[pulumi.Resource] | None = None,
        storage_class: dict[str, Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """``after``: what must exist first (the password Secrets); the StatefulSet waits for them.
        ``storage_class``: the rendered ``Retain`` StorageClass of the volume (``render/slurm_backup.py``)."""
        super().__init__("gpu-cluster:slurm:SlurmDatabase", name, None, opts)
        after = list(after or [])
        if storage_class is not None:
            after.append(
                custom_resource(
                    f"{name}-storage-class", storage_class, pulumi.ResourceOptions(parent=self, protect=protect)
                )
            )
        self.service_name = refs.db_host
        meta = {"name": refs.db_host, "namespace": namespace, "labels": LABELS}
        k8s.core.v1.Service(
            f"{name}-service",
            metadata=meta,
            spec={
                "selector": {"app.kubernetes.io/name": "mariadb", "app.kubernetes.io/part-of": "slurm"},
                "ports": [{"name": "mysql", "port": MARIADB_PORT, "target_port": "mysql"}],
                "type": "ClusterIP",
            },
            opts=pulumi.ResourceOptions(parent=self),
        )
        password = {"secret_key_ref": {"name": refs.db_password, "key": refs.db_password_key}}
        root_password = {"secret_key_ref": {"name": refs.db_root_password, "key": refs.db_root_password_key}}
        container = {
            "name": "mariadb",
            "image": MARIADB_IMAGE,
            "args": list(MARIADB_ARGS),
            "env": [
                {"name": "MARIADB_DATABASE", "value": DATABASE},
                {"name": "MARIADB_USER", "value": DATABASE_USER},
                {"name": "MARIADB_PASSWORD", "value_from": password},
                {"name": "MARIADB_ROOT_PASSWORD", "value_from": root_password},
            ],
            "ports": [{"name": "mysql", "container_port": MARIADB_PORT}],
            "volume_mounts": [{"name": "data", "mount_path": "/var/lib/mysql"}],
            "resources": {"requests": {"cpu": "500m", "memory": "6Gi"}, "limits": {"memory": "6Gi"}},  # 4 GiB pool
            "readiness_probe": {
                "exec": {"command": ["healthcheck.sh", "--connect", "--innodb_initialized"]},
                "period_seconds": 10,
            },
            "liveness_probe": {
                "exec": {"command": ["healthcheck.sh", "--connect"]},
                "initial_delay_seconds": 60,
                "period_seconds": 20,
            },
            "security_context": {
                "allow_privilege_escalation": False,
                "run_as_non_root": True,
                "run_as_user": MYSQL_UID,
                "capabilities": {"drop": ["ALL"]},
            },
        }
        k8s.apps.v1.StatefulSet(
            f"{name}-statefulset",
            metadata=meta,
            spec={
                "service_name": refs.db_host,
                "replicas": 1,
                "selector": {
                    "match_labels": {"app.kubernetes.io/name": "mariadb", "app.kubernetes.io/part-of": "slurm"}
                },
                "persistent_volume_claim_retention_policy": {"when_deleted": "Retain", "when_scaled": "Retain"},
                "template": {
                    "metadata": {"labels": LABELS},
                    "spec": {
                        "containers": [container],
                        "automount_service_account_token": False,
                        "security_context": {"fs_group": MYSQL_UID, "seccomp_profile": {"type": "RuntimeDefault"}},
                        "node_selector": {"kubernetes.io/os": "linux"},
                    },
                },
                "volume_claim_templates": [
                    {
                        "metadata": {"name": "data", "labels": LABELS},
                        "spec": {
                            "access_modes": ["ReadWriteOnce"],
                            **({"storage_class_name": storage_class["metadata"]["name"]} if storage_class else {}),
                            "resources": {"requests": {"storage": f"{storage_gib}Gi"}},
                        },
                    }
                ],
            },
            # a claim template cannot change: a database made before the StorageClass keeps its volume as it is
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=protect,
                retain_on_delete=True,
                depends_on=after,
                ignore_changes=["spec.volumeClaimTemplates"],
            ),
        )
        self.register_outputs({"service": refs.db_host})
