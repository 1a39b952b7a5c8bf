"""Slurm on Kubernetes with SchedMD's Slinky: the operator, a Slurm cluster rendered from the scheduling spec, its
accounting database and the declared accounts.

Resources (all on the cluster's Kubernetes provider):
- namespaces ``slinky`` (operator, Pod Security ``baseline``) and ``slurm`` (``privileged``: Slinky's slurmd runs
  privileged with BPF/NET_ADMIN/SYS_ADMIN/SYS_NICE);
- ``helm.v3.Release`` of the pinned ``slurm-operator`` chart (CRDs included) and of the ``slurm`` chart, whose
  values carry the rendered slurm.conf directives, gres.conf, topology.yaml, one NodeSet per pool (pinned to the
  pool by its ``gpu-cluster/pool`` label, tolerating the GPU taint, requesting the pool's GPUs per node) and one
  partition per pool (+ ``all`` and the spec's extra partitions) - values a policy can read;
- on a stack with a fabric NodeSet, the ``slurm-task-env`` ConfigMap: the TaskProlog that gives every task the
  fabric's env (``stacks/plan/slurm_task_env.py``);
- the keys and the database passwords as Pulumi-generated secrets (``SlurmSecrets``); with accounting, MariaDB on
  a persistent volume (``SlurmDatabase``) and the ``sacctmgr`` Job that creates the spec's QOS and accounts
  (``SlurmAccounts``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.network_policies import system_network_policies
from components.charts import SLURM, SLURM_OPERATOR
from components.k8s.custom_resources import custom_resource
from components.k8s.objects import MANAGED_BY, PRIVILEGED_PSA, config_map
from components.slurm.accounts import SlurmAccounts
from components.slurm.database import SlurmDatabase
from components.slurm.scaling import SlurmScaling, cloud_records_job
from components.slurm.secrets import SlurmSecrets
from components.image_digests import pinned_chart_values
from stacks.plan.slurm import SlurmPlan
from stacks.plan.slurm_task_env import CONFIG_MAP as TASK_ENV_CONFIG_MAP
from render.slurm_backup import storage_class
from render.fabric_pod import PodFabric
from render.network_policies import isolated_namespace
from render.slurm_values import (
    OPERATOR_NAMESPACE,
    RELEASE,
    SLURM_NAMESPACE,
    SecretRefs,
    operator_values,
    slurm_values,
    task_env_config_map_data,
)

BASELINE_PSA = {f"pod-security.kubernetes.io/{m}": "baseline" for m in ("enforce", "audit", "warn")}


class SlurmCluster(pulumi.ComponentResource):
    """A Slinky Slurm cluster whose config is rendered from ``scheduling`` and the pools' facts.

    Each NodeSet tolerates its pool's taints (``PoolFacts.tolerations``: the GPU taint and every extra taint, already
    in the plan). ``protect``: protect the keys and the database (the stack's ``cluster.deletionProtection``).
    """

    plan: SlurmPlan
    operator: k8s.helm.v3.Release
    release: k8s.helm.v3.Release
    partitions: list[str]
    namespace: k8s.core.v1.Namespace
    """``slurm``, where the NodeSets' pods (and so the jobs) run."""

    def __init__(
        self,
        name: str,
        plan: SlurmPlan,
        fabrics: Mapping[str, PodFabric | None],
        cluster_name: str,
        protect: bool = True,
        after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:slurm:SlurmCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        roots = pulumi.ResourceOptions(parent=self, depends_on=list(after))  # the namespaces wait for ``after``
        self.plan = plan
        refs = SecretRefs()
        operator_ns = k8s.core.v1.Namespace(
            f"{name}-operator-ns",
            metadata={"name": OPERATOR_NAMESPACE, "labels": {**BASELINE_PSA, **MANAGED_BY}},
            opts=roots,
        )
        self.namespace = slurm_ns = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={"name": SLURM_NAMESPACE, "labels": {**PRIVILEGED_PSA, **MANAGED_BY}},
            # deleting the namespace deletes the accounting database's volume claim with it
            opts=pulumi.ResourceOptions.merge(roots, pulumi.ResourceOptions(protect=protect)),
        )
        # slurmctld, slurmdbd, MariaDB and slurmrestd: reachable from the namespace itself and the operator only
        for obj in isolated_namespace(SLURM_NAMESPACE, also_from=(OPERATOR_NAMESPACE,)):
            custom_resource(
                f"{name}-netpol-{obj['metadata']['name']}",
                obj,
                pulumi.ResourceOptions(parent=self, depends_on=[slurm_ns]),
            )
        self.operator = k8s.helm.v3.Release(
            f"{name}-operator",
            name=SLURM_OPERATOR.chart,
            chart=f"{SLURM_OPERATOR.repo}/{SLURM_OPERATOR.chart}",
            version=SLURM_OPERATOR.version,
            namespace=operator_ns.metadata.name,
            create_namespace=False,
            values=pinned_chart_values(SLURM_OPERATOR.chart, SLURM_OPERATOR.version, operator_values()),
            timeout=900,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[operator_ns]),
        )
        system_network_policies(f"{name}-operator", OPERATOR_NAMESPACE, operator_ns, self)  # its webhook, metrics
        secrets = SlurmSecrets(
            f"{name}-secrets",
            slurm_ns.metadata.name,
            plan.accounting,
            protect,
            refs,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[slurm_ns]),
        )
        before: list[pulumi.Resource] = [self.operator, secrets]
        if plan.accounting:
            passwords = [s for s in (secrets.db_password, secrets.db_root_password) if s is not None]  # both set
            before.append(
                SlurmDatabase(
                    f"{name}-database",
                    slurm_ns.metadata.name,
                    refs,
                    protect=protect,
                    after=passwords,
                    storage_class=storage_class(plan.cloud) if plan.cloud else None,
                    opts=child,
                )
            )
        scaling = None
        if plan.scaling.pools:  # the programs and the ServiceAccount slurmctld's pod uses exist before it starts
            scaling = SlurmScaling(
                f"{name}-scaling",
                slurm_ns.metadata.name,
                plan.scaling.resume_script(),
                plan.scaling.suspend_script(),
                opts=child,
            )
            before.append(scaling)
        task_env = task_env_config_map_data(plan, fabrics)
        if task_env is not None:  # the TaskProlog + fabric env files every NodeSet pod mounts (before they start)
            before.append(config_map(f"{name}-task-env", TASK_ENV_CONFIG_MAP, slurm_ns, task_env, parent=self))
        values = slurm_values(plan, cluster_name, refs, fabrics=fabrics)
        self.release = k8s.helm.v3.Release(
            f"{name}-slurm",
            name=RELEASE,
            chart=f"{SLURM.repo}/{SLURM.chart}",
            version=SLURM.version,
            namespace=slurm_ns.metadata.name,
            create_namespace=False,
            values=pinned_chart_values(SLURM.chart, SLURM.version, values),
            timeout=1800,
            opts=pulumi.ResourceOptions(parent=self, depends_on=before),
        )
        if scaling is not None:
            cloud_records_job(
                f"{name}-cloud-nodes",
                slurm_ns.metadata.name,
                cluster_name,
                plan.scaling.cloud_nodes(plan.nodesets),
                refs,
                parent=self,
                after=[self.release, secrets.slurm_key],
            )
        if plan.accounting:
            SlurmAccounts(
                f"{name}-accounts",
                slurm_ns.metadata.name,
                cluster_name,
                plan.sacctmgr_script(cluster_name),
                refs,
                after=[self.release, secrets.slurm_key],
                opts=child,
            )
        self.partitions = [p.name for p in plan.partitions]
        self.register_outputs(
            {
                "partitions": self.partitions,
                "accounting": plan.accounting,
                "nodeSets": {n.pool: n.replicas for n in plan.nodesets},
                "scalingPools": [p for p, _, _ in plan.scaling.pools],
            }
        )
