"""GPU machine facts and dated, sourced prices: the single source of truth for spec, components, cost and policies."""

from catalog.loader import Catalog, load_catalog
from catalog.mig import MigCatalog, MigProfile, load_mig_catalog
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

__all__ = [
    "AttachableGpu",
    "CapacityBlockRate",
    "CapacityType",
    "Catalog",
    "Cloud",
    "ControlPlaneFee",
    "EksVersion",
    "GpuDirect",
    "GpuModel",
    "HostMachine",
    "MachineType",
    "MigCatalog",
    "MigProfile",
    "NvlinkDomain",
    "Price",
    "PriceKind",
    "SoldAs",
    "SpecialOffering",
    "UltraServer",
    "ZoneAvailability",
    "load_catalog",
    "load_mig_catalog",
]
