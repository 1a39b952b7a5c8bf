"""MIG (Multi-Instance GPU) profiles per GPU model, loaded once from ``catalog/data/mig-profiles.csv``.

Pure data: no Pulumi imports. Spec validation, the GPU runtime and the preview read it; nothing keeps a copy.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass, field

from catalog.loader import DATA_DIR
from catalog.models import GpuModel


@dataclass(frozen=True)
class MigProfile:
    gpu_model: GpuModel
    profile: str
    """NVIDIA profile name, e.g. ``1g.10gb`` (compute slices ``g``, memory ``gb``)."""
    compute_slices: int
    memory_gib: int
    max_instances_per_gpu: int
    """Instances of this profile one GPU holds when every slice uses it (what an ``all-<profile>`` layout yields)."""
    gke_partition: bool
    """GKE accepts it as a node pool ``gpu_partition_size``."""
    source: str


@dataclass
class MigCatalog:
    profiles: dict[tuple[GpuModel, str], MigProfile] = field(default_factory=dict)

    def supports_mig(self, model: GpuModel) -> bool:
        return any(m == model for (m, _) in self.profiles)

    def mig_models(self) -> list[GpuModel]:
        return sorted({m for (m, _) in self.profiles}, key=lambda m: m.value)

    def profile(self, model: GpuModel, name: str) -> MigProfile | None:
        return self.profiles.get((model, name))

    def profile_names(self, model: GpuModel, gke_only: bool = False) -> list[str]:
        """Profiles of one GPU model, smallest first (``gke_only``: the ones GKE can partition)."""
        rows = [p for (m, _), p in self.profiles.items() if m == model and (p.gke_partition or not gke_only)]
        return [p.profile for p in sorted(rows, key=lambda p: (p.compute_slices, p.memory_gib))]


def _parse() -> MigCatalog:
    cat = MigCatalog()
    with open(DATA_DIR / "mig-profiles.csv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            key = (GpuModel(r["gpu_model"]), r["profile"])
            if key in cat.profiles:
                raise ValueError(f"catalog/data/mig-profiles.csv: duplicate row for {key}")
            cat.profiles[key] = MigProfile(
                gpu_model=key[0],
                profile=r["profile"],
                compute_slices=int(r["compute_slices"]),
                memory_gib=int(r["memory_gib"]),
                max_instances_per_gpu=int(r["max_instances_per_gpu"]),
                gke_partition=r["gke_partition"] == "true",
                source=r["source"],
            )
    return cat


@functools.cache
def load_mig_catalog() -> MigCatalog:
    """The MIG profile table, parsed once per process."""
    return _parse()
