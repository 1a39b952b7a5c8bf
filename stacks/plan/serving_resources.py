"""CPU and memory of a vLLM pod: its share of the node, so serving is not BestEffort on nodes it shares with training.

A pod with only a GPU request gets the lowest CPU weight (training's data loaders can starve vLLM's engine loop) and
is evicted first under node memory pressure, whatever its priority (the kubelet ranks by usage above requests before
priority). By default a pod requests, per GPU it holds, the node's CPUs and memory per GPU after the system reserve,
with a memory limit equal to the request. Pure: no Pulumi.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog import MachineType
from stacks.plan.slurm_nodes import default_cpus, default_real_memory_mib
from stacks.spec.serving import Service


@dataclass(frozen=True)
class PodShare:
    cpu: float
    """Cores requested."""
    memory_gib: int
    """GiB requested, and the limit."""


def node_allocatable(machine: MachineType) -> PodShare | None:
    """CPUs and whole GiB a pod may take on one node after the kubelet, runtime and DaemonSet reserve (the same
    reserve the Slurm NodeSets keep); None when the catalog does not list the machine's vCPUs or RAM."""
    if machine.vcpu is None or machine.ram_gib is None:
        return None
    return PodShare(default_cpus(machine.vcpu), default_real_memory_mib(machine.ram_gib) // 1024)


def default_resources(svc: Service, machine: MachineType) -> PodShare | None:
    """A pod's share of the node: its GPUs on that node × the allocatable CPUs and memory per GPU, rounded down."""
    node = node_allocatable(machine)
    if node is None or not machine.gpus:
        return None
    gpus = svc.gpus_per_replica // svc.nodes_per_replica
    return PodShare(max(1, math.floor(node.cpu * gpus / machine.gpus)), max(1, node.memory_gib * gpus // machine.gpus))


def vllm_resources(svc: Service, machine: MachineType) -> PodShare | None:
    """What each vLLM pod (leader and worker alike) requests: ``resources`` where set, else the default share."""
    share = default_resources(svc, machine)
    cpu = svc.resources.cpu if svc.resources and svc.resources.cpu is not None else (share.cpu if share else None)
    mem = (
        svc.resources.memory_gib
        if svc.resources and svc.resources.memory_gib is not None
        else (share.memory_gib if share else None)
    )
    if cpu is None or mem is None:
        return None
    return PodShare(cpu, mem)
