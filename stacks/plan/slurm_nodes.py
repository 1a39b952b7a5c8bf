"""One Slinky NodeSet per GPU pool: what each Slurm node offers (CPUs, memory, GRES) and how its pods land on the pool.

Slinky runs every slurmd as a *dynamic* node (``slurmd -Z --conf "<extraConf>"``) named after its pod hostname,
``<nodeset>-<ordinal>``, and advertising ``Features=<nodeset>``. The controller's slurm.conf therefore has no
NodeName lines: a NodeSet line per pool, and partitions that name NodeSets. Pure: no Pulumi.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog import MachineType
from stacks.plan.facts import PoolFacts
from stacks.spec.stack import POOL_LABEL_KEY

CPU_RESERVE_FRACTION, CPU_RESERVE_MIN = 0.06, 2
"""vCPUs left to the kubelet, the container runtime and the DaemonSets of every GPU node (GKE and EKS reserve
0.1-0.6 cores on large nodes; device plugins, log and network agents take about as much again)."""
MEM_RESERVE_FRACTION, MEM_RESERVE_MIN_MIB = 0.08, 6 * 1024
"""Memory left to the system: GKE/EKS reserve 2-25 % by tier plus an eviction threshold; DaemonSets need ~1 GiB."""
GPU_RESOURCE = "nvidia.com/gpu"


def reserved_cpus(vcpu: int) -> int:
    return max(CPU_RESERVE_MIN, math.ceil(vcpu * CPU_RESERVE_FRACTION))


def default_cpus(vcpu: int) -> int:
    return max(1, vcpu - reserved_cpus(vcpu))


def default_real_memory_mib(ram_gib: int) -> int:
    """RAM minus the reserve, rounded down to whole GiB (so the pod request reads e.g. ``1722Gi``)."""
    ram_mib = ram_gib * 1024
    free = ram_mib - max(MEM_RESERVE_MIN_MIB, math.ceil(ram_mib * MEM_RESERVE_FRACTION))
    return free // 1024 * 1024


def gres_of(machine: MachineType) -> str:
    """``gpu:<model>:<GPUs per node>`` exactly as the catalog says, e.g. ``gpu:h100:8``."""
    return f"gpu:{machine.gpu_model.slurm_name}:{machine.gpus}"


def hostlist(prefix: str, first: int, last: int) -> str:
    return f"{prefix}-{first}" if first == last else f"{prefix}-[{first}-{last}]"


@dataclass(frozen=True)
class NodeSetPlan:
    pool: str
    """NodeSet name = pool name: Slurm NodeSet, node Feature and hostname prefix (``<pool>-<ordinal>``)."""
    replicas: int
    """Slurm nodes: the pool's max nodes (one slurmd pod per GPU node)."""
    min_nodes: int
    scales: bool
    """Follows the queue (``stacks/plan/slurm_scaling.py``): the NodeSet starts at ``min_nodes`` pods, Slurm power
    saving grows it to ``replicas`` for pending jobs and shrinks it when idle. Otherwise it runs ``replicas`` pods."""
    gpu_type: str
    gpus: int
    cpus: int
    real_memory_mib: int
    multi_node: bool
    zones: tuple[str, ...]
    node_selector: dict[str, str]
    tolerations: tuple[dict[str, str], ...]

    @property
    def gres(self) -> str:
        return f"gpu:{self.gpu_type}:{self.gpus}"

    @property
    def node_names(self) -> str:
        return hostlist(self.pool, 0, self.replicas - 1)

    @property
    def node_conf(self) -> str:
        """The NodeSet ``extraConf``: slurmd's ``--conf`` (the operator adds ``Features=<nodeset>``)."""
        return f"CPUs={self.cpus} Gres={self.gres} RealMemory={self.real_memory_mib}"

    @property
    def pods_at_deploy(self) -> int:
        """The NodeSet's ``replicas`` value: what runs until Slurm asks for more."""
        return self.min_nodes if self.scales else self.replicas

    @property
    def max_gpus(self) -> int:
        return self.replicas * self.gpus

    def gres_conf_line(self) -> str:
        """Device files per node: slurmd binds them; a line without ``File=`` is dropped by Slurm 26.05."""
        files = "/dev/nvidia0" if self.gpus == 1 else f"/dev/nvidia[0-{self.gpus - 1}]"
        return f"NodeName={self.node_names} Name=gpu Type={self.gpu_type} File={files}"

    def pod_resources(self) -> dict[str, dict[str, str]]:
        """slurmd container requests = limits = what Slurm advertises (Guaranteed QoS; the whole node's GPUs)."""
        memory = (
            f"{self.real_memory_mib // 1024}Gi" if self.real_memory_mib % 1024 == 0 else f"{self.real_memory_mib}Mi"
        )
        amounts = {"cpu": str(self.cpus), "memory": memory, GPU_RESOURCE: str(self.gpus)}
        return {"requests": dict(amounts), "limits": dict(amounts)}


def plan_nodeset(
    pool: PoolFacts, cpus: int | None = None, real_memory_mib: int | None = None, scales: bool = False
) -> NodeSetPlan:
    machine = pool.machine
    if machine.vcpu is None or machine.ram_gib is None:
        raise ValueError(
            f"pool {pool.name}: the catalog has no vCPU/RAM for {machine.machine_type} "
            "(validation should have asked for slurm.nodeSets[].cpus and realMemoryMib)"
        )
    return NodeSetPlan(
        pool=pool.name,
        replicas=pool.max_nodes,
        min_nodes=pool.min_nodes,
        scales=scales,
        gpu_type=machine.gpu_model.slurm_name,
        gpus=machine.gpus,
        cpus=cpus if cpus is not None else default_cpus(machine.vcpu),
        real_memory_mib=real_memory_mib if real_memory_mib is not None else default_real_memory_mib(machine.ram_gib),
        multi_node=pool.multi_node,
        zones=pool.zones,
        node_selector={POOL_LABEL_KEY: pool.name, "kubernetes.io/os": "linux"},
        tolerations=tuple(pool.tolerations),
    )
