"""Every pinned third-party artifact the stack installs, in one place: the Helm charts, upstream manifests and
container images of every layer (GPU runtime, EKS node autoscaling, Kueue/Kubeflow, Katib, Kubeflow Pipelines,
Slurm), each section headed by the layer that installs it.

A chart pin names the chart, its exact version and repository, and where the chart's default ``values.yaml`` lives
in ``../shared/schemas`` (tests check the values we render against it: unknown keys are errors). Bump a version
here and in ``../shared/schemas`` together.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChartPin:
    chart: str
    version: str
    repo: str
    default_values: str
    """Path of the chart's default values.yaml under ``../shared/schemas`` (the pinned tag's copy)."""


# -- GPU runtime: device plugin, GPU Operator, EFA device plugin, COS driver installer ------------------------------
NVIDIA_DEVICE_PLUGIN = ChartPin(
    chart="nvidia-device-plugin",
    version="0.20.0",
    repo="https://nvidia.github.io/k8s-device-plugin",
    default_values="k8s-device-plugin/v0.20.0/deployments/helm/nvidia-device-plugin/values.yaml",
)

GPU_OPERATOR = ChartPin(
    # NGC publishes the chart with the leading "v" (the git Chart.yaml only holds a v1.0.0-devel placeholder).
    chart="gpu-operator",
    version="v26.7.0",
    repo="https://helm.ngc.nvidia.com/nvidia",
    default_values="gpu-operator/v26.7.0/deployments/gpu-operator/values.yaml",
)

AWS_EFA_DEVICE_PLUGIN = ChartPin(
    # eks-charts tags the whole repository (v0.0.242); the chart's own version, "v" included, is in its Chart.yaml.
    chart="aws-efa-k8s-device-plugin",
    version="v0.5.30",
    repo="https://aws.github.io/eks-charts",
    default_values="eks-charts/v0.0.242/stable/aws-efa-k8s-device-plugin/values.yaml",
)

NVIDIA_DRA_DRIVER = ChartPin(
    # kubernetes-sigs/dra-driver-nvidia-gpu v0.4.0 (the renamed nvidia-dra-driver-gpu; 0.4 = NGC 26.4), published as an
    # OCI chart with a strict-semver version (no "v"); installed for ComputeDomains only (resources.gpus.enabled=false).
    # Its default values.yaml is staged with the chart in ../shared/charts/dra-driver-nvidia-gpu-v0.4.0.
    chart="dra-driver-nvidia-gpu",
    version="0.4.0",
    repo="oci://registry.k8s.io/dra-driver-nvidia/charts",
    default_values="../charts/dra-driver-nvidia-gpu-v0.4.0/values.yaml",
)

GPU_RUNTIME_CHARTS = (NVIDIA_DEVICE_PLUGIN, GPU_OPERATOR, AWS_EFA_DEVICE_PLUGIN)
"""The GPU runtime's charts (the other layers' pins follow, by layer)."""

# -- cluster: node autoscaling on EKS (GKE autoscales node pools itself) -------------------------------------------
CLUSTER_AUTOSCALER = ChartPin(
    # Chart 9.59.0 (2026-08) ships appVersion 1.35.0; the index at https://kubernetes.github.io/autoscaler/index.yaml
    # lists it. ../shared/schemas holds no copy of this chart's values.yaml: tests check our values against the
    # keys of the upstream file (cluster-autoscaler/charts/cluster-autoscaler/values.yaml) listed in the test.
    chart="cluster-autoscaler",
    version="9.59.0",
    repo="https://kubernetes.github.io/autoscaler",
    default_values="cluster-autoscaler/cluster-autoscaler-chart-9.59.0/cluster-autoscaler/charts/cluster-autoscaler/"
    "values.yaml",
)

CLUSTER_AUTOSCALER_APP_VERSION = "1.35.0"
"""appVersion of chart 9.59.0 (its Chart.yaml); the ProvisioningRequest CRD is taken from this release's tag."""

CLUSTER_AUTOSCALER_IMAGE_TAGS = {
    # Cluster Autoscaler is built per Kubernetes minor version ("use it with the control plane version for which it
    # was meant", cluster-autoscaler README), so the chart's default image (v1.35.0) is overridden per cluster version.
    # Newest patch per minor as pinned by kubernetes/kops (pkg/model/components/clusterautoscaler.go); 1.36.1 from the
    # cluster-autoscaler-1.36.1 release (2026-07-23). Images: registry.k8s.io/autoscaling/cluster-autoscaler:<tag>.
    "1.32": "v1.32.7",
    "1.33": "v1.33.5",
    "1.34": "v1.34.4",
    "1.35": "v1.35.1",
    "1.36": "v1.36.1",
}

COS_DRIVER_INSTALLER_COMMIT = "068b15a980977bdaab46eb73e1ac8fba47e41f60"
"""GoogleCloudPlatform/container-engine-accelerators commit whose COS driver-installer DaemonSets we apply."""
_COS_BASE = (
    "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/"
    f"{COS_DRIVER_INSTALLER_COMMIT}/nvidia-driver-installer/cos/"
)
COS_DRIVER_INSTALLER = {
    # Both install DaemonSet kube-system/nvidia-driver-installer, skip nodes labelled
    # cloud.google.com/gke-gpu-driver-version (i.e. pools where GKE installs the driver itself), and differ only in
    # the driver they install: the COS release's default, or its latest.
    # keyed by the GPU runtime plan's driver version (``gpuRuntime.driverVersion``: default | latest)
    "default": _COS_BASE + "daemonset-preloaded.yaml",
    "latest": _COS_BASE + "daemonset-preloaded-latest.yaml",
}

# -- scheduling: Kueue and Kubeflow (OCI charts: Helm takes the full oci:// reference as the chart, with no repo) ----
KUEUE = ChartPin(
    chart="kueue",
    version="0.19.2",
    repo="oci://registry.k8s.io/kueue/charts",
    default_values="kueue/v0.19.2/charts/kueue/values.yaml",
)

KUBEFLOW_TRAINER = ChartPin(
    # Published without the tag's "v" (the upstream README installs with --version ${VERSION#v}).
    chart="kubeflow-trainer",
    version="2.3.0",
    repo="oci://ghcr.io/kubeflow/charts",
    default_values="kubeflow-trainer/v2.3.0/charts/kubeflow-trainer/values.yaml",
)

KATIB_VERSION = "v0.18.0"
KATIB_MANIFESTS = f"https://github.com/kubeflow/katib/tree/{KATIB_VERSION}/manifests/v1beta1/installs/katib-standalone"
"""Katib has no published chart: its standalone kustomization (controller, DB manager, MySQL, UI) at a pinned tag."""
KUBEFLOW_PIPELINES_VERSION = "2.5.0"
KUBEFLOW_PIPELINES_MANIFESTS = {
    "cluster": (
        "https://github.com/kubeflow/pipelines/tree/"
        f"{KUBEFLOW_PIPELINES_VERSION}/manifests/kustomize/cluster-scoped-resources"
    ),
    "platform": (
        "https://github.com/kubeflow/pipelines/tree/"
        f"{KUBEFLOW_PIPELINES_VERSION}/manifests/kustomize/env/platform-agnostic"
    ),
}
"""Kubeflow Pipelines standalone: cluster-scoped resources (CRDs) first, then the platform-agnostic install."""
MANIFEST_MYSQL_IMAGE = (
    "docker.io/library/mysql:8.4@sha256:85b9bf2e29cf836ecb8c2a15a935d4ba0c606631dff1dd79531a11983c638f2a"
)
"""Replaces the MySQL images of the Katib (``mysql:8.0``, a moving tag on a release line out of support since April
2026) and Kubeflow Pipelines manifests: MySQL 8.4 LTS (8.4.11), pinned by the digest of its multi-arch index that
docker-library/repo-info@0f0c69aaf7d3 repos/mysql/remote/8.4.md records (no registry here: not re-resolved). 8.0 data
upgrades in place to 8.4."""
KFP_MINIO_IMAGE = "quay.io/minio/minio:RELEASE.2025-09-07T16-13-09Z"
"""Replaces Kubeflow Pipelines 2.5.0's MinIO (``RELEASE.2019-08-14T20-37-41Z``: seven years of fixed CVEs). MinIO
publishes no digest gpu-cluster can cite offline, and MinIO is not host-level, so a release tag. MinIO dropped the
single-drive ``fs`` format of 2019 (RELEASE.2022-10-24): for fresh installs; an existing bucket must be copied out
with ``mc mirror`` first. It reads ``MINIO_ROOT_USER``/``MINIO_ROOT_PASSWORD`` (the 2019 names are gone)."""

# -- scheduling: Slurm on Kubernetes (SchedMD Slinky; OCI charts) ---------------------------------------------------
SLURM_OPERATOR = ChartPin(
    # crds.enabled installs the CRDs from the chart's own subchart; certManager.enabled=false lets Helm make the
    # webhook's certificate (docs/installation.md "Without cert-manager").
    chart="slurm-operator",
    version="1.2.1",
    repo="oci://ghcr.io/slinkyproject/charts",
    default_values="slurm-operator/v1.2.1/helm/slurm-operator/values.yaml",
)

SLURM = ChartPin(
    # appVersion "26.05": images ghcr.io/slinkyproject/slurm{ctld,d,dbd,restd}:26.05-ubuntu26.04.
    chart="slurm",
    version="1.2.1",
    repo="oci://ghcr.io/slinkyproject/charts",
    default_values="slurm-operator/v1.2.1/helm/slurm/values.yaml",
)

SLURM_CHARTS = (SLURM_OPERATOR, SLURM)
SLURM_RELEASE = "26.05"
SLURM_CLIENT_IMAGE = "ghcr.io/slinkyproject/login:26.05-ubuntu26.04"
"""Slinky's login image: Slurm 26.05 client commands (sacctmgr) for the accounts Job."""
MARIADB_IMAGE = "docker.io/library/mariadb:11.8@sha256:1fe78d53850250aa2560aa0059e3088b4cd230a5db2230f530c70e4b87bcc30c"
"""MariaDB 11.8 LTS for slurmdbd's database (the slurm chart expects an external database), pinned by the digest of
the 11.8 multi-arch index (11.8.8) that docker-library/repo-info@026819ee054b repos/mariadb/remote/11.8.md records (no
registry here: not re-resolved). It holds the accounting data: the bytes must not change under a moved tag."""

# -- serving: KEDA (autoscaling on vLLM's metrics), LeaderWorkerSet (multi-node replicas), InferencePool + EPP (GKE) --
KEDA = ChartPin(
    chart="keda",
    version="2.20.2",
    repo="https://kedacore.github.io/charts",
    default_values="kedacore-charts/v2.20.2/keda/values.yaml",
)

LWS = ChartPin(
    # published with the git tag as its version, "v" included (shared/charts/PROVENANCE.md)
    chart="lws",
    version="v0.10.0",
    repo="oci://registry.k8s.io/lws/charts",
    default_values="lws/v0.10.0/charts/lws/values.yaml",
)

INFERENCE_POOL = ChartPin(
    # the last gateway-api-inference-extension release with charts (the EPP moved to llm-d/llm-d-router after it)
    chart="inferencepool",
    version="v1.5.0",
    repo="oci://registry.k8s.io/gateway-api-inference-extension/charts",
    default_values="gateway-api-inference-extension/v1.5.0/config/charts/inferencepool/values.yaml",
)

INFERENCE_POOL_CRD_URL = (
    "https://raw.githubusercontent.com/kubernetes-sigs/gateway-api-inference-extension/v1.6.0/"
    "config/crd/bases/inference.networking.k8s.io_inferencepools.yaml"
)
"""The InferencePool v1 CRD at the pinned GIE tag (the inferencepool chart renders the object, not its CRD)."""
