"""GPU machine facts and dated, sourced prices: the single source of truth for spec, components, cost and policies."""
from catalog.loader import Catalog, load_catalog
from catalog.mig import MigCatalog, MigProfile, load_mig_catalog
from catalog.models import (
    AttachableGpu, CapacityType, Cloud, ControlPlaneFee, EksVersion, GpuDirect, GpuModel, HostMachine, MachineType,
    Price, PriceKind, SoldAs, SpecialOffering, ZoneAvailability,
)

__all__ = ["AttachableGpu", "CapacityType", "Catalog", "Cloud", "ControlPlaneFee", "EksVersion", "GpuDirect",
           "GpuModel", "HostMachine", "MachineType", "MigCatalog", "MigProfile", "Price", "PriceKind", "SoldAs",
           "SpecialOffering", "ZoneAvailability", "load_catalog", "load_mig_catalog"]
