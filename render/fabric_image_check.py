"""The start check of a job image built from a recipe of this repository (``fabric.runtimeImageBuild``). Pure.

The catalog row of the recipe (``catalog/data/image-builds.csv``) says what the image holds; this init container,
run from the same image (by digest) before the pod's other containers, makes the pod fail to start, with the reason
in its log, when the image named is not such a build: the recipe's marker file must name the recipe, and the
dynamic loader must resolve libfabric and NCCL's net plugin (``libnccl-net.so``) without any environment variable
(Slurm tasks do not inherit slurmd's env). Without it a wrong image would run NCCL over TCP without an error.
"""

from __future__ import annotations

from typing import Any

from catalog.fabric_images import BUILD_ANNOTATION, CHECK_CONTAINER, ImageBuild

LIBRARIES = ("libfabric.so.1", "libnccl-net.so")
"""What NCCL loads: libfabric (EFA provider) and the aws-ofi-nccl plugin under NCCL's default plugin name."""


def check_script(build: ImageBuild, libraries: tuple[str, ...] = LIBRARIES) -> str:
    """POSIX sh: exit 0 when the image is the recipe's build with ``libraries`` on the loader's path."""
    libs = " ".join(libraries)
    return (
        f'test "$(sed -n "s/^build=//p" {build.marker} 2>/dev/null)" = "{build.build}" || '
        f'{{ echo "{CHECK_CONTAINER}: this image was not built from {build.dockerfile} (no build={build.build} '
        f'in {build.marker}); NCCL would fall back to TCP" >&2; exit 1; }}; '
        f"for lib in {libs}; do ldconfig -p | awk -v l=\"$lib\" '$1 == l {{ f = 1 }} END {{ exit !f }}' || "
        f'{{ echo "{CHECK_CONTAINER}: $lib is not on the dynamic loader path of this image" >&2; exit 1; }}; done'
    )


def image_check(build: ImageBuild, image: str) -> tuple[dict[str, str], dict[str, Any]]:
    """(pod annotation naming the recipe, the init container that checks ``image``)."""
    container = {
        "name": CHECK_CONTAINER,
        "image": image,
        "command": ["/bin/sh", "-c", check_script(build)],
        "securityContext": {"allowPrivilegeEscalation": False},
    }
    return {BUILD_ANNOTATION: build.build}, container
