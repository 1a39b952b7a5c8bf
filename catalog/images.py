"""Which CPU architectures each pinned container image has (``catalog/data/image-architectures.csv``), with the
source that says so, and which images a pinned chart runs on GPU nodes by default. Pure data; no Pulumi.

An arm64 pool (GB200: Grace hosts) needs every image scheduled onto it to have an arm64 variant; the policy pack's
``topology-arm64-images`` rule reads this table. ``basis`` says how sure the row is: ``documented`` (a source states
the platforms) or ``inferred`` (from where a source runs the image). No registry is reachable offline: verify with
``crane manifest <image>`` / ``docker buildx imagetools inspect <image>`` when you add a row.
"""
from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from catalog.loader import DATA_DIR

ARCH_OF_MACHINE = {"x86_64": "amd64", "arm64": "arm64"}
"""Catalog machine architecture -> OCI platform architecture."""


@dataclass(frozen=True)
class ImageArchitectures:
    image: str
    """The full reference as pinned (``repo:tag`` or ``repo:tag@sha256:…``)."""
    architectures: frozenset[str]
    chart: str
    """``<chart>@<version>`` whose default values run this image on GPU nodes; empty for images pinned directly."""
    basis: str
    source: str

    def supports(self, machine_arch: str) -> bool:
        return ARCH_OF_MACHINE.get(machine_arch, machine_arch) in self.architectures


@dataclass(frozen=True)
class ImageTable:
    images: dict[str, ImageArchitectures]

    def lookup(self, image: str) -> ImageArchitectures | None:
        """By the exact reference, or with ``docker.io/library/`` / ``docker.io/`` added the way a runtime does."""
        for ref in (image, f"docker.io/{image}", f"docker.io/library/{image}"):
            if ref in self.images:
                return self.images[ref]
        return None

    def chart_images(self, chart: str, version: str) -> list[ImageArchitectures]:
        return [i for i in self.images.values() if i.chart == f"{chart}@{version}"]


@functools.cache
def load_image_table() -> ImageTable:
    with open(DATA_DIR / "image-architectures.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return ImageTable({r["image"]: ImageArchitectures(
        image=r["image"], architectures=frozenset(r["architectures"].split()), chart=r["chart"], basis=r["basis"],
        source=r["source"]) for r in rows})
