"""A Job that runs one shell script with the Slurm client tools (``scontrol``, ``sacctmgr``) against this cluster:
the script and a client slurm.conf from a ConfigMap, the slurm.key Secret mounted read-only (auth/slurm). Used by
the accounts Job and the scaling component's CLOUD-records Job."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.charts import SLURM_CLIENT_IMAGE
from components.image_digests import pinned
from render.slurm_jobs import (
    KEY_FILE_MODE,
    KEY_JOB_TTL_SECONDS,
    key_job_container_security,
    key_job_pod_security,
)
from render.slurm_values import SecretRefs


def slurm_client_job(
    name: str,
    namespace: pulumi.Input[str],
    labels: dict[str, str],
    container: str,
    config: k8s.core.v1.ConfigMap,
    script: str,
    refs: SecretRefs,
    opts: pulumi.ResourceOptions,
) -> k8s.batch.v1.Job:
    """``config`` holds ``script`` and ``slurm.conf``; the Job retries (OnFailure, 6 times) until the script exits 0.
    It holds slurm.key, so it runs as the slurm user under ``render/slurm_jobs.py``'s restrictions, on the login image
    pinned by digest (resolved at deploy)."""
    return k8s.batch.v1.Job(
        name,
        metadata={"namespace": namespace, "labels": labels},
        spec={
            "backoff_limit": 6,
            "ttl_seconds_after_finished": KEY_JOB_TTL_SECONDS,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restart_policy": "OnFailure",
                    "automount_service_account_token": False,
                    "security_context": key_job_pod_security(),
                    "node_selector": {"kubernetes.io/os": "linux"},
                    "containers": [
                        {
                            "name": container,
                            "image": pinned(SLURM_CLIENT_IMAGE),  # it holds slurm.key: by digest
                            "command": ["/bin/sh", f"/etc/gpu-cluster/{script}"],
                            "env": [{"name": "SLURM_CONF", "value": "/etc/slurm/slurm.conf"}],
                            "volume_mounts": [
                                {"name": "slurm-etc", "mount_path": "/etc/slurm", "read_only": True},
                                {"name": "script", "mount_path": "/etc/gpu-cluster", "read_only": True},
                            ],
                            "security_context": key_job_container_security(),
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "128Mi"},
                                "limits": {"memory": "256Mi"},
                            },
                        }
                    ],
                    "volumes": [
                        {
                            "name": "slurm-etc",
                            "projected": {
                                "default_mode": 0o400,
                                "sources": [
                                    {
                                        "config_map": {
                                            "name": config.metadata.name,
                                            "items": [{"key": "slurm.conf", "path": "slurm.conf", "mode": 0o444}],
                                        }
                                    },
                                    {
                                        "secret": {
                                            "name": refs.slurm_key,
                                            "items": [
                                                {"key": refs.slurm_key_key, "path": "slurm.key", "mode": KEY_FILE_MODE}
                                            ],
                                        }
                                    },
                                ],
                            },
                        },
                        {
                            "name": "script",
                            "config_map": {"name": config.metadata.name, "items": [{"key": script, "path": script}]},
                        },
                    ],
                },
            },
        },
        opts=opts,
    )
