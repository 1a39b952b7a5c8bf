"""How each vendor image that runs host-level (privileged, host namespaces, extra capabilities, writable host paths)
is pinned by digest (``catalog/data/image-digests.csv``). Pure data; no Pulumi.

A row either cites a digest a public source pins for exactly that tag (the source names repository, path and
commit), or has no digest: then the tag is resolved to its manifest digest at deploy time
(``components/image_digests.py``, the Docker provider's ``getRegistryImage``), so what runs is still pinned, and the
object carries ``<image>@sha256:<digest>``. No registry is reachable offline: the offline preview cannot know such a
digest and writes ``DEPLOY_DIGEST`` in its place, which the policy pack accepts for exactly these rows.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from catalog.loader import DATA_DIR

DEPLOY_DIGEST = "sha256:resolved-at-deploy"
"""What stands for a digest the registry returns at deploy, where none is known (the offline preview, tests): not a
digest, and never shown as one (the preview says "digest resolved from <registry> at deploy")."""


@dataclass(frozen=True)
class ImageDigest:
    image: str
    """``repository:tag`` exactly as gpu-cluster pins it."""
    digest: str
    """``sha256:<64 hex>`` a public source pins for this tag; empty: resolved from the registry at deploy."""
    source: str

    @property
    def at_deploy(self) -> bool:
        return not self.digest

    @property
    def registry(self) -> str:
        """The registry host; a name without one (``pytorch/pytorch:…``) is on Docker Hub, as the runtime reads it."""
        first, sep, _ = self.image.partition("/")
        return first if sep and ("." in first or ":" in first or first == "localhost") else "docker.io"

    @property
    def repository(self) -> str:
        return self.image.rpartition(":")[0]

    def pin_text(self) -> str:
        """How the preview names the pin."""
        return f"digest resolved from {self.registry} at deploy" if self.at_deploy else f"digest {self.digest}"


@functools.cache
def load_image_digests() -> dict[str, ImageDigest]:
    """``repository:tag`` -> its row."""
    with open(DATA_DIR / "image-digests.csv", newline="", encoding="utf-8") as fh:
        rows = [ImageDigest(image=r["image"], digest=r["digest"], source=r["source"]) for r in csv.DictReader(fh)]
    return {r.image: r for r in rows}


def digest_row(image: str) -> ImageDigest | None:
    """The row of a tag-pinned reference (``repository:tag``), or None when gpu-cluster does not pin it here."""
    return load_image_digests().get(image)


def resolved_at_deploy(image: str) -> bool:
    """``image`` is ``<row>@DEPLOY_DIGEST`` (or, as the Slinky chart writes it without the tag,
    ``<repository>@DEPLOY_DIGEST``) for a row whose digest is resolved at deploy: exactly what the offline preview
    writes for such an image, and nothing else."""
    named, sep, digest = image.partition("@")
    if not sep or digest != DEPLOY_DIGEST:
        return False
    rows = [r for r in load_image_digests().values() if r.at_deploy]
    return any(named in (r.image, r.repository) for r in rows)
