"""Rack-scale NVLink pools (GB200 NVL72): the NVIDIA DRA driver for ComputeDomains, and a ComputeDomain in each
namespace where the pools' jobs run (the team namespaces with quota on the pool, or the Slurm NodeSets')."""
from __future__ import annotations

import pulumi

from render.compute_domain import compute_domains, uses_compute_domains
from render.kueue import pool_namespaces
from render.slurm_values import SLURM_NAMESPACE
from plan.facts import PoolFacts
from spec.scheduling import Workload
from spec.stack import StackSpec


def job_namespaces(spec: StackSpec, pools: list[PoolFacts]) -> dict[str, list[str]]:
    """Pool name -> the namespaces its jobs run in (none without a scheduling section)."""
    sched = spec.scheduling
    if sched is None:
        return {}
    if sched.workload == Workload.SLURM:
        return {p.name: [SLURM_NAMESPACE] for p in pools}
    return pool_namespaces(sched)


def build_nvlink(spec: StackSpec, pools: dict[str, PoolFacts], cluster: pulumi.Resource, k8s_provider,
                 namespaces: dict[str, pulumi.Resource]) -> None:
    racks = [p for p in pools.values() if uses_compute_domains(p)]
    if not racks:
        return
    from components.k8s.nvidia_dra_driver import NvidiaDraDriver

    domains = compute_domains(racks, job_namespaces(spec, racks))
    opts = pulumi.ResourceOptions(providers=[k8s_provider], depends_on=[cluster])
    NvidiaDraDriver("nvidia-dra-driver", spec.cloud, racks, domains, namespaces, after=[cluster], opts=opts)
