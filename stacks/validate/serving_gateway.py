"""GKE serving: the cluster runs a version on which GKE itself installs the InferencePool CRD.

The program does not create the InferencePool CRD on GKE: from the version in ``cloud-limits.csv``
``gke-inference-pool-crd-managed`` GKE installs and manages it, and creating an object that already exists fails
with AlreadyExists (pulumi-kubernetes client-side create), so the stack would stop at the first serving object. Below
that version the CRD would be missing and every InferencePool refused. So a created cluster that serves must pin
``cluster.minMasterVersion`` at or above it; an existing cluster's version is not known offline: a warning says so.
"""

from __future__ import annotations

from catalog import Cloud
from catalog.cloud_limits import CloudLimit, cloud_limit
from stacks.spec.cluster import ClusterMode, ClusterSpec
from stacks.validate.issues import Issues

FIELD = "minMasterVersion"
Version = tuple[tuple[int, int], int | None, int | None]
"""``catalog.gke_version.parse``: (major, minor), patch, build."""


def crd_floor() -> CloudLimit:
    return cloud_limit("gke-inference-pool-crd-managed")


def check_inference_crd_version(cluster_at: Issues, cloud: Cloud | None, cluster: ClusterSpec | None) -> None:
    """``cluster_at``: the scope of ``gpu-cluster:cluster``. Only GKE stacks that serve call it."""
    if cloud != Cloud.GCP or cluster is None:
        return
    # lazy, like the fabric floors: only serving GKE stacks need the version grammar
    from catalog.gke_version import GKE_VERSION, parse

    limit = crd_floor()
    floor_text = f"{limit.value} or later"
    if cluster.mode != ClusterMode.CREATE:
        cluster_at.warn(
            "mode",
            f"serving on an existing GKE cluster: gpu-cluster does not install the InferencePool "
            f"CRD there, which GKE does from {limit.value}; an older cluster refuses every InferencePool. "
            f"{limit.cite()}",
            cluster.mode.value,
            allowed=f"a cluster at {floor_text}",
            fix=f"check `gcloud container clusters describe` shows {floor_text}, or upgrade it",
        )
        return
    version = cluster.min_master_version
    fix = (
        f'set cluster.minMasterVersion to "1.35" or any version of release channel '
        f"{cluster.release_channel.value} at {floor_text}"
    )
    if version is None:
        cluster_at.error(
            FIELD,
            f"not set, so the release channel picks the version and gpu-cluster cannot tell "
            f"whether GKE installs the InferencePool CRD serving routes through: {limit.cite()}",
            None,
            allowed=floor_text,
            fix=fix,
        )
        return
    if version != "latest" and not GKE_VERSION.fullmatch(version):
        return  # stacks/validate/fabric_version.py reports the malformed version
    below = _below(parse(version), parse(limit.value)) if version != "latest" else False
    if below is True:
        cluster_at.error(
            FIELD,
            f"{version} is below the version from which GKE installs the InferencePool CRD "
            f"(gpu-cluster does not create it on GKE): {limit.cite()}",
            version,
            allowed=floor_text,
            fix=fix,
        )
    elif below is None:
        cluster_at.warn(
            FIELD,
            f"{version} leaves the patch to GKE, so gpu-cluster cannot tell whether GKE installs "
            f"the InferencePool CRD ({limit.value} or later does)",
            version,
            allowed=floor_text,
            fix=f'pin a full version at {floor_text}, or a later minor ("1.35")',
        )


def _below(version: Version | None, floor: Version | None) -> bool | None:
    """None: the version names no patch/build where the floor's minor needs one to compare (GKE picks it)."""
    assert version is not None and floor is not None
    (minor, patch, build), (f_minor, f_patch, f_build) = version, floor
    if minor != f_minor:
        return minor < f_minor
    if patch is None:
        return None
    if patch != f_patch:
        return patch < (f_patch or 0)
    return None if build is None else build < (f_build or 0)
