"""Derived pod-start settings of a pool (the defaults ``podStart`` gets), the Artifact Registry mirrors of a stack,
and the preview's per-pool account of what speeds up a pod's start and what a cold node pulls. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from catalog import Cloud
from stacks.spec.eks_node import root_volume_performance
from stacks.plan.images import ImageRef, parse_image
from stacks.plan.node_storage import ephemeral_local_ssds, instance_store_raid
from stacks.spec.pod_start import ImageMirror
from stacks.spec.stack import NodePool, StackSpec

BOOT_DISK_MODE = "CONTAINER_IMAGE_CACHE"
"""Secondary boot disk mode for preloaded container images (pulumi-gcp 10.2.0 ``secondary_boot_disks[].mode``)."""
SOCI_MIN_VCPU, SOCI_MIN_RAM_GIB = 4, 7
"""nodeadm turns FastImagePull into the SOCI snapshotter only at ≥ 4 vCPU and ≥ 7 GiB (awslabs/amazon-eks-ami
nodeadm ``UseSOCISnapshotter``)."""
SOCI_MIN_THROUGHPUT_MIBPS = 600
"""Parallel unpack is disk-bound: pytorch/ci-infra#1033 runs GPU roots at 1000 MiB/s, "≥ 600 required"."""
PREPULL_NAMESPACE = "gpu-cluster-prepull"


@dataclass(frozen=True)
class PodStartPlan:
    pool: str
    cloud: Cloud
    images: tuple[ImageRef, ...]
    """Declared images that parsed (validation refuses the others)."""
    streaming: bool
    """GKE image streaming (``gcfs_config``)."""
    boot_disk_image: str | None
    """GKE secondary boot disk image (``CONTAINER_IMAGE_CACHE``)."""
    prepull: bool
    fast_image_pull: bool
    """EKS nodeadm ``FastImagePull`` + parallel kubelet pulls."""
    max_parallel_pulls: int | None

    @property
    def declared(self) -> bool:
        return bool(self.images) or self.streaming or self.fast_image_pull or self.prepull


def pod_start_plan(cloud: Cloud, pool: NodePool) -> PodStartPlan:
    """The pool's pod-start settings with their defaults: nothing when ``podStart`` is omitted (turning streaming or
    fast pull on rolls the pool's nodes, which an upgrade of gpu-cluster must not do on its own); with it, image
    streaming on GKE and fast image pull on EKS unless turned off."""
    ps = pool.pod_start
    if ps is None:
        return PodStartPlan(pool.name, cloud, (), False, None, False, False, None)
    images = tuple(ref for ref in (parse_image(i) for i in ps.images) if ref is not None)
    gke, eks = cloud == Cloud.GCP, cloud == Cloud.AWS
    disk = ps.secondary_boot_disk.disk_image if gke and ps.secondary_boot_disk else None
    return PodStartPlan(
        pool=pool.name,
        cloud=cloud,
        images=images,
        streaming=gke and ps.image_streaming is not False,
        boot_disk_image=disk,
        prepull=ps.prepull and bool(images),
        fast_image_pull=eks and ps.fast_image_pull is not False,
        max_parallel_pulls=ps.max_parallel_image_pulls,
    )


def mirror_repository(mirror: ImageMirror) -> str:
    return mirror.repository or mirror.upstream.value.replace(".", "-")


def mirror_for(spec: StackSpec, registry: str) -> ImageMirror | None:
    return next((m for m in spec.cluster.image_mirrors if m.upstream.value == registry), None)


def mirror_image(spec: StackSpec, image: ImageRef) -> str | None:
    """The Artifact Registry name of an image whose registry the stack mirrors (GKE), else None."""
    mirror = mirror_for(spec, image.registry)
    if mirror is None or spec.cloud != Cloud.GCP:
        return None
    return f"{spec.region}-docker.pkg.dev/{spec.project}/{mirror_repository(mirror)}/{image.path}{image.reference}"


def streams(plan: PodStartPlan) -> bool:
    return plan.streaming and any(i.in_artifact_registry for i in plan.images)


def cold_start(spec: StackSpec, plan: PodStartPlan) -> list[dict[str, Any]]:
    """How a node that has never run this pool's jobs gets each declared image."""
    out = []
    for image in plan.images:
        if plan.boot_disk_image:
            how = "preloaded from the secondary boot disk (if the disk image holds it)"
        elif plan.streaming and image.in_artifact_registry:
            how = "streamed from Artifact Registry (starts before the full download)"
        else:
            how = f"full pull from {image.registry}"
            if plan.fast_image_pull:
                how += " (SOCI parallel pull and unpack)"
            mirrored = mirror_image(spec, image)
            if plan.streaming and mirrored:
                how += f"; use {mirrored} to stream it"
        if plan.prepull:
            how += "; pulled by the pre-pull DaemonSet as the node joins"
        out.append({"image": image.text, "registry": image.registry, "coldStart": how})
    return out


def accelerators(spec: StackSpec, pool: NodePool, plan: PodStartPlan) -> list[str]:
    """What on the pool's nodes shortens a pod's start (including settings that are not ``podStart``'s)."""
    out = []
    if plan.streaming:
        out.append("image streaming (Artifact Registry images)")
    if plan.boot_disk_image:
        out.append(f"secondary boot disk {plan.boot_disk_image} ({BOOT_DISK_MODE})")
    if plan.fast_image_pull:
        out.append("SOCI parallel pull/unpack (nodeadm FastImagePull)")
    if plan.max_parallel_pulls is not None:
        out.append(f"{plan.max_parallel_pulls} parallel image pulls")
    elif plan.fast_image_pull:
        out.append("parallel image pulls (unlimited)")
    if spec.cloud == Cloud.GCP and ephemeral_local_ssds(spec.cloud, pool):
        out.append("images on local SSDs")
    if spec.cloud == Cloud.AWS:
        if instance_store_raid(spec.cloud, pool):
            out.append("images on NVMe instance store (RAID0)")
        else:
            throughput, iops = root_volume_performance(pool.root_volume)
            out.append(f"gp3 root {throughput} MiB/s, {iops} IOPS")
    if plan.prepull:
        n = len(plan.images)
        out.append(f"pre-pull DaemonSet prepull-{pool.name} ({n} image{'s' if n != 1 else ''})")
    return out


def pod_start_summary(spec: StackSpec, plans: Sequence[PodStartPlan]) -> list[dict[str, Any]]:
    """The preview's ``podStart`` rows: per pool (with its plan, in spec order) what accelerates pod start and what a
    cold start pulls."""
    rows = []
    for pool, plan in zip(spec.node_pools, plans, strict=True):
        rows.append(
            {
                "pool": pool.name,
                "accelerators": accelerators(spec, pool, plan),
                "images": cold_start(spec, plan),
                "amiReleaseVersion": pool.ami_release_version if spec.cloud == Cloud.AWS else None,
            }
        )
    return rows
