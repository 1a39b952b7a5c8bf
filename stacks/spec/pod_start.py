"""What a pool declares to start pods fast (``nodePools[].podStart``) and the registry mirrors a GKE stack keeps in
Artifact Registry (``cluster.imageMirrors``). Shape only: the cross-field and per-cloud rules live in
``stacks/validate/pod_start.py``, the defaults a pool gets in ``stacks/plan/pod_start.py``."""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from stacks.spec.model_base import SpecModel

GKE_PARALLEL_PULLS = (2, 5)
"""GKE's kubelet ``max_parallel_image_pulls`` range (pulumi-gcp 10.2.0 ``NodePoolNodeConfigKubeletConfig``)."""


class MirrorUpstream(str, Enum):
    """Registries an Artifact Registry remote repository can mirror for GPU images. ghcr.io is one of AR's listed
    external sources; nvcr.io (NGC) is a custom Docker upstream (AR docs, "Create remote repositories")."""

    NVCR = "nvcr.io"
    GHCR = "ghcr.io"


class ImageMirror(SpecModel):
    upstream: MirrorUpstream = Field(
        description=(
            "The registry to mirror: `nvcr.io` (NVIDIA NGC) or `ghcr.io`. Jobs then pull "
            "`<region>-docker.pkg.dev/<project>/<repository>/<path>:<tag>` instead of `<upstream>/<path>:<tag>`, which GKE "
            "image streaming can stream."
        )
    )
    repository: str | None = Field(
        None,
        description=(
            "Artifact Registry repository ID (lower-case letters, digits, `-`). Omitted: the upstream with `.` as `-` "
            "(`nvcr-io`, `ghcr-io`)."
        ),
    )
    username: str | None = Field(
        None,
        description=(
            "Upstream user name for private images (NGC: `$oauthtoken`). Omitted: anonymous pulls (public images only)."
        ),
    )
    password_secret_version: str | None = Field(
        None,
        description=(
            "With `username`: the Secret Manager secret version holding the upstream password or API key, "
            "`projects/<project>/secrets/<secret>/versions/<version>`. Never the key itself: the stack file is not a "
            "secret store."
        ),
    )


class SecondaryBootDisk(SpecModel):
    disk_image: str = Field(
        description=(
            "The Compute Engine disk image holding the pool's images, built beforehand (Google's gke-disk-image-builder; "
            "gpu-cluster does not build it): `global/images/<name>` or `projects/<project>/global/images/<name>`."
        )
    )


class PodStart(SpecModel):
    images: list[str] = Field(
        default_factory=list,
        description=(
            "The container images this pool's jobs run, each with a pinned tag or digest (`nvcr.io/nvidia/pytorch:25.01-py3`, "
            "`…@sha256:…`; no `latest`, no untagged names). The preview says how a cold node gets each one; `prepull` "
            "and `secondaryBootDisk` use them."
        ),
    )
    image_streaming: bool | None = Field(
        None,
        description=(
            "GKE only: image streaming (`gcfs_config`): images in Artifact Registry (standard or remote repositories) "
            "start before they are fully downloaded. Omitted: on (turning it on rolls the pool's nodes, so it follows "
            "`podStart` being declared). Other registries' images are pulled in full: a warning names them."
        ),
    )
    secondary_boot_disk: SecondaryBootDisk | None = Field(
        None,
        description=(
            "GKE only: a secondary boot disk in `CONTAINER_IMAGE_CACHE` mode, made from a disk image you built with "
            "`images` in it; each node gets its own copy, provisioned in parallel with the node. Needs image streaming "
            "and GKE ≥ 1.28.3-gke.1067000. Omitted: none."
        ),
    )
    prepull: bool = Field(
        False,
        description=(
            "Run a DaemonSet on this pool that pulls `images` onto every new node as soon as it joins (one init container "
            "per image running `sh -c 'exit 0'` as nobody; it tolerates the pool's taints and requests no GPU). Default "
            "false."
        ),
    )
    fast_image_pull: bool | None = Field(
        None,
        description=(
            "EKS only: nodeadm's `FastImagePull` (SOCI parallel pull and unpack; experimental in the EKS AMI) and parallel "
            "kubelet pulls. Omitted: on. nodeadm ignores it on instances under 4 vCPU or 7 GiB."
        ),
    )
    image_size_gb: float | None = Field(
        None,
        gt=0,
        le=500,
        description=(
            "Size of the pool's largest job image in GB, for the time-to-running estimates (the preview's pod start "
            "table, the what-if). Omitted: the full pull takes the catalog's time for an undeclared size, 4-6 min "
            "(typical 4.3 min; catalog/data/start-path.csv)."
        ),
    )
    max_parallel_image_pulls: int | None = Field(
        None,
        ge=1,
        le=10,
        description=(
            "Kubelet image pulls at once: GKE 2-5 (`kubelet_config.max_parallel_image_pulls`); EKS 1-10 (`serializeImagePulls: "
            "false` + `maxParallelImagePulls`). Omitted: GKE's default; on EKS unlimited when fast image pull is on."
        ),
    )
