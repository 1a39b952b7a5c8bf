"""Which CPU architectures each pinned container image has (``catalog/data/image-architectures.csv``), with the
source that says so, and which images a pinned chart runs on GPU nodes by default. Pure data; no Pulumi.

``data/chart-operands.csv`` lists the images an operator chart (the GPU Operator) deploys onto GPU nodes, by the
values that turn each on.

An arm64 pool (GB200: Grace hosts) needs every image scheduled onto it to have an arm64 variant; the policy pack's
``topology-arm64-images`` rule reads this table. ``basis`` says how sure the row is: ``documented`` (a source states
the platforms) or ``inferred`` (from where a source runs the image). No registry is reachable offline: verify with
``crane manifest <image>`` / ``docker buildx imagetools inspect <image>`` when you add a row.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from catalog.image_digests import load_image_digests
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
        named, sep, digest = image.partition("@")
        if not sep:
            return None
        rows = [r for r in load_image_digests().values() if named in (r.image, r.repository if r.at_deploy else "")]
        if len(rows) == 1 and (digest == rows[0].digest or rows[0].at_deploy):
            # gpu-cluster's own digest pin of the tag (catalog/image_digests.py; the Slinky chart drops the tag)
            return self.lookup(rows[0].image)
        return None

    def chart_images(self, chart: str, version: str) -> list[ImageArchitectures]:
        return [i for i in self.images.values() if i.chart == f"{chart}@{version}"]


@dataclass(frozen=True)
class ChartOperand:
    """An image a pinned chart's operator deploys onto GPU nodes (``data/chart-operands.csv``): the GPU Operator's
    operands are named by ``{repository, image, version}`` values, not by a pod spec a rule could read."""

    chart: str
    version: str
    component: str
    """The values path whose image fields override the default: ``{repository, image, version}`` (the operator's
    form) or ``{repository, tag}`` (a subchart's ``image``)."""
    image: str
    enabled_when: tuple[tuple[str, bool], ...]
    """Values flags that must all be true for the operand to run, each with the chart's default; empty: always."""
    source: str

    def enabled(self, values: dict) -> bool:
        return all(_flag(values, path, default) for path, default in self.enabled_when)

    def image_in(self, values: dict) -> str:
        """The image the release runs for this operand: the default with the release's overrides."""
        node: object = values
        for step in self.component.split("."):
            node = node.get(step) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return self.image
        repo, _, rest = self.image.rpartition("/")
        name, _, tag = rest.partition(":")
        if "tag" in node and "image" not in node:  # a subchart's {repository, tag}
            return f"{node.get('repository') or repo + '/' + name}:{node.get('tag') or tag}"
        return f"{node.get('repository') or repo}/{node.get('image') or name}:{node.get('version') or tag}"


def _flag(values: dict, path: str, default: bool) -> bool:
    node: object = values
    for step in path.split("."):
        if not isinstance(node, dict) or step not in node:
            return default
        node = node[step]
    return node is True or str(node).lower() == "true"


@functools.cache
def load_chart_operands() -> tuple[ChartOperand, ...]:
    with open(DATA_DIR / "chart-operands.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return tuple(
        ChartOperand(
            chart=r["chart"],
            version=r["version"],
            component=r["component"],
            image=r["image"],
            enabled_when=tuple((k, v == "true") for k, _, v in (f.partition(":") for f in r["enabled_when"].split())),
            source=r["source"],
        )
        for r in rows
    )


def chart_operands(chart: str, version: str) -> list[ChartOperand]:
    return [o for o in load_chart_operands() if o.chart == chart and o.version == version]


@functools.cache
def load_image_table() -> ImageTable:
    with open(DATA_DIR / "image-architectures.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return ImageTable(
        {
            r["image"]: ImageArchitectures(
                image=r["image"],
                architectures=frozenset(r["architectures"].split()),
                chart=r["chart"],
                basis=r["basis"],
                source=r["source"],
            )
            for r in rows
        }
    )
