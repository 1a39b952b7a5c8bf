"""Fabric rules that need the catalog or several pools: bring-your-own networks only on GKE fabric machines and in
the count and shape the fabric needs, one set of networks per fabric kind in a cluster, and a warning that names the
bandwidth a multi-node pool gives up with ``fabric.mode: off``.

Every problem is reported through the pool's scope (``issues.pool(i, name)``), so each message names the pool.
"""

from __future__ import annotations

from typing import Iterable

from catalog import Cloud, load_catalog
from catalog.fabric import FabricCatalog, FabricKind, MachineFabric, load_fabric_catalog
from stacks.plan.fabric import network_layout
from stacks.spec.fabric import FabricMode
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues

PRIMARY_NIC_NOTE = "the primary NIC only"


def check_fabric(
    issues: Issues, cloud: Cloud, pools: Iterable[tuple[int, NodePool]], fabrics: FabricCatalog | None = None
) -> None:
    fab = fabrics or load_fabric_catalog()
    pools = list(pools)
    for i, pool in pools:
        _check_pool(issues.pool(i, pool.name).at("fabric"), cloud, fab, pool, fab.for_machine(cloud, pool.machine_type))
    _check_shared_networks(issues, cloud, fab, pools)
    _check_dranet_alone(issues, cloud, fab, pools)


def _capable(fab: FabricCatalog, cloud: Cloud) -> str:
    return ", ".join(sorted(m for (c, m) in fab.machines if c == cloud))


def _check_pool(
    fabric: Issues, cloud: Cloud, fab: FabricCatalog, pool: NodePool, machine: MachineFabric | None
) -> None:
    """``fabric``: the scope of ``nodePools[i].fabric``, naming the pool."""
    setting = pool.fabric
    if setting is None:
        return
    _check_job_settings(fabric, cloud, fab, pool, machine)
    names = [f"{n.network}/{n.subnetwork}" for n in setting.networks]
    if setting.mode == FabricMode.OFF:
        if machine is not None and pool.multi_node:
            fabric.warn(
                "mode",
                f"fabric off on a multi-node pool: NCCL traffic between its {pool.machine_type} "
                f"nodes uses {PRIMARY_NIC_NOTE}, giving up {machine.nominal_gbps_per_node:,} Gbps of "
                f"{machine.kind.display_name} per node",
                "off",
                allowed="auto, existing",
                fix="remove `fabric` (mode auto) unless the pool never runs jobs across nodes; the policy pack "
                "reports the pool as topology-fabric-missing (mandatory) until it gets its fabric or a waiver",
            )
        return
    if setting.mode in (FabricMode.AUTO, FabricMode.MANAGED):
        if setting.networks:
            creates = "gpu-cluster" if setting.mode == FabricMode.AUTO else "GKE"
            fabric.error(
                "networks",
                "networks are only read with fabric mode existing",
                names,
                allowed=f"an empty list with mode {setting.mode.value} ({creates} creates the networks)",
                fix="set fabric.mode: existing to attach these networks, or remove networks",
            )
        if setting.mode == FabricMode.MANAGED:
            _check_managed(fabric, cloud, fab, pool, machine)
        return
    # existing
    if cloud == Cloud.AWS:
        fabric.error(
            "mode",
            "existing networks are a GKE setting: EKS pools carry EFA interfaces on their own subnets",
            "existing",
            allowed="auto, off",
            fix="set fabric.mode: auto (every EFA interface, on the pool's subnets) or off",
        )
    elif machine is None:
        fabric.error(
            "mode",
            f"{pool.machine_type} has no GPU fabric to attach networks for",
            "existing",
            allowed=f"a fabric-capable machine type: {_capable(fab, cloud)}",
            fix="remove fabric from this pool, or pick a fabric-capable machine type",
        )
    else:
        _check_existing_shape(fabric.at("networks"), setting.networks, machine, names)


def _managed_capable(fab: FabricCatalog) -> str:
    return ", ".join(sorted(m for (c, m), f in fab.machines.items() if c == Cloud.GCP and f.gke_managed_profile))


def _check_managed(
    fabric: Issues, cloud: Cloud, fab: FabricCatalog, pool: NodePool, machine: MachineFabric | None
) -> None:
    """GKE-managed accelerator networking exists for the machines the catalog gives a managed profile (RDMA)."""
    if cloud == Cloud.AWS:
        fabric.error(
            "mode",
            "managed accelerator networking is a GKE setting: EKS pools carry EFA interfaces on their own subnets",
            "managed",
            allowed="auto, off",
            fix="set fabric.mode: auto (every EFA interface, on the pool's subnets) or off",
        )
    elif machine is None or not machine.gke_managed_profile:
        has = f"{machine.kind.display_name} on {pool.machine_type}" if machine else f"{pool.machine_type} (no fabric)"
        fabric.error(
            "mode",
            f"GKE manages accelerator networking only on RDMA machines, not {has}",
            "managed",
            allowed=f"mode managed on {_managed_capable(fab)}; elsewhere auto, existing or off",
            fix="set fabric.mode: auto (gpu-cluster creates the networks), or pick an RDMA machine type",
        )


def _check_existing_shape(networks_at: Issues, networks: list, machine: MachineFabric, names: list[str]) -> None:
    """``networks_at``: the scope of ``nodePools[i].fabric.networks``; reports the first problem of the shape only."""
    want = machine.extra_networks
    layout = ", ".join(n for n, _ in network_layout(machine))
    if len(networks) != want:
        shape = (
            f"{want} entries in NIC order ({layout}): 1 gVNIC network, then the 8 subnets of one RoCE VPC"
            if machine.kind == FabricKind.RDMA
            else f"{want} entries in NIC order ({layout}), each its own VPC"
        )
        networks_at.error(
            None,
            f"{machine.kind.display_name} on {machine.machine_type} needs {want} extra networks, got {len(networks)}",
            names,
            allowed=shape,
            fix=f"list {want} {{network, subnetwork}} pairs, or use mode auto to have gpu-cluster create them",
        )
        return
    gvnic = [n.network for n in networks[: machine.gvnic_networks]]
    if len(set(gvnic)) != len(gvnic):
        twice = sorted({n for n in gvnic if gvnic.count(n) > 1})
        verb = "is" if len(twice) == 1 else "are"
        networks_at.error(
            None,
            f"gVNIC networks must each be a separate VPC; {', '.join(twice)} {verb} listed more than once",
            names,
            allowed="one VPC network per gVNIC NIC",
            fix="create one VPC per GPU NIC (GKE attaches one interface per VPC)",
        )
        return
    rdma = {n.network for n in networks[machine.gvnic_networks :]}
    if machine.kind == FabricKind.RDMA and len(rdma) != 1:
        networks_at.error(
            None,
            "the 8 RDMA subnets must belong to one RoCE VPC",
            names,
            allowed="entries 2-9 with the same network (created with the zone's -vpc-roce network profile)",
            fix="list the 8 subnets of your RoCE VPC after the gVNIC network",
        )
    elif machine.kind == FabricKind.RDMA and rdma & set(gvnic):
        networks_at.error(
            None,
            "the gVNIC network and the RoCE VPC must differ",
            names,
            allowed="a gVNIC VPC, then a RoCE VPC",
            fix="use a separate VPC for the gVNIC NIC",
        )


def _check_shared_networks(issues: Issues, cloud: Cloud, fab: FabricCatalog, pools: list[tuple[int, NodePool]]) -> None:
    """Network objects are cluster-scoped and named as GKE's guides do (vpc1…, rdma-0…): every fabric pool of one kind
    shares them, so it must attach the same networks (and, for RDMA, sit in the RoCE VPC's one zone)."""
    if cloud != Cloud.GCP:
        return
    first: dict[FabricKind, tuple[int, NodePool, tuple]] = {}
    for i, pool in pools:
        machine = fab.for_machine(cloud, pool.machine_type)
        mode = pool.fabric.mode if pool.fabric else FabricMode.AUTO
        if machine is None or mode == FabricMode.OFF or (mode == FabricMode.AUTO and not pool.multi_node):
            continue
        if mode == FabricMode.MANAGED:
            continue  # GKE's own networks: no Network objects of gpu-cluster to share
        nets = tuple((n.network, n.subnetwork) for n in pool.fabric.networks) if pool.fabric else ()
        key = (mode.value, nets)
        seen = first.setdefault(machine.kind, (i, pool, key))
        if seen[0] == i:
            continue
        other, scope = seen[1], issues.pool(i, pool.name)
        if seen[2] != key:
            scope.error(
                "fabric",
                f"{machine.kind.display_name} pools of one cluster share its Network objects, but "
                f"this pool attaches other networks than pool '{other.name}'",
                {"mode": mode.value, "networks": [f"{a}/{b}" for a, b in nets]},
                allowed=f"the same fabric setting as pool '{other.name}'",
                fix=f"copy pool '{other.name}'s fabric setting, or move this pool to its own cluster",
            )
        elif machine.kind == FabricKind.RDMA and list(pool.zones) != list(other.zones):
            scope.error(
                "zones",
                f"RDMA pools share one RoCE VPC, which is bound to one zone, but this pool is in "
                f"{', '.join(pool.zones)} and pool '{other.name}' in {', '.join(other.zones)}",
                list(pool.zones),
                allowed=", ".join(other.zones),
                fix=f"put this pool in the zone of pool '{other.name}'",
            )


def _attaches_networks(cloud: Cloud, fab: FabricCatalog, pool: NodePool) -> bool:
    """The pool gets Network objects of type Device from gpu-cluster (GKE multi-network API)."""
    mode = pool.fabric.mode if pool.fabric else FabricMode.AUTO
    if fab.for_machine(cloud, pool.machine_type) is None:
        return False
    return mode == FabricMode.EXISTING or (mode == FabricMode.AUTO and pool.multi_node)


def _check_dranet_alone(issues: Issues, cloud: Cloud, fab: FabricCatalog, pools: list[tuple[int, NodePool]]) -> None:
    """GKE's DRANET guide: "Don't use both the GKE DRANET driver and the GKE multi-network API with a Network
    resource of Device type in the same cluster" - both manage the same NICs. A managed pool is refused next to a
    pool whose networks gpu-cluster attaches."""
    if cloud != Cloud.GCP:
        return
    attached = [p for _, p in pools if _attaches_networks(cloud, fab, p)]
    if not attached:
        return
    names = ", ".join(f"'{p.name}'" for p in attached)
    for i, pool in pools:
        if pool.fabric is None or pool.fabric.mode != FabricMode.MANAGED:
            continue
        issues.pool(i, pool.name).at("fabric").error(
            "mode",
            f"GKE managed DRANET cannot share a cluster with multi-network Device networks (GKE's DRANET "
            f"guide: both manage the same NICs), and pool {names} attaches such networks",
            "managed",
            allowed="every fabric pool of the cluster in mode managed, or none",
            fix=f"set this pool's fabric.mode: auto, or move pool {names} to mode managed (RDMA machines), off, or "
            "another cluster",
        )


def _check_job_settings(
    fabric: Issues, cloud: Cloud, fab: FabricCatalog, pool: NodePool, machine: MachineFabric | None
) -> None:
    """``sharedMemoryGiB`` within the node's RAM; ``runtimeImage`` not an image known to lack the fabric's NCCL
    plugin (EFA: libfabric + aws-ofi-nccl, ``catalog/data/fabric-image-gaps.csv``)."""
    setting = pool.fabric
    assert setting is not None
    shm, image = setting.shared_memory_gib, setting.runtime_image
    if shm is not None:
        known = load_catalog().machines.get((cloud, pool.machine_type))
        ram = known.ram_gib if known is not None else None
        if ram is not None and shm >= ram:
            fabric.error(
                "sharedMemoryGiB",
                f"/dev/shm of {shm} GiB does not fit in the {ram} GiB of RAM of a {pool.machine_type} node",
                shm,
                allowed=f"1 to {ram - 1}",
                fix="lower sharedMemoryGiB, or omit it (an eighth of the RAM, at most 256 GiB)",
            )
    if image is not None and machine is not None:
        gap = fab.image_gap(machine.kind, image)
        if gap is not None:
            default = fab.image(machine.kind, "training-image").reference if machine.kind == FabricKind.EFA else ""
            fabric.warn(
                "runtimeImage",
                f"image has no {gap.lacks}, so NCCL on this {machine.kind.display_name} pool falls back to TCP sockets",
                image,
                allowed=f"an image with {gap.lacks}",
                fix=f"omit runtimeImage (default {default}) or build on an image with {gap.lacks}",
            )
