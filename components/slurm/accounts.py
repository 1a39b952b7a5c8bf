"""Apply the spec's Slurm QOS and accounts to slurmdbd after deploy: a Kubernetes Job running ``sacctmgr -i``.

The script (``stacks/plan/slurm_accounts.py``) waits for slurmdbd, then adds what is missing and sets every declared
value, so re-running it changes nothing. The Job is auto-named: a changed script or client config replaces it, which
re-applies the accounts; an unchanged one is left alone. The slurm.key Secret is mounted read-only (auth/slurm);
the script and the client slurm.conf hold no secret.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.objects import MANAGED_BY
from components.slurm.client_job import slurm_client_job
from render.slurm_values import SecretRefs, client_slurm_conf

SCRIPT = "apply-accounts.sh"
LABELS = {"app.kubernetes.io/name": "slurm-accounts", "app.kubernetes.io/part-of": "slurm", **MANAGED_BY}


class SlurmAccounts(pulumi.ComponentResource):
    """A ConfigMap with the script and a client slurm.conf, and the Job that runs it once per change."""

    job: k8s.batch.v1.Job

    def __init__(
        self,
        name: str,
        namespace: pulumi.Input[str],
        cluster_name: str,
        script: str,
        refs: SecretRefs,
        after: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """``after``: what must exist first (the slurm Release, so slurmdbd is coming up); children wait for it."""
        super().__init__("gpu-cluster:slurm:SlurmAccounts", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        config = k8s.core.v1.ConfigMap(
            f"{name}-config",
            metadata={"namespace": namespace, "labels": LABELS},
            data={SCRIPT: script, "slurm.conf": client_slurm_conf(cluster_name)},
            opts=child,
        )
        self.job = slurm_client_job(
            f"{name}-job",
            namespace,
            LABELS,
            "sacctmgr",
            config,
            SCRIPT,
            refs,
            pulumi.ResourceOptions(parent=self, depends_on=[config, *(after or [])]),
        )
        self.register_outputs({"job": self.job.metadata.name})
