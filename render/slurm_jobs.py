"""How every pod gpu-cluster runs with ``slurm.key`` mounted (the accounts Job, the CLOUD-records Job) is locked
down. Pure: no Pulumi. The key lets its holder act as any Slurm user, so such pods run as the image's ``slurm`` user
(not root), without privilege escalation, under the runtime's default seccomp profile, and are deleted soon after
they finish (their pod objects no longer name the Secret, and nothing lingers to ``kubectl exec`` into).
"""

from __future__ import annotations

from typing import Any

SLURM_UID = 401
"""The ``slurm`` user and group of Slinky's images (SlinkyProject/containers, schedmd/slurm/26.05/ubuntu26.04/
Dockerfile: ``ARG SLURM_USER_UID=401``, ``SLURM_USER_GID=401``)."""
KEY_JOB_TTL_SECONDS = 3600
"""``ttlSecondsAfterFinished``: an hour to read a failed Job's log, then Kubernetes deletes the Job and its pod.
Pulumi's Job await returns when the Job completes, long before. A ``pulumi refresh`` after that sees the Job gone
and the next ``pulumi up`` runs it again, which the scripts allow (they are idempotent)."""
KEY_FILE_MODE = 0o440
"""slurm.key as the projected volume writes it: owner root, group ``fsGroup`` (slurm), read-only for both."""


def key_job_pod_security() -> dict[str, Any]:
    return {
        "run_as_user": SLURM_UID,
        "run_as_group": SLURM_UID,
        "run_as_non_root": True,
        "fs_group": SLURM_UID,
        "seccomp_profile": {"type": "RuntimeDefault"},
    }


def key_job_container_security() -> dict[str, Any]:
    return {
        "allow_privilege_escalation": False,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
        "run_as_non_root": True,
    }
