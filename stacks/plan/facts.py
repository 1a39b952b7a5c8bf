"""Derived facts per GPU pool: computed once from spec + catalog, read by components, scheduler and cost code."""

from __future__ import annotations

from dataclasses import dataclass

from catalog import CapacityType, Catalog, Cloud, MachineType, Price, SoldAs, load_mig_catalog
from catalog.fabric import load_fabric_catalog
from stacks.plan.fabric import FabricPlan, fabric_plan
from stacks.plan.gpu_runtime import PoolRuntime, effective_runtime, operator_in_stack, pool_runtime
from stacks.plan.nvlink import NvlinkPlan, nvlink_plan
from stacks.plan.queued import GKE_QUEUED_TAINT_KEY, QueuedPlan, queued_plan
from stacks.plan.reservation import is_capacity_block
from stacks.spec.fleet import FLEET_GPU_LABEL, FleetRole, gpu_slug
from stacks.spec.stack import GPU_TAINT_KEY, POOL_LABEL_KEY, NodePool, StackSpec, Taint

GPU_TAINT_VALUE = "present"
GPU_TOLERATION: dict[str, str] = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
GKE_QUEUED_TOLERATION: dict[str, str] = {"key": GKE_QUEUED_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
GKE_ARM64_TOLERATION: dict[str, str] = {
    "key": "kubernetes.io/arch",
    "operator": "Equal",
    "value": "arm64",
    "effect": "NoSchedule",
}
"""GKE taints every Arm node ``kubernetes.io/arch=arm64:NoSchedule`` (GKE "Prepare an Arm workload for deployment";
cluster-toolkit's A4X DRA driver values tolerate it), so whatever must run on an arm64 GPU pool tolerates it."""


def toleration_for(taint: Taint) -> dict[str, str]:
    """The toleration that matches exactly one taint: ``Equal`` on its value, or ``Exists`` for an empty value
    (Kubernetes leaves ``value`` out when the operator is ``Exists``)."""
    if taint.value:
        return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect.value}
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect.value}


@dataclass(frozen=True)
class PoolFacts:
    name: str
    cloud: Cloud
    region: str
    machine: MachineType
    zones: tuple[str, ...]
    min_nodes: int
    max_nodes: int
    capacity: CapacityType
    multi_node: bool
    price: Price | None
    """$/node-hour at this pool's region and capacity type; None only for a reservation-bound machine with no public
    price (GKE A4X): its cost is unknown, never $0 (validation guarantees a price for every other pool)."""
    runtime: PoolRuntime | None = None
    """Who installs the driver and advertises ``nvidia.com/gpu`` here, sharing, advertised GPUs per node."""
    taints: tuple[Taint, ...] = ()
    """The pool's extra taints (the GPU taint is always there too)."""
    fabric: FabricPlan | None = None
    """The GPU network between nodes (GPUDirect-TCPX/TCPXO/RDMA, EFA), or None (none, off, or single-node)."""
    queued: QueuedPlan | None = None
    """Queued provisioning: nodes come only through ProvisioningRequests of this class (``stacks/plan/queued.py``)."""
    fleet_gpu: str | None = None
    """On a fleet worker: the GPU model's slug (``h100-80gb``) its nodes and Kueue flavor carry as
    ``gpu-cluster/fleet-gpu``, so the fleet runtime of that model lands here (``render/fleet.py``)."""
    nvlink: NvlinkPlan | None = None
    """Rack-scale NVLink (GB200 NVL72): the domain's size and label, and whether jobs get their IMEX channel through
    a ComputeDomain (``stacks/plan/nvlink.py``); None where the NVLink domain ends at the node."""

    @property
    def arch(self) -> str:
        """The nodes' CPU architecture (``x86_64`` or ``arm64``, from the catalog): every image scheduled here needs it."""
        return self.machine.arch

    @property
    def arm64(self) -> bool:
        return self.machine.arch == "arm64"

    @property
    def resolved_runtime(self) -> PoolRuntime:
        """``runtime``, for code that reads facts from :func:`pool_facts` (which always sets it)."""
        assert self.runtime is not None, f"pool {self.name}: facts without a runtime (not from pool_facts?)"
        return self.runtime

    @property
    def gpus_per_node(self) -> int:
        return self.machine.gpus

    @property
    def max_gpus(self) -> int:
        return self.machine.gpus * self.max_nodes

    @property
    def pool_label(self) -> dict[str, str]:
        """The pool's node label; on a fleet worker also the GPU model's fleet label."""
        if self.fleet_gpu is None:
            return {POOL_LABEL_KEY: self.name}
        return {POOL_LABEL_KEY: self.name, FLEET_GPU_LABEL: self.fleet_gpu}

    @property
    def tolerations(self) -> list[dict[str, str]]:
        """Kubernetes tolerations anything that must run on this pool needs (Kueue flavor, Trainer runtime, Slurm
        NodeSet, device plugin and GPU Operator operands, the ``pools.*.tolerations`` output): the GPU taint, and every
        extra taint of the pool matched exactly (its key, value and effect; ``Exists`` when the value is empty), and on
        a GKE queued-provisioning pool the ``cloud.google.com/gke-queued`` taint GKE puts on its nodes."""
        queued = [GKE_QUEUED_TOLERATION.copy()] if self.queued is not None and self.cloud == Cloud.GCP else []
        arm = [GKE_ARM64_TOLERATION.copy()] if self.arm64 and self.cloud == Cloud.GCP else []
        return [GPU_TOLERATION.copy(), *(toleration_for(t) for t in self.taints), *queued, *arm]

    @property
    def usd_per_gpu_hour(self) -> float | None:
        return None if self.price is None else self.price.usd_per_hour / self.machine.gpus


def _declared_block_price(spec: StackSpec, pool: NodePool, machine: MachineType) -> Price | None:
    """A machine sold only as capacity blocks has no list price: its $/node-hour is the block's declared upfront fee
    over its window and nodes (validation requires both for such a machine)."""
    if not is_capacity_block(pool):
        return None
    # lazy: the block's window and price load only for a capacity-block pool (the what-if/preview import floor)
    from stacks.plan.capacity_block import block_price, block_window

    block = block_price(spec.cloud, pool, machine.gpus)
    window = block_window(pool)
    if block is None or window is None:
        return None
    return Price(
        usd_per_hour=block.usd_per_node_hour,
        as_of=window.start.date(),
        label="capacity block fee (declared)",
        source=f"capacity.upfrontFeeUsd ${block.fee_usd:,.2f} over {block.hours:g} h × {block.nodes} nodes",
    )


def pool_facts(
    spec: StackSpec, pool: NodePool, cat: Catalog, index: int | None = None, operator_used: bool | None = None
) -> PoolFacts:
    """``index`` (the pool's place in ``spec.node_pools``) and ``operator_used`` (``operator_in_stack(spec)``): a
    caller planning every pool passes them, so the facts of n pools cost n, not n x n (default: looked up here)."""
    acc = pool.accelerator
    machine = cat.resolve(spec.cloud, pool.machine_type, acc.type if acc else None, acc.count if acc else None)
    if machine is None:
        raise LookupError(
            f"pool {pool.name}: machine type {pool.machine_type} is not in the catalog (spec not validated?)"
        )
    price = cat.node_price(machine, spec.region, pool.capacity.type) or _declared_block_price(spec, pool, machine)
    special = cat.special.get((spec.cloud, machine.machine_type))
    if price is None and not (special is not None and special.sold_as == SoldAs.RESERVATION_BOUND):
        raise LookupError(f"pool {pool.name}: no price for {pool.machine_type} in {spec.region} (spec not validated?)")
    if index is None:
        index = next(i for i, p in enumerate(spec.node_pools) if p.name == pool.name)  # for error paths only
    eff = effective_runtime(spec.cloud, spec.gpu_runtime, pool, index)
    runtime = pool_runtime(
        spec.cloud,
        eff,
        pool,
        machine,
        load_mig_catalog(),
        operator_in_stack=operator_in_stack(spec) if operator_used is None else operator_used,
    )
    return PoolFacts(
        name=pool.name,
        cloud=spec.cloud,
        region=spec.region,
        machine=machine,
        zones=tuple(pool.zones),
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        capacity=pool.capacity.type,
        multi_node=pool.multi_node,
        price=price,
        runtime=runtime,
        taints=tuple(pool.taints),
        fabric=fabric_plan(spec.cloud, pool.machine_type, pool.multi_node, pool.fabric, load_fabric_catalog()),
        queued=queued_plan(spec.cloud, pool),
        nvlink=nvlink_plan(cat, spec, pool, machine),
        fleet_gpu=gpu_slug(machine.gpu_model)
        if spec.fleet is not None and spec.fleet.role == FleetRole.WORKER
        else None,
    )
