"""What Slurm power saving needs on Kubernetes to scale the pools' NodeSets (``stacks/plan/slurm_scaling.py``).

- the ConfigMap with ResumeProgram/SuspendProgram, mounted executable into slurmctld (``slurm_values._wire_scaling``);
- the controller pod's ServiceAccount, allowed to read and patch the NodeSets' ``scale`` subresource and to delete
  the NodeSet pods (a resumed node whose pod still runs is restarted so its slurmd registers again) - nothing else;
- a Job that creates the powered-down ``State=CLOUD`` records of ordinals ``minNodes..maxNodes-1`` once slurmctld
  answers (``scontrol create``; a record that exists already is left alone), through the client slurm.conf and
  the mounted slurm.key, like the accounts Job. The Job is auto-named: a changed node list replaces it.
"""

from __future__ import annotations

import shlex

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.objects import MANAGED_BY
from components.slurm.client_job import slurm_client_job
from render.slurm_values import SCALER_ACCOUNT, SCALING_PROGRAMS, SecretRefs, client_slurm_conf

LABELS = {"app.kubernetes.io/name": "slurm-scaling", "app.kubernetes.io/part-of": "slurm", **MANAGED_BY}


def cloud_nodes_script(commands: list[list[str]]) -> str:
    """Wait for slurmctld, then create each record unless it exists (re-running changes nothing)."""
    lines = ["#!/bin/sh", "set -eu", "until scontrol ping | grep -q UP; do sleep 10; done"]
    for cmd in commands:
        names = cmd[2].removeprefix("NodeName=")
        lines.append(f"scontrol show node {shlex.quote(names)} >/dev/null 2>&1 || {shlex.join(cmd)}")
    return "\n".join(lines) + "\n"


class SlurmScaling(pulumi.ComponentResource):
    """ServiceAccount + Role + RoleBinding + programs ConfigMap (before the slurm Release) and the CLOUD-records Job."""

    programs: k8s.core.v1.ConfigMap
    account: k8s.core.v1.ServiceAccount

    def __init__(
        self,
        name: str,
        namespace: pulumi.Input[str],
        resume: str,
        suspend: str,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:slurm:SlurmScaling", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        meta = {"namespace": namespace, "labels": LABELS}
        self.programs = k8s.core.v1.ConfigMap(
            f"{name}-programs",
            metadata={**meta, "name": SCALING_PROGRAMS},
            data={"slurm-resume": resume, "slurm-suspend": suspend},
            opts=child,
        )
        self.account = k8s.core.v1.ServiceAccount(
            f"{name}-account", metadata={**meta, "name": SCALER_ACCOUNT}, opts=child
        )
        role = k8s.rbac.v1.Role(
            f"{name}-role",
            metadata={**meta, "name": SCALER_ACCOUNT},
            rules=[
                {"api_groups": ["slinky.slurm.net"], "resources": ["nodesets/scale"], "verbs": ["get", "patch"]},
                {"api_groups": [""], "resources": ["pods"], "verbs": ["delete"]},
            ],
            opts=child,
        )
        k8s.rbac.v1.RoleBinding(
            f"{name}-binding",
            metadata=meta,
            role_ref={"api_group": "rbac.authorization.k8s.io", "kind": "Role", "name": role.metadata.name},
            subjects=[{"kind": "ServiceAccount", "name": SCALER_ACCOUNT, "namespace": namespace}],
            opts=child,
        )
        self.register_outputs({"programs": self.programs.metadata.name})


def cloud_records_job(
    name: str,
    namespace: pulumi.Input[str],
    cluster_name: str,
    commands: list[list[str]],
    refs: SecretRefs,
    parent: pulumi.Resource,
    after: list[pulumi.Resource],
) -> k8s.batch.v1.Job:
    """The Job creating the CLOUD records, once the slurm Release (slurmctld) is deployed; it waits until slurmctld
    answers. Not a child of ``SlurmScaling``: the Release waits for that component, and this Job waits for the
    Release."""
    config = k8s.core.v1.ConfigMap(
        f"{name}-config",
        metadata={"namespace": namespace, "labels": LABELS},
        data={"create-nodes.sh": cloud_nodes_script(commands), "slurm.conf": client_slurm_conf(cluster_name)},
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return slurm_client_job(
        f"{name}-job",
        namespace,
        LABELS,
        "scontrol",
        config,
        "create-nodes.sh",
        refs,
        pulumi.ResourceOptions(parent=parent, depends_on=[config, *after]),
    )
