"""Rack-scale NVLink pools (GB200 NVL72): the NVIDIA DRA driver for ComputeDomains, and a ComputeDomain in each
namespace where the pools' jobs run (the team namespaces with quota on the pool, or the Slurm NodeSets')."""

from __future__ import annotations

import pulumi

from stacks.plan.facts import PoolFacts
from stacks.plan.stack import StackPlan
from render.compute_domain import compute_domains, uses_compute_domains
from render.slurm_values import SLURM_NAMESPACE


def job_namespaces(plan: StackPlan, pools: list[PoolFacts]) -> dict[str, list[str]]:
    """Pool name -> the namespaces its jobs run in (none without a scheduling section)."""
    if plan.slurm is not None:
        return {p.name: [SLURM_NAMESPACE] for p in pools}
    return dict(plan.kueue.namespaces) if plan.kueue is not None else {}


def build_nvlink(
    plan: StackPlan,
    cluster: pulumi.Resource,
    k8s_provider: pulumi.ProviderResource,
    namespaces: dict[str, pulumi.Resource],
) -> None:
    racks = [p for p in plan.facts if uses_compute_domains(p)]
    if not racks:
        return
    from components.k8s.nvidia_dra_driver import NvidiaDraDriver

    domains = compute_domains(racks, job_namespaces(plan, racks))
    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    NvidiaDraDriver("nvidia-dra-driver", plan.cloud, racks, domains, namespaces, after=[cluster], opts=opts)
