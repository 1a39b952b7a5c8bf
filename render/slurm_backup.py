"""Slurm accounting data that survives: the database volume's StorageClass and a scheduled ``mariadb-dump`` of
``slurm_acct_db`` to a bucket (GCS on GKE, S3 on EKS). Pure: no Pulumi; ``components/slurm/backup.py`` registers
these objects and the bucket and cloud identity they name.

- **StorageClass** ``slurm-db-retain``: ``reclaimPolicy: Retain`` (deleting the claim keeps the disk and its data),
  ``WaitForFirstConsumer``, expansion allowed; on EKS gp3 with ``encrypted: "true"`` (the EBS CSI driver's default is
  unencrypted unless the account enforces EBS encryption by default), on GKE ``pd-balanced`` (Persistent Disks are
  always encrypted at rest).
- **CronJob** ``slurm-db-backup``: an init container with the pinned MariaDB image dumps the database (the same
  flags ``tests/render/test_slurm_backup_real.py`` dumps and restores a real slurmdbd database with) into an
  ``emptyDir``; the main container uploads the file with the cloud's CLI as the ServiceAccount ``slurm-db-backup``,
  which the cloud maps to an identity that may only create objects under the prefix (GKE Workload Identity,
  EKS Pod Identity). No static cloud key exists anywhere.
"""

from __future__ import annotations

import shlex
from typing import Any

from catalog import Cloud

STORAGE_CLASS = "slurm-db-retain"
BACKUP_NAME = "slurm-db-backup"
"""CronJob and ServiceAccount name."""
BACKUP_PREFIX = "slurm-accounting"
"""Object prefix in the bucket: ``<prefix>/<cluster>/slurm_acct_db-<UTC time>.sql.gz``."""
DUMP_DIR = "/backup"
DUMP_FLAGS = (
    "--single-transaction",
    "--quick",
    "--routines",
    "--triggers",
    "--events",
    "--hex-blob",
    "--default-character-set=utf8mb4",
    "--databases",
)
"""``--single-transaction``: one consistent InnoDB snapshot without locking slurmdbd out; ``--databases``: the dump
creates the database itself, so it restores into an empty server."""
CSI_PROVISIONER = {Cloud.GCP: "pd.csi.storage.gke.io", Cloud.AWS: "ebs.csi.aws.com"}
UPLOAD_IMAGE = {
    Cloud.GCP: "gcr.io/google.com/cloudsdktool/google-cloud-cli:548.0.0-slim",
    Cloud.AWS: "public.ecr.aws/aws-cli/aws-cli:2.32.10",
}
"""The clouds' own CLI images, pinned to a release (a moving tag would change what runs with the bucket role)."""
SCHEDULE = "17 3 * * *"
"""Daily at 03:17 UTC (off the hour, when most clusters' jobs start)."""


def storage_class(cloud: Cloud) -> dict[str, Any]:
    params = {"type": "gp3", "encrypted": "true"} if cloud == Cloud.AWS else {"type": "pd-balanced"}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": STORAGE_CLASS, "labels": {"app.kubernetes.io/part-of": "gpu-cluster"}},
        "provisioner": CSI_PROVISIONER[cloud],
        "parameters": params,
        "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    }


def dump_script(host: str, port: int, user: str, database: str, out_dir: str = DUMP_DIR) -> str:
    """bash: the dump, gzipped, named by UTC time; the password comes from ``MYSQL_PWD`` (never the command line).
    A failed dump fails the script (``pipefail``) and leaves no file."""
    file = f"{out_dir}/{database}-$(date -u +%Y%m%dT%H%M%SZ).sql.gz"
    dump = shlex.join(["mariadb-dump", *DUMP_FLAGS, database, "-h", host, "-P", str(port), "-u", user])
    return (
        "\n".join(
            [
                "set -euo pipefail",
                f'out="{file}"',
                """trap 'rm -f "$out.part"' EXIT""",
                f'{dump} | gzip -c > "$out.part"',
                'mv "$out.part" "$out"',
                'ls -l "$out"',
            ]
        )
        + "\n"
    )


def restore_script(dump_file: str, root_socket_or_host: str = "") -> str:
    """bash: load a dump into an empty MariaDB as root (the dump recreates the database). Operators run it in the
    MariaDB pod with slurmdbd stopped (docs/slurm.md)."""
    target = f" {root_socket_or_host}" if root_socket_or_host else ""
    return "\n".join(["set -euo pipefail", f"gunzip -c {shlex.quote(dump_file)} | mariadb -u root{target}"]) + "\n"


def object_prefix(cluster: str) -> str:
    return f"{BACKUP_PREFIX}/{cluster}/"


def upload_command(cloud: Cloud, cluster: str) -> list[str]:
    """The bucket comes from ``$BACKUP_BUCKET`` (its name is known only once the bucket exists)."""
    dest = object_prefix(cluster)
    if cloud == Cloud.GCP:
        return ["sh", "-c", f'gcloud storage cp {DUMP_DIR}/*.sql.gz "gs://$BACKUP_BUCKET/{dest}"']
    return [
        "sh",
        "-c",
        f'aws s3 cp {DUMP_DIR}/ "s3://$BACKUP_BUCKET/{dest}" --recursive --exclude "*" '
        f'--include "*.sql.gz" --sse aws:kms',
    ]


def backup_cron_job(
    cloud: Cloud,
    namespace: Any,
    bucket: Any,
    cluster: str,
    db_host: str,
    db_port: int,
    db_user: str,
    database: str,
    password_secret: str,
    password_key: str,
    mariadb_image: str,
    uid: int,
) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": BACKUP_NAME, "app.kubernetes.io/part-of": "slurm"}
    locked = {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
    }
    pod = {
        "serviceAccountName": BACKUP_NAME,
        "automountServiceAccountToken": False,  # the clouds' identity agents inject what the CLI needs
        "restartPolicy": "OnFailure",
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "securityContext": {
            "runAsUser": uid,
            "runAsGroup": uid,
            "runAsNonRoot": True,
            "fsGroup": uid,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumes": [{"name": "dump", "emptyDir": {"sizeLimit": "20Gi"}}, {"name": "tmp", "emptyDir": {}}],
        "initContainers": [
            {
                "name": "dump",
                "image": mariadb_image,
                "command": ["bash", "-c", dump_script(db_host, db_port, db_user, database)],
                "env": [
                    {"name": "MYSQL_PWD", "valueFrom": {"secretKeyRef": {"name": password_secret, "key": password_key}}}
                ],
                "volumeMounts": [{"name": "dump", "mountPath": DUMP_DIR}, {"name": "tmp", "mountPath": "/tmp"}],
                "securityContext": locked,
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
            }
        ],
        "containers": [
            {
                "name": "upload",
                "image": UPLOAD_IMAGE[cloud],
                "command": upload_command(cloud, cluster),
                "env": [
                    {"name": "BACKUP_BUCKET", "value": bucket},
                    {"name": "HOME", "value": "/tmp"},
                    {"name": "CLOUDSDK_CONFIG", "value": "/tmp/gcloud"},
                ],
                "volumeMounts": [
                    {"name": "dump", "mountPath": DUMP_DIR, "readOnly": True},
                    {"name": "tmp", "mountPath": "/tmp"},
                ],
                "securityContext": locked,
                "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
            }
        ],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": BACKUP_NAME, "namespace": namespace, "labels": labels},
        "spec": {
            "schedule": SCHEDULE,
            "timeZone": "Etc/UTC",
            "concurrencyPolicy": "Forbid",
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 3,
            "jobTemplate": {
                "spec": {
                    "backoffLimit": 3,
                    "ttlSecondsAfterFinished": 86400,
                    "template": {"metadata": {"labels": labels}, "spec": pod},
                }
            },
        },
    }
