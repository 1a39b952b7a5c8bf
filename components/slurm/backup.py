"""Backups of the Slurm accounting database: a bucket, an identity that may only add objects to it, and the
CronJob that dumps ``slurm_acct_db`` there (``render/slurm_backup.py``).

- GKE: a GCS bucket (uniform access, public access prevention enforced, versioned, objects deleted after
  ``retention_days``), a Google service account with ``roles/storage.objectCreator`` on that bucket only (create,
  no read, overwrite or delete), and Workload Identity (``roles/iam.workloadIdentityUser`` for
  ``<project>.svc.id.goog[slurm/slurm-db-backup]``, the Kubernetes ServiceAccount annotated with the email).
- EKS: an S3 bucket (public access blocked, versioned, SSE-KMS with a bucket key, expiry), an IAM role trusting
  EKS Pod Identity (``pods.eks.amazonaws.com``) whose only permission is ``s3:PutObject`` under
  ``slurm-accounting/<cluster>/`` of that bucket, and the Pod Identity association for ``slurm/slurm-db-backup``.
The bucket is ``protect``ed with the stack's ``deletionProtection`` and never force-destroyed: backups outlive the
cluster.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from catalog import Cloud
from components.charts import MARIADB_IMAGE
from components.eks.node_role import assume_role_policy
from components.k8s.custom_resources import custom_resource
from components.k8s.objects import MANAGED_BY
from components.slurm.database import MYSQL_UID
from render.slurm_backup import BACKUP_NAME, backup_cron_job, object_prefix
from render.slurm_values import DATABASE, DATABASE_USER, MARIADB_PORT, SecretRefs


def gcp_account_id(cluster: str) -> str:
    """6-30 characters, lower-case letters, digits and ``-``, starting with a letter."""
    base = re.sub(r"[^a-z0-9-]", "-", cluster.lower()).strip("-")[:19].rstrip("-") or "slurm"
    return f"{base}-slurm-backup" if base[0].isalpha() else f"s{base}-slurm-backup"[:30]


class SlurmBackup(pulumi.ComponentResource):
    bucket_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        cloud: Cloud,
        namespace: pulumi.Input[str],
        cluster_name: str,
        refs: SecretRefs,
        retention_days: int,
        protect: bool,
        project: str | None = None,
        region: str | None = None,
        eks_cluster: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """Give it the cloud provider and the cluster's Kubernetes provider. ``eks_cluster``: the EKS cluster's
        name (for the Pod Identity association)."""
        super().__init__("gpu-cluster:slurm:SlurmBackup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        kept = pulumi.ResourceOptions(parent=self, protect=protect)
        annotations: dict[str, Any] = {}
        if cloud == Cloud.GCP:
            bucket = gcp.storage.Bucket(
                f"{name}-bucket",
                location=(region or "").upper(),
                uniform_bucket_level_access=True,
                public_access_prevention="enforced",
                versioning={"enabled": True},
                force_destroy=False,
                lifecycle_rules=[{"action": {"type": "Delete"}, "condition": {"age": retention_days}}],
                opts=kept,
            )
            account = gcp.serviceaccount.Account(
                f"{name}-account",
                account_id=gcp_account_id(cluster_name),
                display_name=f"Slurm accounting backups of {cluster_name} (gpu-cluster)",
                opts=child,
            )
            gcp.storage.BucketIAMMember(
                f"{name}-writer",
                bucket=bucket.name,
                role="roles/storage.objectCreator",
                member=account.email.apply(lambda e: f"serviceAccount:{e}"),
                opts=child,
            )
            gcp.serviceaccount.IAMMember(
                f"{name}-workload-identity",
                service_account_id=account.name,
                role="roles/iam.workloadIdentityUser",
                member=pulumi.Output.from_input(namespace).apply(
                    lambda ns: f"serviceAccount:{project}.svc.id.goog[{ns}/{BACKUP_NAME}]"
                ),
                opts=child,
            )
            annotations["iam.gke.io/gcp-service-account"] = account.email
            self.bucket_name = bucket.name
        else:
            s3 = aws.s3.Bucket(f"{name}-bucket", force_destroy=False, opts=kept)
            aws.s3.BucketPublicAccessBlock(
                f"{name}-public-access",
                bucket=s3.id,
                block_public_acls=True,
                block_public_policy=True,
                ignore_public_acls=True,
                restrict_public_buckets=True,
                opts=child,
            )
            aws.s3.BucketVersioning(
                f"{name}-versioning", bucket=s3.id, versioning_configuration={"status": "Enabled"}, opts=child
            )
            aws.s3.BucketServerSideEncryptionConfiguration(
                f"{name}-encryption",
                bucket=s3.id,
                rules=[
                    {
                        "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms"},
                        "bucket_key_enabled": True,
                    }
                ],
                opts=child,
            )
            aws.s3.BucketLifecycleConfiguration(
                f"{name}-lifecycle",
                bucket=s3.id,
                rules=[
                    {
                        "id": "expire-dumps",
                        "status": "Enabled",
                        "filter": {"prefix": object_prefix(cluster_name)},
                        "expiration": {"days": retention_days},
                        "noncurrent_version_expiration": {"noncurrent_days": retention_days},
                    }
                ],
                opts=child,
            )
            role = aws.iam.Role(
                f"{name}-role",
                assume_role_policy=assume_role_policy("pods.eks.amazonaws.com", ("sts:AssumeRole", "sts:TagSession")),
                description=f"Slurm accounting backups of {cluster_name}, managed by gpu-cluster",
                opts=child,
            )
            policy = aws.iam.RolePolicy(
                f"{name}-policy",
                role=role.id,
                policy=s3.arn.apply(lambda arn: json.dumps(put_only_policy(arn, cluster_name))),
                opts=child,
            )
            aws.eks.PodIdentityAssociation(
                f"{name}-pod-identity",
                cluster_name=eks_cluster,
                namespace=namespace,
                service_account=BACKUP_NAME,
                role_arn=role.arn,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
            )
            self.bucket_name = s3.bucket
        k8s.core.v1.ServiceAccount(
            f"{name}-account-k8s",
            metadata={
                "name": BACKUP_NAME,
                "namespace": namespace,
                "labels": MANAGED_BY,
                **({"annotations": annotations} if annotations else {}),
            },
            automount_service_account_token=False,
            opts=child,
        )
        job = backup_cron_job(
            cloud,
            namespace,
            self.bucket_name,
            cluster_name,
            refs.db_host,
            MARIADB_PORT,
            DATABASE_USER,
            DATABASE,
            refs.db_password,
            refs.db_password_key,
            MARIADB_IMAGE,
            MYSQL_UID,
        )
        custom_resource(f"{name}-cronjob", job, child)
        self.register_outputs({"bucket": self.bucket_name})


def put_only_policy(bucket_arn: str, cluster: str) -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AddDumpsOnly",
                "Effect": "Allow",
                "Action": ["s3:PutObject"],
                "Resource": f"{bucket_arn}/{object_prefix(cluster)}*",
            }
        ],
    }
