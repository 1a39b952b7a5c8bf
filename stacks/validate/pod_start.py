"""Pod-start rules: declared images are pinned references; GKE settings (image streaming, secondary boot disks, image
mirrors) refused on EKS and EKS settings (fast image pull, AMI release) on GKE; a secondary boot disk needs streaming
and the images it holds; a pre-pull needs images; warnings where a setting will not do what it promises (an image
streaming cannot stream, a root volume too slow for parallel unpack, an AMI that is not pinned)."""

from __future__ import annotations

import re
from typing import Iterable

from catalog import Catalog, Cloud
from stacks.spec.eks_node import root_volume_performance
from stacks.plan.images import UNPINNED_TAGS, parse_image
from stacks.plan.node_storage import instance_store_raid
from stacks.plan.pod_start import (
    SOCI_MIN_RAM_GIB,
    SOCI_MIN_THROUGHPUT_MIBPS,
    SOCI_MIN_VCPU,
    mirror_image,
    pod_start_plan,
)
from stacks.spec.pod_start import GKE_PARALLEL_PULLS, MirrorUpstream
from stacks.spec.cluster import ClusterSpec
from stacks.spec.stack import NodePool, StackSpec
from stacks.validate.issues import Issues, SpecIssue, path_of

DISK_IMAGE = re.compile(r"(projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/)?global/images/[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
AMI_RELEASE = re.compile(r"(?P<minor>[0-9]+\.[0-9]+)\.[0-9]+-[0-9]{8}")
REPOSITORY_ID = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")
SECRET_VERSION = re.compile(r"projects/[^/]+/secrets/[^/]+/versions/[^/]+")
REFERENCE_FORM = "registry/path:tag or registry/path@sha256:<64 hex digits>"
BOOT_DISK_FLOOR = ((1, 28), 3, 1067000)
BOOT_DISK_FLOOR_TEXT = "1.28.3-gke.1067000"
"""GKE Standard supports secondary boot disks from this version (GKE docs, "Use secondary boot disks to preload data
or container images")."""
GKE_ONLY = {"imageStreaming": "image_streaming", "secondaryBootDisk": "secondary_boot_disk"}
EKS_ONLY_POD_START = {"fastImagePull": "fast_image_pull"}


def check_pod_start(
    issues: Issues, cat: Catalog, cloud: Cloud, cluster: ClusterSpec | None, pools: Iterable[tuple[int, NodePool]]
) -> None:
    for i, pool in pools:
        scope = issues.pool(i, pool.name)
        _check_ami(scope, cloud, cluster, pool)
        if pool.pod_start is None:
            continue
        _check_images(scope.at("podStart"), pool)
        _check_cloud_fields(scope.at("podStart"), cloud, pool)
        if cloud == Cloud.GCP:
            _check_gke(scope.at("podStart"), pool)
            if pool.pod_start.secondary_boot_disk is not None and cluster is not None:
                _check_boot_disk_version(issues.at("cluster"), cluster, pool.name)
        elif pod_start_plan(cloud, pool).fast_image_pull:
            _check_fast_pull(scope, cat, pool)


def check_image_mirrors(issues: Issues, cloud: Cloud, cluster: ClusterSpec) -> None:
    seen: set[MirrorUpstream] = set()
    for j, mirror in enumerate(cluster.image_mirrors):
        scope = issues.at("imageMirrors", j)
        if cloud != Cloud.GCP:
            scope.error(
                None,
                "Artifact Registry mirrors are a GKE setting",
                mirror.upstream.value,
                allowed="no imageMirrors on EKS",
                fix="remove imageMirrors (on EKS, pull through an ECR pull-through cache you manage)",
            )
            continue
        if mirror.upstream in seen:
            scope.error(
                "upstream",
                "mirrored twice",
                mirror.upstream.value,
                allowed="each upstream once",
                fix="remove the second mirror of this upstream",
            )
        seen.add(mirror.upstream)
        if mirror.repository is not None and not REPOSITORY_ID.fullmatch(mirror.repository):
            scope.error(
                "repository",
                "not an Artifact Registry repository ID",
                mirror.repository,
                allowed="lower-case letters, digits and '-', starting with a letter, at most 63 characters",
                fix="rename the repository, e.g. 'nvcr-io'",
            )
        if (mirror.username is None) != (mirror.password_secret_version is None):
            scope.error(
                "username" if mirror.username is None else "passwordSecretVersion",
                "upstream credentials need both username and passwordSecretVersion",
                mirror.username or mirror.password_secret_version,
                allowed="both (private images) or neither (anonymous pulls of public images)",
                fix="add the missing one, or remove both",
            )
        secret = mirror.password_secret_version
        if secret is not None and not SECRET_VERSION.fullmatch(secret):
            scope.error(
                "passwordSecretVersion",
                "not a Secret Manager secret version (the value is not shown: it may be the key itself)",
                None,
                allowed="projects/<project>/secrets/<secret>/versions/<version>",
                fix="name the secret version holding the password or API key, never the key itself",
            )


def _check_images(scope: Issues, pool: NodePool) -> None:
    assert pool.pod_start is not None
    for j, text in enumerate(pool.pod_start.images):
        image = parse_image(text)
        if image is None:
            scope.error(
                ("images", j),
                "not a container image reference",
                text,
                allowed=REFERENCE_FORM,
                fix="write the image as a job's pod spec names it, with its tag",
            )
        elif image.tag is None and image.digest is None:
            scope.error(
                ("images", j),
                "no tag: a new node would pull whatever 'latest' is that day",
                text,
                allowed=REFERENCE_FORM,
                fix=f"pin a version, e.g. {text}:<version>, or a digest",
            )
        elif not image.pinned:
            scope.error(
                ("images", j),
                f"tag '{image.tag}' is not pinned: it moves, so nodes disagree on what they run",
                text,
                allowed=f"any tag but {', '.join(sorted(UNPINNED_TAGS))}, or a digest",
                fix="pin a version tag or a digest",
            )
    ps = pool.pod_start
    if ps.prepull and not ps.images:
        scope.error(
            "prepull",
            "nothing to pre-pull: images is empty",
            True,
            allowed="prepull with images",
            fix="list the pool's job images in podStart.images, or remove prepull",
        )


def _check_cloud_fields(scope: Issues, cloud: Cloud, pool: NodePool) -> None:
    ps = pool.pod_start
    assert ps is not None
    wrong, other = (EKS_ONLY_POD_START, "an EKS") if cloud == Cloud.GCP else (GKE_ONLY, "a GKE")
    for key, attr in wrong.items():
        value = getattr(ps, attr)
        if value is not None:
            scope.error(
                key,
                f"{key} is {other} setting",
                value if not hasattr(value, "model_dump") else value.model_dump(by_alias=True),
                allowed=f"no {key} on {'GKE' if cloud == Cloud.GCP else 'EKS'}",
                fix=f"remove podStart.{key} from this pool",
            )
    pulls = ps.max_parallel_image_pulls
    low, high = GKE_PARALLEL_PULLS
    if cloud == Cloud.GCP and pulls is not None and not low <= pulls <= high:
        scope.error(
            "maxParallelImagePulls",
            "outside GKE's kubelet range",
            pulls,
            allowed=f"{low}-{high} on GKE",
            fix=f"set maxParallelImagePulls between {low} and {high}, or remove it",
        )


def _check_gke(scope: Issues, pool: NodePool) -> None:
    ps = pool.pod_start
    assert ps is not None
    disk = ps.secondary_boot_disk
    if disk is not None:
        if ps.image_streaming is False:
            scope.error(
                "imageStreaming",
                "a secondary boot disk needs image streaming (gcfs_config enabled)",
                False,
                allowed="true, or omitted, with secondaryBootDisk",
                fix="remove imageStreaming: false, or remove secondaryBootDisk",
            )
        if not DISK_IMAGE.fullmatch(disk.disk_image):
            scope.error(
                ("secondaryBootDisk", "diskImage"),
                "not a Compute Engine disk image name",
                disk.disk_image,
                allowed="global/images/<name> or projects/<project>/global/images/<name>",
                fix="name the image gke-disk-image-builder created",
            )
        if not ps.images:
            scope.error(
                "secondaryBootDisk",
                "the images the disk holds are not declared",
                disk.disk_image,
                allowed="secondaryBootDisk with podStart.images",
                fix="list the images the disk image holds in podStart.images",
            )


def _below_boot_disk_floor(version: str) -> bool:
    # lazy: only a pinned minMasterVersion needs the GKE version grammar (the what-if/preview import floor)
    from catalog.gke_version import parse as parse_gke_version

    parsed = parse_gke_version(version)
    if parsed is None:
        return False  # latest, or malformed (stacks/validate/fabric_version.py reports it)
    key = (parsed[0], parsed[1] if parsed[1] is not None else 10**9, parsed[2] if parsed[2] is not None else 10**9)
    return key < BOOT_DISK_FLOOR  # an unnamed patch/build: GKE picks a current one, above the floor


def _check_boot_disk_version(cluster_at: Issues, cluster: ClusterSpec, pool: str) -> None:
    version = cluster.min_master_version
    if version is not None and _below_boot_disk_floor(version):
        cluster_at.error(
            "minMasterVersion",
            f"pool '{pool}' has a secondary boot disk, which GKE supports from {BOOT_DISK_FLOOR_TEXT}",
            version,
            allowed=f"{BOOT_DISK_FLOOR_TEXT} or later",
            fix=f"raise minMasterVersion to at least {BOOT_DISK_FLOOR_TEXT}, or remove the pool's secondaryBootDisk",
        )


def _check_fast_pull(scope: Issues, cat: Catalog, pool: NodePool) -> None:
    if not instance_store_raid(Cloud.AWS, pool):
        throughput, _ = root_volume_performance(pool.root_volume)
        if throughput < SOCI_MIN_THROUGHPUT_MIBPS:
            scope.warn(
                ("rootVolume", "throughputMiBps"),
                "too slow for parallel unpack: fast image pull writes layers at once",
                throughput,
                allowed=f"{SOCI_MIN_THROUGHPUT_MIBPS}-1000 MiB/s",
                fix="raise throughputMiBps (and iops) or remove it (default 1000 MiB/s)",
            )
    machine = cat.resolve(Cloud.AWS, pool.machine_type, None, None)
    if machine is not None and (
        (machine.vcpu or SOCI_MIN_VCPU) < SOCI_MIN_VCPU or (machine.ram_gib or SOCI_MIN_RAM_GIB) < SOCI_MIN_RAM_GIB
    ):
        scope.warn(
            ("podStart", "fastImagePull"),
            f"nodeadm ignores it on {pool.machine_type} ({machine.vcpu} vCPU, {machine.ram_gib} GiB)",
            True,
            allowed=f"instances with ≥ {SOCI_MIN_VCPU} vCPU and ≥ {SOCI_MIN_RAM_GIB} GiB",
            fix="remove fastImagePull, or pick a larger instance type",
        )


def _check_ami(scope: Issues, cloud: Cloud, cluster: ClusterSpec | None, pool: NodePool) -> None:
    release = pool.ami_release_version
    if cloud != Cloud.AWS:
        if release is not None:
            scope.error(
                "amiReleaseVersion",
                "an EKS setting: GKE nodes run the node version GKE upgrades them to",
                release,
                allowed="no amiReleaseVersion on GKE",
                fix="remove amiReleaseVersion (cluster.maintenance controls GKE upgrades)",
            )
        return
    if release is None:
        return  # not an error: the preview advises pinning (unpinned_ami_advice)
    match = AMI_RELEASE.fullmatch(release)
    if match is None:
        scope.error(
            "amiReleaseVersion",
            "not an EKS AMI release version",
            release,
            allowed="<kubernetes version>-<YYYYMMDD>, e.g. 1.35.2-20260304",
            fix="copy releaseVersion from aws eks describe-nodegroup or the AMI release notes",
        )
    elif cluster is not None and match["minor"] != cluster.kubernetes_version:
        scope.error(
            "amiReleaseVersion",
            f"built for Kubernetes {match['minor']}, the cluster runs {cluster.kubernetes_version}",
            release,
            allowed=f"a {cluster.kubernetes_version}.x release",
            fix=f"pick an AMI release for Kubernetes {cluster.kubernetes_version}",
        )


def warn_unstreamed(issues: Issues, spec: StackSpec) -> None:
    """GKE: images image streaming cannot stream (not in Artifact Registry), with the mirror name to use instead.
    Needs the whole spec (region, project, mirrors), so it runs once the spec is built."""
    if spec.cloud != Cloud.GCP:
        return
    mirrored = {m.value for m in MirrorUpstream}
    for i, pool in enumerate(spec.node_pools):
        plan = pod_start_plan(spec.cloud, pool)
        if not plan.streaming or plan.boot_disk_image:
            continue
        assert pool.pod_start is not None
        for j, text in enumerate(pool.pod_start.images):
            image = parse_image(text)
            if image is None or image.in_artifact_registry:
                continue
            alias = mirror_image(spec, image)
            fix = (
                f"reference it as {alias} (the mirror of {image.registry} this stack creates)"
                if alias
                else f"mirror {image.registry} with cluster.imageMirrors"
                if image.registry in mirrored
                else "push it to an Artifact Registry repository"
            )
            issues.pool(i, pool.name).warn(
                ("podStart", "images", j),
                f"not in Artifact Registry, so image streaming "
                f"cannot stream it: a new node pulls it in full from {image.registry}",
                text,
                allowed="<region>-docker.pkg.dev/… images",
                fix=fix,
            )


def unpinned_ami_advice(spec: StackSpec) -> list[SpecIssue]:
    """EKS pools without ``amiReleaseVersion``: valid, but the fleet's AMI can change under them (an AMI release broke
    SOCI parallel pull, awslabs/amazon-eks-ami#2712). Preview advice rather than a spec warning: true of every such
    stack."""
    if spec.cloud != Cloud.AWS:
        return []
    return [
        SpecIssue(
            path_of("nodePools", i, "amiReleaseVersion"),
            f"pool '{pool.name}': not pinned: EKS uses the newest AMI release whenever the node group is "
            "created or updated, so the fleet's AMI changes with no change in this file",
            None,
            "an EKS AMI release, e.g. 1.35.2-20260304",
            "pin the release the pool runs (aws eks describe-nodegroup: releaseVersion)",
            warning=True,
        )
        for i, pool in enumerate(spec.node_pools)
        if pool.ami_release_version is None
    ]
