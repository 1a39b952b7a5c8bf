"""The multi-node network fabric of each GPU machine type, with sources: what it needs (extra networks, NICs), the
NCCL transport a job uses over it, its nominal bandwidth per node, GKE version floors and the pinned images of its
NCCL plugin, RxDM and device injector. Pure data, read from ``catalog/data/fabric*.csv``; no Pulumi imports.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass, field
from enum import Enum

from catalog.loader import DATA_DIR, Catalog, load_catalog
from catalog.models import Cloud
from catalog.network_cards import EFA_TYPES, network_cards


class FabricKind(str, Enum):
    """The fabric a machine's GPUs talk over between nodes."""

    TCPX = "tcpx"
    """GPUDirect-TCPX (A3 High): 4 extra gVNIC networks, RxDM sidecar, NCCL TCPX plugin."""
    TCPXO = "tcpxo"
    """GPUDirect-TCPXO (A3 Mega): 8 extra gVNIC networks, RxDM sidecar, NCCL TCPXO (FasTrak) plugin."""
    RDMA = "rdma"
    """GPUDirect RDMA over RoCE (A3 Ultra, A4): 1 extra gVNIC network + a RoCE VPC with 8 subnets, gIB plugin."""
    EFA = "efa"
    """AWS Elastic Fabric Adapter: one EFA interface per network card, aws-ofi-nccl over libfabric."""

    @property
    def display_name(self) -> str:
        return {"tcpx": "GPUDirect-TCPX", "tcpxo": "GPUDirect-TCPXO", "rdma": "GPUDirect RDMA (RoCE)", "efa": "EFA"}[
            self.value
        ]


@dataclass(frozen=True)
class MachineFabric:
    cloud: Cloud
    machine_type: str
    kind: FabricKind
    gvnic_networks: int
    """Extra gVNIC VPC networks a node attaches (GKE), besides the primary one."""
    rdma_networks: int
    """RDMA subnets of the RoCE VPC a node attaches (GKE RDMA machines)."""
    gpu_nics: int
    """NICs per node that carry GPU traffic: the GPU NICs on GKE, the EFA interfaces on EKS."""
    nccl_transport: str
    nominal_gbps_per_node: int
    """Nominal GPU-network bandwidth per node in Gbit/s (the fabric's NICs, not the primary NIC)."""
    bandwidth_source: str
    source: str
    gke_managed_profile: str = ""
    """The node pool ``acceleratorNetworkProfile`` with which GKE creates and attaches the fabric's networks itself
    (``auto``: RDMA machines, managed DRANET); empty where GKE offers no managed mode."""
    gke_dra_device_class: str = ""
    """The DeviceClass GKE managed DRANET publishes the fabric's NICs under (``mrdma.google.com``: RDMA NICs); with
    the managed profile a pod gets the NICs only through a DRA claim on it. Empty without a managed mode."""

    @property
    def extra_networks(self) -> int:
        return self.gvnic_networks + self.rdma_networks


@dataclass(frozen=True)
class FabricImage:
    fabric: FabricKind
    component: str
    """``nccl-plugin``, ``rxdm``, ``nri-device-injector``, ``pause`` or ``host-setup``."""
    image: str
    version: str
    """An exact tag (``v1.0.14``), or a digest (``sha256:…``), or both (``3.8@sha256:…``)."""
    pairs_with: str
    """The version of the other half this one is released with (RxDM ↔ NCCL plugin); empty when unpaired."""
    source: str

    @property
    def reference(self) -> str:
        """The pull reference: ``repo:tag``, ``repo@sha256:…`` or ``repo:tag@sha256:…``."""
        return f"{self.image}@{self.version}" if self.version.startswith("sha256:") else f"{self.image}:{self.version}"

    def reference_in(self, region: str) -> str:
        """:attr:`reference` with a per-region registry's ``{region}`` filled in (AWS Deep Learning Containers)."""
        return self.reference.replace("{region}", region)


@dataclass(frozen=True)
class ImageGap:
    """An image known to lack what a fabric needs (EFA: libfabric + aws-ofi-nccl), matched by prefix."""

    fabric: FabricKind
    image_prefix: str
    lacks: str
    source: str

    def matches(self, image: str) -> bool:
        return image == self.image_prefix or image.startswith((f"{self.image_prefix}:", f"{self.image_prefix}@"))


@dataclass(frozen=True)
class Entrypoint:
    """How upstream starts a fabric image's entry script (``fabric-entrypoints.csv``): the command, and whether its
    manifests of the pinned release ``chmod 755`` the script first (the image may ship it without the exec bit)."""

    fabric: FabricKind
    component: str
    version: str
    """The image version the row was read for; must equal the pinned one (``fabric-images.csv``)."""
    entry: str
    chmod: bool
    source: str

    @property
    def script(self) -> str:
        return self.entry.split()[0]

    def command(self, then: str = "; ") -> str:
        """The entry command, after ``chmod 755 <script>`` where upstream runs one (``then`` joins the two)."""
        return f"chmod 755 {self.script}{then}{self.entry}" if self.chmod else self.entry


@dataclass(frozen=True)
class GkeVersionFloor:
    fabric: FabricKind
    managed: bool
    """True: the floor of GKE-managed accelerator networking; False: of networks gpu-cluster (or you) attach."""
    minor: str
    min_version: str
    source: str


@dataclass
class FabricCatalog:
    machines: dict[tuple[Cloud, str], MachineFabric] = field(default_factory=dict)
    images: dict[tuple[FabricKind, str], FabricImage] = field(default_factory=dict)
    floors: dict[tuple[FabricKind, bool, str], GkeVersionFloor] = field(default_factory=dict)
    image_gaps: list[ImageGap] = field(default_factory=list)
    entrypoints: dict[tuple[FabricKind, str], Entrypoint] = field(default_factory=dict)

    def image_gap(self, kind: FabricKind, image: str) -> ImageGap | None:
        """What ``image`` is known to lack for ``kind`` (None: nothing known)."""
        return next((g for g in self.image_gaps if g.fabric == kind and g.matches(image)), None)

    def for_machine(self, cloud: Cloud, machine_type: str) -> MachineFabric | None:
        return self.machines.get((cloud, machine_type))

    def image(self, kind: FabricKind, component: str) -> FabricImage:
        return self.images[(kind, component)]

    def entrypoint(self, kind: FabricKind, component: str) -> Entrypoint:
        return self.entrypoints[(kind, component)]

    def version_floors(self, kind: FabricKind, managed: bool = False) -> list[GkeVersionFloor]:
        """Per GKE minor the first version the fabric works on, oldest minor first; empty: no sourced floor."""
        return sorted(
            (f for (k, m, _), f in self.floors.items() if k == kind and m == managed),
            key=lambda f: tuple(int(x) for x in f.minor.split(".")),
        )

    def pairing_ok(self, kind: FabricKind) -> bool:
        """RxDM and the NCCL plugin are released together: each names the other's version."""
        try:
            plugin, rxdm = self.image(kind, "nccl-plugin"), self.image(kind, "rxdm")
        except KeyError:
            return True  # no RxDM for this fabric (gIB, EFA)
        return plugin.pairs_with == rxdm.version and rxdm.pairs_with == plugin.version


def _rows(name: str) -> list[dict[str, str]]:
    with open(DATA_DIR / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _parse(cat: Catalog) -> FabricCatalog:
    out = FabricCatalog()
    for r in _rows("fabrics.csv"):
        cloud = Cloud(r["cloud"])
        machine = cat.machines[(cloud, r["machine_type"])]
        # EFA interfaces are machine facts (machines.csv): one copy only. Where the cards differ
        # (network-cards.csv), the EFA device plugin advertises one vpc.amazonaws.com/efa per EFA interface the
        # launch template attaches, so a pod's request is the layout's count, never a separate number
        cards = network_cards(cloud, r["machine_type"]) if r["fabric"] == FabricKind.EFA.value else None
        nics = (
            int(r["gpu_nics"])
            if r["gpu_nics"].strip()
            else sum(c.efa_interface in EFA_TYPES for c in cards)
            if cards
            else machine.efa_interfaces
        )
        if nics is None:
            raise ValueError(f"catalog/data/fabrics.csv: {r['machine_type']} has no NIC count anywhere")
        out.machines[(cloud, r["machine_type"])] = MachineFabric(
            cloud=cloud,
            machine_type=r["machine_type"],
            kind=FabricKind(r["fabric"]),
            gvnic_networks=int(r["gvnic_networks"]),
            rdma_networks=int(r["rdma_networks"]),
            gpu_nics=nics,
            nccl_transport=r["nccl_transport"],
            nominal_gbps_per_node=int(r["nominal_gbps_per_node"]),
            bandwidth_source=r["bandwidth_source"],
            source=r["fabric_source"],
            gke_managed_profile=r["gke_managed_profile"].strip(),
            gke_dra_device_class=r["gke_dra_device_class"].strip(),
        )
    for r in _rows("fabric-images.csv"):
        kind = FabricKind(r["fabric"])
        out.images[(kind, r["component"])] = FabricImage(
            fabric=kind,
            component=r["component"],
            image=r["image"],
            version=r["version"],
            pairs_with=r["pairs_with"],
            source=r["source"],
        )
    for r in _rows("fabric-versions.csv"):
        kind, managed = FabricKind(r["fabric"]), {"networks": False, "managed": True}[r["networking"]]
        out.floors[(kind, managed, r["gke_minor"])] = GkeVersionFloor(
            fabric=kind, managed=managed, minor=r["gke_minor"], min_version=r["min_gke_version"], source=r["source"]
        )
    for r in _rows("fabric-entrypoints.csv"):
        kind = FabricKind(r["fabric"])
        out.entrypoints[(kind, r["component"])] = Entrypoint(
            fabric=kind,
            component=r["component"],
            version=r["version"],
            entry=r["entry"],
            chmod={"yes": True, "no": False}[r["chmod"]],
            source=r["source"],
        )
    for r in _rows("fabric-image-gaps.csv"):
        out.image_gaps.append(
            ImageGap(
                fabric=FabricKind(r["fabric"]), image_prefix=r["image_prefix"], lacks=r["lacks"], source=r["source"]
            )
        )
    return out


@functools.cache
def load_fabric_catalog() -> FabricCatalog:
    """The fabric tables, parsed once per process."""
    return _parse(load_catalog())
