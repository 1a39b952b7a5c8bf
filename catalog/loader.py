"""Load the catalog's CSV data files once into typed, indexed records."""

from __future__ import annotations

import csv
import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from catalog.models import (
    AttachableGpu,
    CapacityBlockRate,
    CapacityType,
    Cloud,
    ControlPlaneFee,
    EksVersion,
    GpuDirect,
    GpuModel,
    HostMachine,
    MachineType,
    NvlinkDomain,
    Price,
    PriceKind,
    SoldAs,
    SpecialOffering,
    UltraServer,
    ZoneAvailability,
)

DATA_DIR = Path(__file__).parent / "data"
PRICE_FILES = ("prices.csv", "flex-start-prices.csv")
"""Node prices: list prices (on-demand, spot), and GKE flex-start (DWS) prices kept apart in their own file."""
PRICE_KIND = {CapacityType.SPOT: PriceKind.SPOT, CapacityType.FLEX_START: PriceKind.FLEX_START}
"""The price list a capacity type is charged from; any other (on-demand, reservation) pays on-demand."""


def _rows(name: str) -> list[dict[str, str]]:
    with open(DATA_DIR / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _opt_int(text: str) -> int | None:
    return int(text) if text.strip() else None


@dataclass
class Catalog:
    machines: dict[tuple[Cloud, str], MachineType] = field(default_factory=dict)
    attachable: dict[tuple[Cloud, str], AttachableGpu] = field(default_factory=dict)
    hosts: dict[tuple[Cloud, str], HostMachine] = field(default_factory=dict)
    prices: dict[tuple[Cloud, str, str, PriceKind], Price] = field(default_factory=dict)
    """(cloud, machine type or attachable accelerator, region, price kind) -> price."""
    regions: dict[tuple[Cloud, str], tuple[str, ...]] = field(default_factory=dict)
    zone_ids: dict[tuple[Cloud, str], tuple[str, ...]] = field(default_factory=dict)
    """AWS: the region's account-independent AZ IDs (``use1-az1``), as the sources list them."""
    zone_availability: dict[tuple[Cloud, str], ZoneAvailability] = field(default_factory=dict)
    """(cloud, machine type or N1-attachable GPU) -> the zones a source saw offering it (every catalog region)."""
    special: dict[tuple[Cloud, str], SpecialOffering] = field(default_factory=dict)
    """Machines sold only as capacity blocks or UltraServers: the plain form does not exist."""
    control_plane: dict[Cloud, ControlPlaneFee] = field(default_factory=dict)
    """The per-cluster fee on standard support (GKE's only fee)."""
    control_plane_extended: dict[Cloud, ControlPlaneFee] = field(default_factory=dict)
    """EKS: the per-cluster fee for a Kubernetes version past its end of standard support."""
    eks_versions: dict[str, EksVersion] = field(default_factory=dict)
    """The EKS release calendar: minor version (``1.34``) -> support dates."""
    nvlink_domains: dict[tuple[Cloud, str], NvlinkDomain] = field(default_factory=dict)
    """Rack-scale NVLink machines (GB200 NVL72): (cloud, machine type) -> the domain its nodes form."""
    ultraservers: dict[str, UltraServer] = field(default_factory=dict)
    """EC2 UltraServer types (``u-p6e-gb200x72``) -> instances and GPUs."""
    block_rates: dict[tuple[Cloud, str, str], CapacityBlockRate] = field(default_factory=dict)
    """(cloud, machine type, region) -> a reference capacity-block rate (third-party scrape; see the source)."""

    # -- lookups ---------------------------------------------------------------------------------------------
    def machine_types(self, cloud: Cloud) -> list[str]:
        """Every GPU machine type name the spec may use on this cloud (fixed-GPU types and N1 hosts)."""
        fixed = [m for (c, m) in self.machines if c == cloud]
        hosts = [m for (c, m), h in self.hosts.items() if c == cloud and h.role == "gpu-host"]
        return sorted(fixed + hosts)

    def system_machine_types(self, cloud: Cloud) -> list[str]:
        return sorted(m for (c, m), h in self.hosts.items() if c == cloud and h.role == "system")

    def region_names(self, cloud: Cloud) -> list[str]:
        return sorted(r for (c, r) in self.regions if c == cloud)

    def has_region(self, cloud: Cloud, region: str) -> bool:
        return (cloud, region) in self.regions

    def zones(self, cloud: Cloud, region: str) -> tuple[str, ...]:
        """The zone names the sources list (GCP). AWS: none, since an AZ name (``us-east-1a``) maps to an AZ ID
        differently in every account and the sources list only the IDs (``zone_ids``); see ``is_zone``."""
        return self.regions.get((cloud, region), ())

    def is_zone(self, cloud: Cloud, region: str, zone: str) -> bool:
        """GCP: a listed zone of the region. AWS: any ``<region><letter>`` name of a catalog region (which letters an
        account has is not sourced, so none is refused for its letter)."""
        if cloud == Cloud.AWS:
            return self.has_region(cloud, region) and re.fullmatch(re.escape(region) + "[a-z]", zone) is not None
        return zone in self.zones(cloud, region)

    def is_local_zone(self, cloud: Cloud, region: str, zone: str) -> bool:
        """AWS: a Local Zone of a catalog region by its name (``us-east-1-dfw-2a``: region, metro code, number and
        letter; EC2 "Local Zones" naming). Nodes may run there; the EKS control plane never does."""
        return (
            cloud == Cloud.AWS
            and self.has_region(cloud, region)
            and re.fullmatch(re.escape(region) + r"-[a-z]{3}-\d+[a-z]", zone) is not None
        )

    def offered_zones(self, cloud: Cloud, machine: MachineType) -> ZoneAvailability | None:
        """Where a source saw this machine offered (an N1 pool: where its GPU is), or None when nothing is known."""
        key = machine.accelerator if machine.attachable else machine.machine_type
        return self.zone_availability.get((cloud, key))

    def attachable_gpus(self, cloud: Cloud, host_machine_type: str) -> list[AttachableGpu]:
        return [a for (c, _), a in self.attachable.items() if c == cloud and host_machine_type in a.host_machine_types]

    def resolve(
        self, cloud: Cloud, machine_type: str, accelerator: str | None = None, count: int | None = None
    ) -> MachineType | None:
        """Machine facts for a pool: a fixed-GPU type, or an N1 host with its attached GPUs folded in."""
        fixed = self.machines.get((cloud, machine_type))
        if fixed is not None:
            return fixed
        host = self.hosts.get((cloud, machine_type))
        gpu = self.attachable.get((cloud, accelerator or ""))
        if host is None or host.role != "gpu-host" or gpu is None or not count:
            return None
        return MachineType(
            cloud=cloud,
            machine_type=machine_type,
            gpu_model=gpu.gpu_model,
            accelerator=gpu.accelerator,
            gpus=count,
            gpu_memory_gib=gpu.gpu_memory_gib * count,
            vcpu=host.vcpu,
            ram_gib=host.ram_gib,
            nvlink_domain_gpus=1,
            efa_interfaces=0,
            efa_confirmed=True,
            gpudirect=GpuDirect.NONE,
            arch="x86_64",
            interconnect="PCIe (attached GPU)",
            source=f"{host.source}; {gpu.source}",
            attachable=True,
        )

    def node_price(self, machine: MachineType, region: str, capacity: CapacityType) -> Price | None:
        """$/node-hour for a GPU machine, or None when the catalog has no price (callers fail closed)."""
        kind = PRICE_KIND.get(capacity, PriceKind.ON_DEMAND)
        base = self.prices.get((machine.cloud, machine.machine_type, region, kind))
        if base is None or not machine.attachable:
            return base
        gpu = self.prices.get((machine.cloud, machine.accelerator, region, kind))
        if gpu is None:
            return None
        return Price(
            usd_per_hour=base.usd_per_hour + gpu.usd_per_hour * machine.gpus,
            as_of=min(base.as_of, gpu.as_of),
            label=f"{base.label} + {gpu.label}",
            source=f"{base.source}; {gpu.source}",
        )

    def nvlink_domain(self, machine: MachineType) -> NvlinkDomain | None:
        """The rack-scale NVLink domain the machine's nodes form, or None (the NVLink domain ends at the node)."""
        return self.nvlink_domains.get((machine.cloud, machine.machine_type))

    def ultraserver_types(self, cloud: Cloud, machine_type: str) -> list[UltraServer]:
        return sorted(
            (u for u in self.ultraservers.values() if u.cloud == cloud and u.machine_type == machine_type),
            key=lambda u: u.instances,
        )

    def control_plane_fee(self, cloud: Cloud, kubernetes_version: str | None = None) -> ControlPlaneFee:
        """The per-cluster fee. EKS bills by the version's support status, judged on the fee's own as-of date (the
        catalog's "today", 2026-12-02: a preview is reproducible and says what the price list said, not what
        ``datetime.now()`` says). A version the calendar does not know is priced at extended support (unknown is not
        the cheaper price); ``None`` (provider default: the newest version) is standard."""
        fee = self.control_plane[cloud]
        if cloud != Cloud.AWS or kubernetes_version is None:
            return fee
        version = self.eks_versions.get(kubernetes_version)
        if version is None or version.extended_on(fee.as_of):
            return self.control_plane_extended[cloud]
        return fee

    def eks_versions_in_standard_support(self) -> list[str]:
        """EKS versions not yet past standard support on the fee's as-of date, oldest first."""
        day = self.control_plane[Cloud.AWS].as_of
        return sorted(
            (v for v, cal in self.eks_versions.items() if not cal.extended_on(day)),
            key=lambda v: tuple(int(x) for x in v.split(".")),
        )

    def host_price(self, cloud: Cloud, machine_type: str, region: str) -> Price | None:
        return self.prices.get((cloud, machine_type, region, PriceKind.ON_DEMAND))

    def priced_regions(self, machine: MachineType, capacity: CapacityType) -> list[str]:
        return sorted(
            r for (c, r) in self.regions if c == machine.cloud and self.node_price(machine, r, capacity) is not None
        )


def _parse() -> Catalog:
    cat = Catalog()
    for r in _rows("machines.csv"):
        cloud = Cloud(r["cloud"])
        cat.machines[(cloud, r["machine_type"])] = MachineType(
            cloud=cloud,
            machine_type=r["machine_type"],
            gpu_model=GpuModel(r["gpu_model"]),
            accelerator=r["accelerator"],
            gpus=int(r["gpus"]),
            gpu_memory_gib=int(r["gpu_memory_gib"]),
            vcpu=_opt_int(r["vcpu"]),
            ram_gib=_opt_int(r["ram_gib"]),
            nvlink_domain_gpus=int(r["nvlink_domain_gpus"]),
            efa_interfaces=_opt_int(r["efa_interfaces"]),
            efa_confirmed=r["efa_confirmed"] == "true",
            gpudirect=GpuDirect(r["gpudirect"]),
            arch=r["arch"],
            interconnect=r["interconnect"],
            source=r["source"],
        )
    for r in _rows("attachable-gpus.csv"):
        cloud = Cloud(r["cloud"])
        cat.attachable[(cloud, r["accelerator"])] = AttachableGpu(
            cloud=cloud,
            accelerator=r["accelerator"],
            gpu_model=GpuModel(r["gpu_model"]),
            gpu_memory_gib=int(r["gpu_memory_gib"]),
            allowed_counts=tuple(int(x) for x in r["allowed_counts"].split()),
            host_machine_types=tuple(r["host_machine_types"].split()),
            source=r["source"],
        )
    for r in _rows("host-machines.csv"):
        cloud = Cloud(r["cloud"])
        cat.hosts[(cloud, r["machine_type"])] = HostMachine(
            cloud=cloud,
            machine_type=r["machine_type"],
            role=r["role"],
            vcpu=int(r["vcpu"]),
            ram_gib=int(r["ram_gib"]),
            source=r["source"],
        )
    for name, r in ((name, r) for name in PRICE_FILES for r in _rows(name)):
        key = (Cloud(r["cloud"]), r["machine_type"], r["region"], PriceKind(r["capacity"]))
        if key in cat.prices:
            raise ValueError(f"catalog/data/{name}: duplicate price row for {key}")
        cat.prices[key] = Price(
            usd_per_hour=float(r["usd_per_hour"]),
            as_of=dt.date.fromisoformat(r["as_of"]),
            label=r["label"],
            source=r["source"],
        )
    for r in _rows("regions.csv"):
        cat.regions[(Cloud(r["cloud"]), r["region"])] = tuple(r["zones"].split())
        cat.zone_ids[(Cloud(r["cloud"]), r["region"])] = tuple(r["zone_ids"].split())
    for r in _rows("zone-availability.csv"):
        cat.zone_availability[(Cloud(r["cloud"]), r["machine_type"])] = ZoneAvailability(
            machine_type=r["machine_type"],
            zones=tuple(r["zones"].split()),
            as_of=dt.date.fromisoformat(r["as_of"]),
            source=r["source"],
        )
    for r in _rows("special-offerings.csv"):
        cat.special[(Cloud(r["cloud"]), r["machine_type"])] = SpecialOffering(
            cloud=Cloud(r["cloud"]),
            machine_type=r["machine_type"],
            sold_as=SoldAs(r["sold_as"]),
            gpus=int(r["gpus"]),
            fabric=r["fabric"],
            source=r["source"],
        )
    for r in _rows("control-plane.csv"):
        fees = {"standard": cat.control_plane, "extended": cat.control_plane_extended}[r["support"]]
        fees[Cloud(r["cloud"])] = ControlPlaneFee(
            usd_per_hour=float(r["usd_per_hour"]),
            as_of=dt.date.fromisoformat(r["as_of"]),
            label=r["label"],
            source=r["source"],
            support=r["support"],
        )
    for r in _rows("eks-versions.csv"):
        cat.eks_versions[r["version"]] = EksVersion(
            version=r["version"],
            end_of_standard_support=dt.date.fromisoformat(r["end_of_standard_support"]),
            end_of_extended_support=dt.date.fromisoformat(r["end_of_extended_support"]),
            as_of=dt.date.fromisoformat(r["as_of"]),
            source=r["source"],
        )
    for r in _rows("nvlink-domains.csv"):
        cat.nvlink_domains[(Cloud(r["cloud"]), r["machine_type"])] = NvlinkDomain(
            cloud=Cloud(r["cloud"]),
            machine_type=r["machine_type"],
            domain_gpus=int(r["domain_gpus"]),
            domain_nodes=int(r["domain_nodes"]),
            accelerator_topology=r["accelerator_topology"],
            domain_label=r["domain_label"],
            block_label=r["block_label"],
            source=r["source"],
        )
    for r in _rows("ultraservers.csv"):
        cat.ultraservers[r["ultraserver_type"]] = UltraServer(
            cloud=Cloud(r["cloud"]),
            ultraserver_type=r["ultraserver_type"],
            machine_type=r["machine_type"],
            instances=int(r["instances"]),
            gpus=int(r["gpus"]),
            source=r["source"],
        )
    for r in _rows("capacity-block-rates.csv"):
        cat.block_rates[(Cloud(r["cloud"]), r["machine_type"], r["region"])] = CapacityBlockRate(
            cloud=Cloud(r["cloud"]),
            machine_type=r["machine_type"],
            region=r["region"],
            usd_per_gpu_hour=float(r["usd_per_gpu_hour"]),
            as_of=dt.date.fromisoformat(r["as_of"]),
            label=r["label"],
            source=r["source"],
        )
    return cat


@functools.cache
def load_catalog() -> Catalog:
    """The catalog, parsed once per process."""
    return _parse()
