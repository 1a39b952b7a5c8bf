"""Backups of the Slurm accounting database (``gpu-cluster:scheduling.slurm.backup``)."""

from __future__ import annotations

from pydantic import Field

from stacks.spec.model_base import SpecModel


class SlurmBackup(SpecModel):
    enabled: bool = Field(
        True,
        description=(
            "With accounting: a daily `mariadb-dump` of the accounting database to a bucket the stack creates (GCS on "
            "GKE, S3 on EKS), uploaded by a ServiceAccount that may only create objects there (Workload Identity / Pod "
            "Identity; no key). Restore: docs/slurm.md. Default true."
        ),
    )
    retention_days: int = Field(
        90,
        ge=1,
        le=3650,
        description=("Days a dump is kept in the bucket before its lifecycle rule deletes it. Default 90."),
    )
