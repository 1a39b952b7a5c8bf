"""cross-layer-efa-requests: the training runtimes and Slurm NodeSets of an EKS pool with EFA request exactly the
EFA interfaces its nodes carry (``vpc.amazonaws.com/efa``). More than the nodes have leaves the pods Pending; fewer
(or none, where the EFA device plugin advertises them) leaves NCCL on part of the fabric, or on TCP."""

from __future__ import annotations

from typing import Any, Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from policies.findings import Finding
from policies.links import launch_template_of
from policies.multinode import efa_interfaces
from policies.pools import gpu_pools
from policies.resources import HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import is_slurm_release, object_name, selected_pool
from policies.values import UNKNOWN, as_dict, as_int, as_list, dig

ID = "cross-layer-efa-requests"
EFA = "vpc.amazonaws.com/efa"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
EFA_PLUGIN_CHART = "aws-efa-k8s-device-plugin"


def _efa_plugin(resources: list[Resource]) -> bool:
    return any(
        r.type == HELM_RELEASE and str(r.props.get("chart", "")).rstrip("/").endswith(EFA_PLUGIN_CHART)
        for r in resources
    )


def _runtime_pods(r: Resource) -> Iterable[tuple[str | None, Any]]:
    """(pool, EFA limit of the first container) of each replicated job's pod template."""
    for job in as_list(dig(r.props, "spec", "template", "spec", "replicatedJobs")):
        pod = as_dict(dig(job, "template", "spec", "template", "spec"))
        containers = as_list(pod.get("containers"))
        limit = dig(containers[0], "resources", "limits", EFA) if containers else None
        yield selected_pool(as_dict(pod.get("nodeSelector"))), limit


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    efa: dict[str, int] = {}
    for view in gpu_pools(resources, cat):
        if view.cloud == Cloud.AWS:
            count = len(efa_interfaces(launch_template_of(view.resource, view.name, resources)))
            if count:
                efa[view.name] = count
    if not efa:
        return
    plugin = _efa_plugin(resources)
    for r in resources:
        if r.type == RUNTIME:
            for pool, limit in _runtime_pods(r):
                if pool in efa:
                    yield from _compare(
                        f"training runtime '{object_name(r)}'",
                        pool,
                        efa[pool],
                        limit,
                        plugin,
                        "the runtime's container resources",
                        (object_name(r), pool, r.name),
                        r.urn,
                    )
        elif is_slurm_release(r):
            for name, spec in as_dict(dig(r.props, "values", "nodesets")).items():
                pool = selected_pool(as_dict(dig(spec, "podSpec", "nodeSelector")))
                if pool in efa:
                    limit = dig(spec, "slurmd", "resources", "limits", EFA)
                    yield from _compare(
                        f"Slurm NodeSet '{name}'",
                        pool,
                        efa[pool],
                        limit,
                        plugin,
                        f"nodesets.{name}.slurmd.resources",
                        (str(name), pool, r.name),
                        r.urn,
                    )


def _compare(
    subject: str, pool: str, want: int, limit: Any, plugin: bool, where: str, keys: tuple, urn: str
) -> Iterable[Finding]:
    got = as_int(limit) if limit is not None else None
    if got is UNKNOWN:
        return
    required = f"{EFA}: {want} per pod, every EFA interface of pool '{pool}'s nodes"
    fix = (
        f"request {EFA}: {want} in {where} (requests and limits; gpu-cluster renders this for fabric pools "
        "with efaDevicePlugin: true)"
    )
    if got is None:
        if plugin:
            yield Finding(
                subject,
                f"its pods on pool '{pool}' request no EFA interfaces, so NCCL cannot use the "
                f"{want} EFA interfaces of their nodes and falls back to TCP",
                observed=f"no {EFA} in {where}, while the EFA device plugin advertises it",
                required=required,
                fix=fix,
                keys=keys,
                urn=urn,
            )
    elif got != want:
        effect = (
            "request more EFA interfaces than the nodes have, so they never fit a node and stay Pending"
            if got > want
            else f"request fewer EFA interfaces than the nodes have, so NCCL uses {got} of the {want}"
        )
        yield Finding(
            subject,
            f"its pods on pool '{pool}' {effect}",
            observed=f"{EFA}: {got} in {where}",
            required=required,
            fix=fix,
            keys=keys,
            urn=urn,
        )


RULE = register(
    Rule(
        id=ID,
        title="Jobs request every EFA interface of their pool",
        category=Category.CROSS_LAYER,
        description="Training runtimes and Slurm NodeSets on an EKS pool with EFA request exactly the node's EFA "
        "interfaces.",
        why=(
            "A p5.48xlarge carries 32 EFA interfaces; a pod that requests fewer gets only those devices and NCCL runs "
            "on part of the 3,200 Gbps fabric, one that requests none falls back to TCP, and one that requests more "
            "never schedules. The count comes from the pool's launch template."
        ),
        remediation=(
            "1. For a gpu-cluster stack, keep efaDevicePlugin: true on the pool: runtimes and NodeSets request "
            "every interface. 2. Otherwise set vpc.amazonaws.com/efa requests and limits to the instance "
            "type's EFA interface count."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(RUNTIME, HELM_RELEASE),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3110,
)
