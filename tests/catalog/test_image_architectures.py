"""The image -> architectures table (catalog/data/image-architectures.csv): every row sourced with a basis, valid OCI
architectures, chart rows naming the pinned chart versions and their default image tags, and every image gpu-cluster
itself picks for a GPU pool's architecture present with that architecture."""

from __future__ import annotations

import pytest
import yaml

from catalog.fabric import FabricKind, load_fabric_catalog
from catalog.images import load_image_table
from components.charts import AWS_EFA_DEVICE_PLUGIN, NVIDIA_DEVICE_PLUGIN, NVIDIA_DRA_DRIVER, SLURM
from render.trainer import TORCH_IMAGE, TORCH_IMAGE_ARM64
from tests.conftest import require_shared

TABLE = load_image_table()
PINS = {f"{p.chart}@{p.version}" for p in (NVIDIA_DEVICE_PLUGIN, NVIDIA_DRA_DRIVER, AWS_EFA_DEVICE_PLUGIN, SLURM)}


@pytest.mark.parametrize("image", sorted(TABLE.images))
def test_every_row_is_sourced_pinned_and_valid(image):
    row = TABLE.images[image]
    assert row.architectures and row.architectures <= {"amd64", "arm64"}
    assert row.basis in {"documented", "inferred"} and len(row.source) > 40
    assert ":" in image.rsplit("/", 1)[-1] and "latest" not in image
    assert row.chart == "" or row.chart in PINS, f"{image}: {row.chart} is not a pinned chart"


def test_the_images_gpu_cluster_picks_per_architecture_are_in_the_table():
    fab = load_fabric_catalog()
    assert not TABLE.lookup(fab.image(FabricKind.RDMA, "nccl-plugin").reference).supports("arm64")
    assert TABLE.lookup(fab.image(FabricKind.RDMA, "nccl-plugin-arm64").reference).supports("arm64")
    assert not TABLE.lookup(TORCH_IMAGE).supports("arm64") and TABLE.lookup(TORCH_IMAGE_ARM64).supports("arm64")
    for component in ("pause", "host-setup"):  # the RDMA installer's other containers run on A4X too
        assert TABLE.lookup(fab.image(FabricKind.RDMA, component).reference).supports("arm64")


@pytest.mark.parametrize(
    "chart, folder, path, image",
    [
        (
            "dra-driver-nvidia-gpu",
            "dra-driver-nvidia-gpu-v0.4.0",
            ("image",),
            "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0",
        ),
        (
            "aws-efa-k8s-device-plugin",
            "aws-efa-k8s-device-plugin-v0.5.30",
            ("image",),
            "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.20",
        ),
    ],
)
def test_chart_rows_match_the_staged_charts_default_image(chart, folder, path, image):
    values = yaml.safe_load(require_shared("charts", folder, "values.yaml").read_text())
    node = values
    for step in path:
        node = node[step]
    chart_yaml = yaml.safe_load(require_shared("charts", folder, "Chart.yaml").read_text())
    tag = node.get("tag") or f"v{chart_yaml['appVersion']}"
    assert f"{node['repository']}:{tag}" == image
    assert TABLE.images[image].chart.startswith(f"{chart}@")
