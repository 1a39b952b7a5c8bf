"""Derived facts of a pool on rack-scale NVLink machines (GB200 NVL72): the NVLink domain its nodes form, the node
label that names a domain, the GKE workload policy that places whole domains, and whether jobs get their IMEX channel
through an NVIDIA DRA driver ComputeDomain. Computed once (``PoolFacts.nvlink``); pure, no Pulumi.

A GB200 NVL72 rack is 72 GPUs on one NVLink fabric, 18 nodes of 4 GPUs. GPUs on different nodes of one rack talk over
NVLink only through IMEX channels, which a pod gets from a ``ComputeDomain`` (``resource.nvidia.com/v1beta1``): its
controller creates a ResourceClaimTemplate for the channel, and each worker pod claims it (kubernetes-sigs/
dra-driver-nvidia-gpu; GKE A4X and EKS P6e-GB200 guides; shared facts fleet-nvl72-podstart-research.md §2.2).
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog import Catalog, Cloud, MachineType
from stacks.spec.stack import NodePool, StackSpec

WORKLOAD_POLICY_TYPE = "HIGH_THROUGHPUT"
"""GKE A4X: the Compute Engine workload policy cluster-toolkit and xpk create (``resource-policy`` module /
``gcloud beta compute resource-policies create workload-policy --type=HIGH_THROUGHPUT --accelerator-topology=1x72``)."""


def nodes_per_nvlink_domain(machine: MachineType) -> int:
    """Nodes that share one NVLink domain (1 on every HGX 8-GPU machine; 18 on a GB200 NVL72 rack of 4-GPU nodes)."""
    return max(1, machine.nvlink_domain_gpus // machine.gpus) if machine.gpus else 1


def default_block_size(machine: MachineType, max_nodes: int) -> int:
    """Slurm topology/block and Kueue TAS block size: nodes per NVLink domain when a domain spans nodes; else the
    whole compact placement group (the pool)."""
    per_domain = nodes_per_nvlink_domain(machine)
    return per_domain if per_domain > 1 else max_nodes


@dataclass(frozen=True)
class NvlinkPlan:
    domain_gpus: int
    """GPUs on one NVLink domain (72; 36 on a ``u-p6e-gb200x36`` UltraServer)."""
    domain_nodes: int
    """Nodes of one domain (18, or 9): the Slurm topology/block size and Kueue's domain level."""
    domain_label: str
    """Node label whose value names the node's domain (GKE ``gce-topology-subblock``, GFD ``nvidia.com/gpu.clique``)."""
    block_label: str
    """The level above the domain (GKE ``gce-topology-block``), empty when there is none."""
    accelerator_topology: str
    """GKE workload policy accelerator topology (``1x72``), empty on EKS."""
    ultraserver_type: str
    """EKS: the UltraServer type of the pool's capacity block, empty on GKE."""
    compute_domains: bool
    """Jobs get their IMEX channel through a ComputeDomain (multi-node pools; a single-node job needs none)."""
    reservation_block: str | None = None
    """GKE: the reservation block the pool targets."""
    racks: int = 1
    """GKE: the rack node pools of the pool (``racks``), each one domain (sub-block); 1 on EKS."""

    def whole_domains(self, nodes: int) -> int:
        return nodes // self.domain_nodes


def nvlink_plan(cat: Catalog, spec: StackSpec, pool: NodePool, machine: MachineType) -> NvlinkPlan | None:
    domain = cat.nvlink_domain(machine)
    if domain is None:
        return None
    ultra = cat.ultraservers.get(pool.capacity.ultraserver_type or "") if spec.cloud == Cloud.AWS else None
    nodes = ultra.instances if ultra is not None else domain.domain_nodes
    return NvlinkPlan(
        domain_gpus=nodes * machine.gpus,
        domain_nodes=nodes,
        domain_label=domain.domain_label,
        block_label=domain.block_label,
        accelerator_topology=domain.accelerator_topology,
        ultraserver_type=ultra.ultraserver_type if ultra is not None else "",
        compute_domains=pool.multi_node,
        reservation_block=pool.capacity.reservation_block if spec.cloud == Cloud.GCP else None,
        racks=(pool.racks or 1) if spec.cloud == Cloud.GCP else 1,
    )
