"""Fabric rules that need the catalog or several pools: bring-your-own networks only on GKE fabric machines and in
the count and shape the fabric needs, one set of networks per fabric kind in a cluster, and a warning that names the
bandwidth a multi-node pool gives up with ``fabric.mode: off``. Each check returns SpecIssues; none raises."""
from __future__ import annotations

from typing import Iterable

from catalog import Cloud
from catalog.fabric import FabricCatalog, FabricKind, MachineFabric, load_fabric_catalog
from stacks.fabric import network_layout
from stacks.fabric_spec import FabricMode
from stacks.spec import NodePool
from validation.issues import SpecIssue, path_of

PRIMARY_NIC_NOTE = "the primary NIC only"


def check_fabric(cloud: Cloud, pools: Iterable[tuple[int, NodePool]],
                 fabrics: FabricCatalog | None = None) -> list[SpecIssue]:
    fab = fabrics or load_fabric_catalog()
    pools = list(pools)
    issues: list[SpecIssue] = []
    for i, pool in pools:
        machine = fab.for_machine(cloud, pool.machine_type)
        issues += _check_pool(cloud, fab, i, pool, machine)
    issues += _check_shared_networks(cloud, fab, pools)
    return issues


def _capable(fab: FabricCatalog, cloud: Cloud) -> str:
    return ", ".join(sorted(m for (c, m) in fab.machines if c == cloud))


def _check_pool(cloud: Cloud, fab: FabricCatalog, i: int, pool: NodePool,
                machine: MachineFabric | None) -> list[SpecIssue]:
    setting = pool.fabric
    if setting is None:
        return []
    mode_path, nets_path = ("nodePools", i, "fabric", "mode"), ("nodePools", i, "fabric", "networks")
    names = [f"{n.network}/{n.subnetwork}" for n in setting.networks]
    if setting.mode == FabricMode.OFF:
        if machine is None or not pool.multi_node:
            return []
        return [SpecIssue(
            path_of(*mode_path), f"fabric off on multi-node pool '{pool.name}': NCCL traffic between its "
            f"{pool.machine_type} nodes uses {PRIMARY_NIC_NOTE}, giving up {machine.nominal_gbps_per_node:,} Gbps "
            f"of {machine.kind.display_name} per node", "off", "auto, existing",
            "remove `fabric` (mode auto) unless the pool never runs jobs across nodes; the policy pack reports the "
            "pool as topology-fabric-missing (mandatory) until it gets its fabric or a waiver", warning=True)]
    if setting.mode == FabricMode.AUTO:
        if setting.networks:
            return [SpecIssue(path_of(*nets_path), "networks are only read with fabric mode existing", names,
                              "an empty list with mode auto (gpu-cluster creates the networks)",
                              "set fabric.mode: existing to attach these networks, or remove networks")]
        return []
    # existing
    if cloud == Cloud.AWS:
        return [SpecIssue(path_of(*mode_path), "existing networks are a GKE setting: EKS pools carry EFA "
                          "interfaces on their own subnets", "existing", "auto, off",
                          "set fabric.mode: auto (every EFA interface, on the pool's subnets) or off")]
    if machine is None:
        return [SpecIssue(path_of(*mode_path), f"{pool.machine_type} has no GPU fabric to attach networks for",
                          "existing", f"a fabric-capable machine type: {_capable(fab, cloud)}",
                          "remove fabric from this pool, or pick a fabric-capable machine type")]
    return _check_existing_shape(i, setting.networks, machine, names)


def _check_existing_shape(i: int, networks: list, machine: MachineFabric, names: list[str]) -> list[SpecIssue]:
    path = path_of("nodePools", i, "fabric", "networks")
    want = machine.extra_networks
    layout = ", ".join(n for n, _ in network_layout(machine))
    if len(networks) != want:
        shape = (f"{want} entries in NIC order ({layout}): 1 gVNIC network, then the 8 subnets of one RoCE VPC"
                 if machine.kind == FabricKind.RDMA else f"{want} entries in NIC order ({layout}), each its own VPC")
        return [SpecIssue(path, f"{machine.kind.display_name} on {machine.machine_type} needs {want} extra "
                          f"networks, got {len(networks)}", names, shape,
                          f"list {want} {{network, subnetwork}} pairs, or use mode auto to have gpu-cluster create "
                          "them")]
    gvnic = [n.network for n in networks[:machine.gvnic_networks]]
    if len(set(gvnic)) != len(gvnic):
        twice = sorted({n for n in gvnic if gvnic.count(n) > 1})
        verb = "is" if len(twice) == 1 else "are"
        return [SpecIssue(path, f"gVNIC networks must each be a separate VPC; {', '.join(twice)} {verb} listed "
                          "more than once", names, "one VPC network per gVNIC NIC",
                          "create one VPC per GPU NIC (GKE attaches one interface per VPC)")]
    rdma = {n.network for n in networks[machine.gvnic_networks:]}
    if machine.kind == FabricKind.RDMA and len(rdma) != 1:
        return [SpecIssue(path, "the 8 RDMA subnets must belong to one RoCE VPC", names,
                          "entries 2-9 with the same network (created with the zone's -vpc-roce network profile)",
                          "list the 8 subnets of your RoCE VPC after the gVNIC network")]
    if machine.kind == FabricKind.RDMA and rdma & set(gvnic):
        return [SpecIssue(path, "the gVNIC network and the RoCE VPC must differ", names,
                          "a gVNIC VPC, then a RoCE VPC", "use a separate VPC for the gVNIC NIC")]
    return []


def _check_shared_networks(cloud: Cloud, fab: FabricCatalog,
                           pools: list[tuple[int, NodePool]]) -> list[SpecIssue]:
    """Network objects are cluster-scoped and named as GKE's guides do (vpc1…, rdma-0…): every fabric pool of one kind
    shares them, so it must attach the same networks (and, for RDMA, sit in the RoCE VPC's one zone)."""
    if cloud != Cloud.GCP:
        return []
    first: dict[FabricKind, tuple[int, NodePool, tuple]] = {}
    issues: list[SpecIssue] = []
    for i, pool in pools:
        machine = fab.for_machine(cloud, pool.machine_type)
        mode = pool.fabric.mode if pool.fabric else FabricMode.AUTO
        if machine is None or mode == FabricMode.OFF or (mode == FabricMode.AUTO and not pool.multi_node):
            continue
        nets = tuple((n.network, n.subnetwork) for n in pool.fabric.networks) if pool.fabric else ()
        key = (mode.value, nets)
        seen = first.setdefault(machine.kind, (i, pool, key))
        if seen[0] == i:
            continue
        other = seen[1]
        if seen[2] != key:
            issues.append(SpecIssue(
                path_of("nodePools", i, "fabric"),
                f"{machine.kind.display_name} pools of one cluster share its Network objects, but pool '{pool.name}' attaches other networks than pool '{other.name}'",
                {"mode": mode.value, "networks": [f"{a}/{b}" for a, b in nets]},
                f"the same fabric setting as pool '{other.name}'",
                f"copy pool '{other.name}'s fabric setting, or move this pool to its own cluster"))
        elif machine.kind == FabricKind.RDMA and list(pool.zones) != list(other.zones):
            issues.append(SpecIssue(
                path_of("nodePools", i, "zones"), f"RDMA pools share one RoCE VPC, which is bound to one zone, but "
                f"pool '{pool.name}' is in {', '.join(pool.zones)} and pool '{other.name}' in "
                f"{', '.join(other.zones)}", list(pool.zones), ", ".join(other.zones),
                f"put pool '{pool.name}' in the zone of pool '{other.name}'"))
    return issues
