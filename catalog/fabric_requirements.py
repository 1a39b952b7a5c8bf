"""What an NCCL process needs to use each fabric, one sourced row per requirement (``catalog/data/
fabric-requirements.csv``): the environment, library path, mounts, devices/resources, ``/dev/shm``, interfaces,
sidecar and image a training process on that fabric must see, and what happens without it. The fabric contract
(``stacks/plan/fabric_contract.py``) compares a rendered workload with these rows. Pure data; no Pulumi."""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from enum import Enum

from catalog.fabric import FabricKind
from catalog.loader import DATA_DIR


class Aspect(str, Enum):
    ENV = "env"
    """``name`` is set to ``expected`` in the process's environment."""
    ENV_UNSET = "env-unset"
    """``name`` is not set (a deprecated variable upstream dropped)."""
    LD_PATH = "ld-path"
    """``expected`` is a directory of ``LD_LIBRARY_PATH`` (where the NCCL net plugin is loaded from)."""
    MOUNT = "mount"
    """Something is mounted at ``expected`` in the training container."""
    INTERFACES = "interfaces"
    """The pod gets ``expected`` GPU NICs (multi-network interfaces, or a DRA claim of that many)."""
    SIDECAR = "sidecar"
    """A native sidecar named ``name`` runs beside the training container (RxDM)."""
    RESOURCE = "resource"
    """The training container requests (= limits) ``expected`` of resource ``name``."""
    SHM = "shm"
    """``/dev/shm`` is a Memory emptyDir of at least ``expected``."""
    IMAGE = "image"
    """A catalog row vouches that the training container's image has the fabric's libraries: a published image
    (``fabric-image-capabilities.csv``), or a recipe's build named by digest and checked at pod start
    (``image-builds.csv``); an image known to lack them (``fabric-image-gaps.csv``) or unknown is unmet."""
    GATE = "gate"
    """An init container that runs before the job and its sidecars reads host directory ``expected`` (where the NCCL
    plugin installer writes its ready marker): the job cannot start before the plugin is on the node."""


class WithoutIt(str, Enum):
    TCP = "tcp"
    """NCCL falls back to TCP sockets on the primary NIC (the mandatory policy's case)."""
    FAILS = "fails"
    """The job fails at NCCL init or never starts."""
    SLOWER = "slower"
    """The fabric is used, below its tuned speed."""


@dataclass(frozen=True)
class Requirement:
    fabric: FabricKind
    machine: str
    """Only for this machine type; empty: every machine of the fabric."""
    id: str
    aspect: Aspect
    name: str
    expected: str
    """The value; ``{gpu_nics}`` stands for the machine's NICs per node."""
    without_it: WithoutIt
    source: str

    def expected_for(self, gpu_nics: int) -> str:
        return self.expected.replace("{gpu_nics}", str(gpu_nics))


@functools.cache
def load_requirements() -> tuple[Requirement, ...]:
    with open(DATA_DIR / "fabric-requirements.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return tuple(
        Requirement(
            fabric=FabricKind(r["fabric"]),
            machine=r["machine"].strip(),
            id=r["id"],
            aspect=Aspect(r["aspect"]),
            name=r["name"],
            expected=r["expected"],
            without_it=WithoutIt(r["without_it"]),
            source=r["source"],
        )
        for r in rows
    )


def requirements_for(kind: FabricKind, machine_type: str) -> list[Requirement]:
    return [r for r in load_requirements() if r.fabric == kind and r.machine in ("", machine_type)]
