"""The preview's account of how every host-level container's image is pinned (``hostImages`` in JSON, "Host-level
images" in text): by a literal digest, by the digest the registry returns at deploy (gpu-cluster resolves these tags
with the Docker provider's getRegistryImage during ``pulumi preview``/``up``; offline there is no registry, and the
preview says so instead of showing a digest), or by tag only (the mandatory rule security-privileged-images-by-digest
then fails the stack). The containers are the ones the rule sees (``policies/host_images.py``)."""

from __future__ import annotations

from typing import Any, Sequence

from catalog.image_digests import DEPLOY_DIGEST, digest_row, load_image_digests, resolved_at_deploy
from stacks.plan.host_access import by_digest
from policies.host_images import WORKLOAD_TYPES, seen_host_containers
from policies.resources import HELM_RELEASE
from preview.engine import Registered


def _tagged(image: str) -> str:
    """``repo[:tag]`` of an image carrying the deploy stand-in (the Slinky chart drops the tag: the catalog's row)."""
    named = image.partition("@")[0]
    if digest_row(named) is not None:
        return named
    rows = [r.image for r in load_image_digests().values() if r.at_deploy and r.repository == named]
    return rows[0] if len(rows) == 1 else named


def _pin(image: str) -> dict[str, Any]:
    if resolved_at_deploy(image):
        row = digest_row(_tagged(image))
        registry = row.registry if row else image.split("/", 1)[0]
        return {
            "image": _tagged(image),
            "pin": f"digest resolved from {registry} at deploy",
            "digest": None,
            "resolvedAtDeploy": True,
            "registry": registry,
            "source": row.source if row else None,
        }
    if by_digest(image):
        named, _, digest = image.partition("@")
        row = digest_row(named)
        return {
            "image": named,
            "pin": "digest",
            "digest": digest,
            "resolvedAtDeploy": False,
            "registry": image.split("/", 1)[0],
            "source": row.source if row and row.digest == digest else None,
        }
    return {
        "image": image,
        "pin": "tag only",
        "digest": None,
        "resolvedAtDeploy": False,
        "registry": image.split("/", 1)[0],
        "source": None,
    }


def host_image_pins(resources: Sequence[Registered]) -> list[dict[str, Any]]:
    """One row per host-level image: its pin and where it runs (resource, container)."""
    rows: dict[str, dict[str, Any]] = {}
    for r in resources:
        if r.type not in WORKLOAD_TYPES and r.type != HELM_RELEASE:
            continue
        for seen in seen_host_containers(r.type, r.redacted_inputs):
            image = seen.container.image
            if DEPLOY_DIGEST in image and not resolved_at_deploy(image):
                image = image.replace(f"@{DEPLOY_DIGEST}", "")  # not one of ours: shown as the tag it is
            row = rows.setdefault(image, {**_pin(image), "containers": []})
            row["containers"].append(f"{r.name}: {seen.container.container}")
    return [{**v, "containers": sorted(set(v["containers"]))} for _, v in sorted(rows.items())]
