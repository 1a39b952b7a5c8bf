"""The offline preview shows, per pool, who advertises the GPUs, the sharing, and schedulable nvidia.com/gpu per
node, while cost stays per physical GPU; the example stacks use every runtime and sharing mode."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from catalog import load_catalog
from preview.engine import PROJECT_ROOT, read_stack_file
from preview.render.markdown import render_markdown
from preview.render.text import render_text
from preview.run import preview_stack
from stacks.plan.facts import pool_facts
from stacks.spec.gpu_runtime import GpuRuntimeMode, SharingMode
from stacks.validate.load import decode_config, load_spec
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS


def test_examples_use_every_runtime_mode_and_every_sharing_mode():
    modes, sharing = set(), set()
    for stack in EXAMPLE_STACKS:
        spec, _ = load_spec(decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")))
        for pool in spec.node_pools:
            rt = pool_facts(spec, pool, load_catalog()).runtime
            modes.add((spec.cloud.value, rt.mode))
            sharing.add(rt.sharing)
    assert {m for _, m in modes} == set(GpuRuntimeMode)
    assert sharing == set(SharingMode)
    assert ("aws", GpuRuntimeMode.DEVICE_PLUGIN) in modes and ("gcp", GpuRuntimeMode.GPU_OPERATOR) in modes


RUNTIME_EXAMPLES = ("dev", "gke-h100-512", "eks-p5-efa", "gke-operator-mig")
"""Examples that show the gpuRuntime section (other examples may rely on the defaults)."""


def test_runtime_examples_write_a_gpu_runtime_section():
    assert set(RUNTIME_EXAMPLES) <= set(EXAMPLE_STACKS)
    for stack in RUNTIME_EXAMPLES:
        assert "gpu-cluster:gpuRuntime" in read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"), stack


@pytest.mark.slow
def test_json_runtime_rows_and_physical_cost():
    out = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "gke-operator-mig", "--format", "json"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    rows = {r["pool"]: r for r in doc["gpuRuntime"]}
    assert rows["h100-mig"] == {
        "pool": "h100-mig",
        "machineType": "a3-highgpu-8g",
        "mode": "gpu-operator",
        "advertiser": "GPU Operator device plugin",
        "driver": "COS driver installer (default)",
        "sharing": "mig 1g.10gb ×7",
        "physicalGpusPerNode": 8,
        "advertisedGpusPerNode": 56,
        "efaDevicePlugin": False,
    }
    assert rows["l4-managed"]["advertiser"] == "GKE device plugin" and rows["l4-managed"]["advertisedGpusPerNode"] == 2
    cost = {p["pool"]: p for p in doc["cost"]["pools"]}
    assert cost["h100-mig"]["gpus_per_node"] == 8, "cost counts physical GPUs, not MIG instances"
    assert cost["h100-mig"]["usd_per_gpu_hour"] == cost["h100-mig"]["usd_per_node_hour"] / 8
    assert doc["cost"]["totals"]["maxGpus"] == 2 * 8 + 4 * 2


def test_text_and_markdown_show_the_runtime_table():
    report = preview_stack("eks-p5-efa")
    text = render_text(report, color=False, width=200)
    title = "GPU runtime (one nvidia.com/gpu advertiser per pool"
    assert title in text
    runtime_lines = text[text.index(title) :].splitlines()  # the cost table above has rows per pool too
    row = next(line for line in runtime_lines if line.startswith("│ l40s-spot"))
    assert "NVIDIA device plugin (chart)" in row and "mps ×4" in row and "EKS NVIDIA AMI" in row
    assert [c.strip() for c in row.split("│")[5:8]] == ["1", "4", ""]
    p5 = next(line for line in runtime_lines if line.startswith("│ p5-block"))
    assert [c.strip() for c in p5.split("│")[5:8]] == ["8", "8", "yes"]
    md = render_markdown(report)
    assert "| l40s-spot | NVIDIA device plugin (chart) | EKS NVIDIA AMI | mps ×4 | 1 | 4 |  |" in md
    assert "| p5-block | NVIDIA device plugin (chart) | EKS NVIDIA AMI | none | 8 | 8 | yes |" in md


def test_stack_outputs_carry_the_runtime_per_pool():
    from tests.support.spec.gpu_runtime_matrix import recording

    pools = recording("dev").outputs["pools"]
    assert pools["l4"]["gpuRuntime"] == {
        "mode": "gke-managed",
        "advertiser": "GKE device plugin",
        "driver": "GKE (DEFAULT)",
        "sharing": "time-slicing ×4",
        "physicalGpusPerNode": 1,
        "advertisedGpusPerNode": 4,
        "efaDevicePlugin": False,
    }
    assert pools["l4"]["maxGpus"] == 2, "capacity stays physical"
