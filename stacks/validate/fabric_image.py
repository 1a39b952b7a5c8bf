"""``fabric.runtimeImageBuild``: a job image built from a recipe of this repository (``images/<build>/Dockerfile``).

The recipe's catalog row (``catalog/data/image-builds.csv``) vouches for what the image holds only if the image named
is the one pushed from that build, immutably: so ``runtimeImage`` must be set and pinned by digest, on a pool of the
recipe's fabric and an architecture it builds for, with the workload the recipe serves (slurmd: ``workload: slurm``),
and it must not be an image known to lack the fabric's plugin (the recipe's unmodified base, say).
"""

from __future__ import annotations

from typing import Iterable

from catalog import Cloud, load_catalog
from catalog.fabric import load_fabric_catalog
from catalog.fabric_images import by_digest, load_fabric_image_tables
from catalog.images import ARCH_OF_MACHINE
from stacks.spec.scheduling import SchedulingSpec, Workload
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues


def check_fabric_images(
    issues: Issues, cloud: Cloud, pools: Iterable[tuple[int, NodePool]], scheduling: SchedulingSpec | None
) -> None:
    for i, pool in pools:
        setting = pool.fabric
        if setting is None or setting.runtime_image_build is None:
            continue
        where = issues.pool(i, pool.name).at("fabric")
        build = load_fabric_image_tables().build(setting.runtime_image_build.value)
        assert build is not None, f"catalog/data/image-builds.csv has no row {setting.runtime_image_build.value}"
        image = setting.runtime_image
        if image is None:
            where.error(
                "runtimeImage",
                f"runtimeImageBuild {build.build} names the recipe of runtimeImage, which is unset",
                None,
                allowed=f"the image pushed from {build.dockerfile}, by digest",
                fix=f"build and push {build.dockerfile} (docs/fabric.md), then set runtimeImage: "
                "<registry>/<repo>@sha256:<digest>",
            )
        elif not by_digest(image):
            where.error(
                "runtimeImage",
                "an image built from a recipe must be named by digest, so what runs is what was built",
                image,
                allowed="<registry>/<repo>@sha256:<64 lowercase hex> (no tag before the digest)",
                fix="`docker buildx imagetools inspect <pushed tag>` prints the digest; name the image "
                "<repo>@sha256:<digest>",
            )
        elif (gap := load_fabric_catalog().image_gap(build.fabric, image)) is not None:
            where.error(
                "runtimeImage",
                f"this image is known to have no {gap.lacks}, so it was not built from {build.dockerfile}",
                image,
                allowed=f"the image pushed from {build.dockerfile}",
                fix=f"push the image you built from {build.dockerfile} to your own registry and name that",
            )
        fabric = load_fabric_catalog().for_machine(cloud, pool.machine_type)
        if fabric is None or fabric.kind != build.fabric:
            where.error(
                "runtimeImageBuild",
                f"recipe {build.build} is for {build.fabric.display_name} pools, and "
                f"{pool.machine_type} has {fabric.kind.display_name if fabric else 'no fabric'}",
                build.build,
                allowed=f"a pool on a {build.fabric.display_name} machine",
                fix="omit runtimeImageBuild on this pool",
            )
        if scheduling is None or scheduling.workload != Workload.SLURM:
            where.error(
                "runtimeImageBuild",
                f"recipe {build.build} builds a slurmd image, which only a Slurm NodeSet runs",
                build.build,
                allowed="scheduling.workload: slurm",
                fix="omit runtimeImageBuild (the torch-<pool> runtime defaults to an EFA-capable image)",
            )
        machine = load_catalog().machines.get((cloud, pool.machine_type))
        arch = ARCH_OF_MACHINE.get(machine.arch, machine.arch) if machine is not None else None
        if arch is not None and arch not in build.architectures:
            where.error(
                "runtimeImageBuild",
                f"recipe {build.build} builds for {', '.join(sorted(build.architectures))}"
                f", not for this pool's {arch} nodes",
                build.build,
                allowed=", ".join(sorted(build.architectures)),
                fix="omit runtimeImageBuild on this pool",
            )
