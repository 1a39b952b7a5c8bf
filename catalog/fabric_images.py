"""Which job images carry a fabric's NCCL libraries, by a sourced row, and the image recipes this repository ships.

- ``catalog/data/fabric-image-capabilities.csv``: published images known to carry what a fabric needs in the job's
  image (EFA: libfabric's EFA provider + the aws-ofi-nccl plugin), with the source that says so.
- ``catalog/data/image-builds.csv``: recipes under ``images/`` (``images/slurmd-efa/Dockerfile``) with their pinned
  base image and EFA installer (version + sha256), the architectures they build for and the marker file the build
  writes. A user builds and pushes the recipe, then names the pushed image **by digest** with
  ``fabric.runtimeImageBuild``; the NodeSet checks the marker and the libraries at start (``render/fabric_pod.py``).

The fabric contract's image requirement is met only by an image one of these rows vouches for; an image known to lack
the plugin (``fabric-image-gaps.csv``) or unknown to both tables is not. Pure data; no Pulumi.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass

from catalog.fabric import FabricKind
from catalog.loader import DATA_DIR

DIGEST = re.compile(r"^[^@\s]+@sha256:[0-9a-f]{64}$")
"""An image pinned by digest: ``repo@sha256:<64 lowercase hex>``."""


def by_digest(image: str) -> bool:
    """``repo@sha256:<64 hex>`` with no tag before the digest (the Slinky chart drops one: the digest decides)."""
    return DIGEST.match(image) is not None and ":" not in image.partition("@")[0].rsplit("/", 1)[-1]


BUILD_ANNOTATION = "gpu-cluster/image-build"
"""Pod annotation naming the recipe (``image-builds.csv``) the pod's job image was built from."""
CHECK_CONTAINER = "fabric-image-check"
"""The init container that checks, from the job image itself, that it is the recipe's build (``render/
fabric_image_check.py``)."""


@dataclass(frozen=True)
class ImageCapability:
    fabric: FabricKind
    image: str
    """The exact reference; ``{region}`` stands for an AWS region (per-region ECR registries)."""
    provides: str
    architectures: frozenset[str]
    source: str

    def matches(self, image: str) -> bool:
        pattern = "^" + re.escape(self.image).replace(re.escape("{region}"), "[a-z]{2}(-[a-z]+)+-[0-9]") + "$"
        return re.match(pattern, image) is not None


@dataclass(frozen=True)
class ImageBuild:
    build: str
    fabric: FabricKind
    dockerfile: str
    base_image: str
    efa_installer_version: str
    efa_installer_sha256: str
    architectures: frozenset[str]
    marker: str
    """The file the build writes (``build=<name>``); the NodeSet's start check reads it."""
    provides: str
    source: str


@dataclass(frozen=True)
class FabricImageTables:
    capabilities: tuple[ImageCapability, ...]
    builds: dict[str, ImageBuild]

    def capability(self, kind: FabricKind, image: str) -> ImageCapability | None:
        return next((c for c in self.capabilities if c.fabric == kind and c.matches(image)), None)

    def build(self, name: str) -> ImageBuild | None:
        return self.builds.get(name)


def _rows(name: str) -> list[dict[str, str]]:
    with open(DATA_DIR / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@functools.cache
def load_fabric_image_tables() -> FabricImageTables:
    caps = tuple(
        ImageCapability(
            fabric=FabricKind(r["fabric"]),
            image=r["image"],
            provides=r["provides"],
            architectures=frozenset(r["architectures"].split()),
            source=r["source"],
        )
        for r in _rows("fabric-image-capabilities.csv")
    )
    builds = {
        r["build"]: ImageBuild(
            build=r["build"],
            fabric=FabricKind(r["fabric"]),
            dockerfile=r["dockerfile"],
            base_image=r["base_image"],
            efa_installer_version=r["efa_installer_version"],
            efa_installer_sha256=r["efa_installer_sha256"],
            architectures=frozenset(r["architectures"].split()),
            marker=r["marker"],
            provides=r["provides"],
            source=r["source"],
        )
        for r in _rows("image-builds.csv")
    }
    return FabricImageTables(caps, builds)
