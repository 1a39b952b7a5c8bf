"""Container image references as a pool declares them: the registry they come from, whether the tag is pinned, and
where Artifact Registry serves them. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from catalog.image_digests import DEPLOY_DIGEST

DOCKER_HUB = "docker.io"
AR_HOST = re.compile(r"[a-z0-9-]+-docker\.pkg\.dev")
"""Artifact Registry Docker hosts (``us-central1-docker.pkg.dev``, ``us-docker.pkg.dev``): GKE streams only these."""
_COMPONENT = r"[a-z0-9]+(?:[._-]+[a-z0-9]+)*"
_REFERENCE = re.compile(
    r"^(?:(?P<host>[A-Za-z0-9.-]+:[0-9]+|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|localhost)/)?"
    rf"(?P<path>{_COMPONENT}(?:/{_COMPONENT})*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?P<digest>sha256:[a-f0-9]{64}|"
    + re.escape(DEPLOY_DIGEST)
    + "))?$"
)
"""The distribution reference grammar, simplified: lower-case path components, an optional tag, an optional digest
(or ``DEPLOY_DIGEST``, which stands for the digest the registry returns at deploy, offline)."""
UNPINNED_TAGS = frozenset({"latest"})


@dataclass(frozen=True)
class ImageRef:
    text: str
    """As the user wrote it."""
    registry: str
    """The host: the first path component when it looks like one (a dotted name, a port, or `localhost`), else
    docker.io."""
    path: str
    """The repository path inside the registry (``nvidia/pytorch``)."""
    tag: str | None
    digest: str | None

    @property
    def pinned(self) -> bool:
        """A digest, or a tag other than ``latest``: the same reference pulls the same bytes tomorrow (mostly)."""
        return self.digest is not None or (self.tag is not None and self.tag not in UNPINNED_TAGS)

    @property
    def in_artifact_registry(self) -> bool:
        return bool(AR_HOST.fullmatch(self.registry))

    @property
    def reference(self) -> str:
        """``:tag``, ``@digest`` or both, as written."""
        return (f":{self.tag}" if self.tag else "") + (f"@{self.digest}" if self.digest else "")


def parse_image(text: str) -> ImageRef | None:
    """The image reference, or None when ``text`` is not one."""
    match = _REFERENCE.match(text)
    if match is None:
        return None
    registry, path = match["host"], match["path"]
    if registry is None:
        registry, path = DOCKER_HUB, path if "/" in path else f"library/{path}"
    return ImageRef(text=text, registry=registry, path=path, tag=match["tag"], digest=match["digest"])
