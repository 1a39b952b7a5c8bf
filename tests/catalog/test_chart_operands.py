"""The GPU Operator's operands (catalog/data/chart-operands.csv) against the pinned chart's own values.yaml
(../shared/charts/gpu-operator-v26.7.0): every operand image block of the values is listed (or excused with the
reason), with the chart's default image and enabled flags; every operand a GPU Operator release of gpu-cluster runs is
in the image table with arm64 and a source (so the GPU Operator on an arm64 pool never pulls an amd64-only image)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
import yaml

from catalog.images import chart_operands, load_chart_operands, load_image_table
from components.charts import GPU_OPERATOR
from render.nvidia_values import gpu_operator_values
from tests.conftest import require_shared

OPERANDS = chart_operands(GPU_OPERATOR.chart, GPU_OPERATOR.version)
FOLDER = f"{GPU_OPERATOR.chart}-{GPU_OPERATOR.version}"
NOT_OPERANDS = {
    "operator": "the operator Deployment itself (control nodes, not GPU nodes; the same image as the validator)",
    "vgpuManager": "vGPU host driver: no default image (repository empty) and only with sandboxWorkloads.enabled",
    "vgpuManager.driverManager": "init container of vgpuManager (sandbox vGPU only)",
    "vfioManager.driverManager": "init container of vfioManager (sandbox only); the same k8s-driver-manager image",
    "draDriver": "rendered only into a GPUCluster CR (gpuCluster.deployCR, experimental, off by default)",
}


def _values() -> dict[str, Any]:
    return yaml.safe_load(require_shared("charts", FOLDER, "values.yaml").read_text())


def _image_blocks(node: Any, path: str = "") -> Iterator[tuple[str, dict]]:
    if isinstance(node, dict):
        if "repository" in node and "image" in node:
            yield path, node
        for key, child in node.items():
            yield from _image_blocks(child, f"{path}.{key}" if path else key)


def test_every_operand_image_of_the_chart_is_listed_or_excused():
    listed = {o.component for o in OPERANDS}
    blocks = dict(_image_blocks(_values()))
    assert sorted(set(blocks) - listed - set(NOT_OPERANDS)) == []
    assert not set(NOT_OPERANDS) & listed and set(NOT_OPERANDS) <= set(blocks)


@pytest.mark.parametrize(
    "operand",
    [o for o in OPERANDS if "." not in o.component or o.component == "driver.manager"],
    ids=lambda o: o.component,
)
def test_each_row_is_the_charts_default_image_and_flags(operand):
    values = _values()
    block = values
    for step in operand.component.split("."):
        block = block[step]
    app_version = yaml.safe_load(require_shared("charts", FOLDER, "Chart.yaml").read_text())["appVersion"]
    assert operand.image == f"{block['repository']}/{block['image']}:{block.get('version') or app_version}"
    for path, default in operand.enabled_when:
        node = values
        for step in path.split("."):
            node = node[step]
        assert node is default, (path, node)
    assert operand.image_in({}) == operand.image and operand.enabled({}) is all(d for _, d in operand.enabled_when)


def test_the_subchart_row_is_the_nfd_subcharts_image():
    (nfd,) = [o for o in OPERANDS if o.component == "node-feature-discovery.image"]
    sub = require_shared("charts", FOLDER, "charts", "node-feature-discovery")
    image = yaml.safe_load((sub / "values.yaml").read_text())["image"]
    tag = image.get("tag") or yaml.safe_load((sub / "Chart.yaml").read_text())["appVersion"]
    assert nfd.image == f"{image['repository']}:{tag}"
    assert nfd.image_in({"node-feature-discovery": {"image": {"tag": "v9"}}}) == f"{image['repository']}:v9"


@pytest.mark.parametrize("cloud", ["gcp", "aws"])
def test_every_operand_gpu_cluster_runs_has_an_arm64_build(cloud):
    from catalog import Cloud
    from stacks.plan.gpu_runtime_plan import GpuRuntimePlan

    plan = GpuRuntimePlan(
        cloud=Cloud(cloud),
        device_plugin_pools=(),
        operator_pools=(),
        efa_pools=(),
        cos_driver_installer=None,
        gpu_feature_discovery=True,
        dcgm_exporter=True,
    )
    values = gpu_operator_values(plan, None)
    running = [o for o in OPERANDS if o.enabled(values)]
    assert {o.component for o in running} >= {
        "validator",
        "devicePlugin",
        "gfd",
        "dcgmExporter",
        "node-feature-discovery.image",
    }
    assert "driver" not in {o.component for o in running}  # no cloud here lets the operator install a driver
    table = load_image_table()
    for operand in running:
        row = table.lookup(operand.image_in(values))
        assert row is not None and row.supports("arm64") and len(row.source) > 40, operand.image


def test_rows_are_sourced():
    assert all(len(o.source) > 40 and o.chart and o.version for o in load_chart_operands())
