"""Apply the spec's Slurm QOS and accounts to slurmdbd after deploy: a Kubernetes Job running ``sacctmgr -i``.

The script (``scheduling/slurm_accounts.py``) waits for slurmdbd, then adds what is missing and sets every declared
value, so re-running it changes nothing. The Job is auto-named: a changed script or client config replaces it, which
re-applies the accounts; an unchanged one is left alone. The slurm.key Secret is mounted read-only (auth/slurm);
the script and the client slurm.conf hold no secret.
"""
from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.charts import SLURM_CLIENT_IMAGE
from components.k8s_objects import MANAGED_BY
from scheduling.slurm_values import SecretRefs, client_slurm_conf

SCRIPT = "apply-accounts.sh"
LABELS = {"app.kubernetes.io/name": "slurm-accounts", "app.kubernetes.io/part-of": "slurm", **MANAGED_BY}


class SlurmAccounts(pulumi.ComponentResource):
    """A ConfigMap with the script and a client slurm.conf, and the Job that runs it once per change."""

    job: k8s.batch.v1.Job

    def __init__(self, name: str, namespace: pulumi.Input[str], cluster_name: str, script: str, refs: SecretRefs,
                 after: list[pulumi.Resource] | None = None, opts: pulumi.ResourceOptions | None = None):
        """``after``: what must exist first (the slurm Release, so slurmdbd is coming up); children wait for it."""
        super().__init__("gpu-cluster:slurm:SlurmAccounts", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        config = k8s.core.v1.ConfigMap(
            f"{name}-config", metadata={"namespace": namespace, "labels": LABELS},
            data={SCRIPT: script, "slurm.conf": client_slurm_conf(cluster_name)}, opts=child)
        self.job = k8s.batch.v1.Job(
            f"{name}-job", metadata={"namespace": namespace, "labels": LABELS},
            spec={
                "backoff_limit": 6,
                "template": {
                    "metadata": {"labels": LABELS},
                    "spec": {
                        "restart_policy": "OnFailure",
                        "automount_service_account_token": False,
                        "node_selector": {"kubernetes.io/os": "linux"},
                        "containers": [{
                            "name": "sacctmgr", "image": SLURM_CLIENT_IMAGE,
                            "command": ["/bin/sh", f"/etc/gpu-cluster/{SCRIPT}"],
                            "env": [{"name": "SLURM_CONF", "value": "/etc/slurm/slurm.conf"}],
                            "volume_mounts": [{"name": "slurm-etc", "mount_path": "/etc/slurm", "read_only": True},
                                              {"name": "script", "mount_path": "/etc/gpu-cluster", "read_only": True}],
                            "security_context": {"allow_privilege_escalation": False},
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                        }],
                        "volumes": [
                            {"name": "slurm-etc", "projected": {"default_mode": 0o400, "sources": [
                                {"config_map": {"name": config.metadata.name,
                                                "items": [{"key": "slurm.conf", "path": "slurm.conf", "mode": 0o444}]}},
                                {"secret": {"name": refs.slurm_key,
                                            "items": [{"key": refs.slurm_key_key, "path": "slurm.key"}]}}]}},
                            {"name": "script", "config_map": {"name": config.metadata.name,
                                                               "items": [{"key": SCRIPT, "path": SCRIPT}]}},
                        ],
                    },
                },
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[config, *(after or [])]))
        self.register_outputs({"job": self.job.metadata.name})
