"""Every pinned Helm chart and upstream manifest the GPU runtime installs, in one place.

A pin names the chart, its exact version and repository, and where the chart's default ``values.yaml`` lives in
``../shared/schemas`` (tests check the values we render against it: unknown keys are errors). Bump a version
here and in ``../shared/schemas`` together.
"""
from __future__ import annotations

from dataclasses import dataclass

from stacks.gpu_runtime_spec import DriverVersion


@dataclass(frozen=True)
class ChartPin:
    chart: str
    version: str
    repo: str
    default_values: str
    """Path of the chart's default values.yaml under ``../shared/schemas`` (the pinned tag's copy)."""


NVIDIA_DEVICE_PLUGIN = ChartPin(
    chart="nvidia-device-plugin", version="0.20.0", repo="https://nvidia.github.io/k8s-device-plugin",
    default_values="k8s-device-plugin/v0.20.0/deployments/helm/nvidia-device-plugin/values.yaml")

GPU_OPERATOR = ChartPin(
    # NGC publishes the chart with the leading "v" (the git Chart.yaml only holds a v1.0.0-devel placeholder).
    chart="gpu-operator", version="v26.7.0", repo="https://helm.ngc.nvidia.com/nvidia",
    default_values="gpu-operator/v26.7.0/deployments/gpu-operator/values.yaml")

AWS_EFA_DEVICE_PLUGIN = ChartPin(
    # eks-charts tags the whole repository (v0.0.242); the chart's own version, "v" included, is in its Chart.yaml.
    chart="aws-efa-k8s-device-plugin", version="v0.5.30", repo="https://aws.github.io/eks-charts",
    default_values="eks-charts/v0.0.242/stable/aws-efa-k8s-device-plugin/values.yaml")

ALL_CHARTS = (NVIDIA_DEVICE_PLUGIN, GPU_OPERATOR, AWS_EFA_DEVICE_PLUGIN)

COS_DRIVER_INSTALLER_COMMIT = "068b15a980977bdaab46eb73e1ac8fba47e41f60"
"""GoogleCloudPlatform/container-engine-accelerators commit whose COS driver-installer DaemonSets we apply."""
_COS_BASE = ("https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/"
             f"{COS_DRIVER_INSTALLER_COMMIT}/nvidia-driver-installer/cos/")
COS_DRIVER_INSTALLER = {
    # Both install DaemonSet kube-system/nvidia-driver-installer, skip nodes labelled
    # cloud.google.com/gke-gpu-driver-version (i.e. pools where GKE installs the driver itself), and differ only in
    # the driver they install: the COS release's default, or its latest.
    DriverVersion.DEFAULT: _COS_BASE + "daemonset-preloaded.yaml",
    DriverVersion.LATEST: _COS_BASE + "daemonset-preloaded-latest.yaml",
}
