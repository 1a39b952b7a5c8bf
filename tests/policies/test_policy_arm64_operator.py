"""topology-arm64-images sees the GPU Operator's operands (an amd64-only operand on an arm64 pool never starts): a GPU
Operator release names no pool, so its operands run on every GPU pool not labelled nvidia.com/gpu.deploy.operands=false;
each operand its values turn on (catalog/data/chart-operands.csv, with the release's image overrides) must be in the
image table with arm64. Both GB200 examples with gpuRuntime.mode: gpu-operator pass; an operand image overridden to an
amd64-only or unknown one, or a default-off operand turned on, is a violation on the arm64 pool; a pool that opts out is
not checked."""

from __future__ import annotations

import copy

import pytest

from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from tests.support.policy.harness import Pack, with_props, wire

ARM = "topology-arm64-images"
RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def _operator_stack(stack: str, pools_extra: list | None = None, stack_mode: str | None = "gpu-operator"):
    cfg = read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")
    if stack_mode:
        cfg["gpu-cluster:gpuRuntime"] = {"mode": stack_mode}
    if pools_extra:
        cfg["gpu-cluster:nodePools"] = [*cfg["gpu-cluster:nodePools"], *pools_extra]
    return tuple(run_program(cfg, stack).resources)


@pytest.fixture(scope="module")
def a4x_operator():
    return _operator_stack("gke-a4x-nvl72")


@pytest.fixture(scope="module")
def p6e_operator():
    return _operator_stack("eks-p6e-gb200")


def _edit_operator(resources, edit):
    out = [copy.deepcopy(r) for r in resources]
    (release,) = [r for r in out if r.type == RELEASE and str(r.inputs.get("chart", "")).endswith("gpu-operator")]
    props = wire(release)
    edit(props["values"])
    return [with_props(r, props) if r is release else r for r in out]


def _ours(diags):
    return [d for d in diags if d[0] == ARM]


def test_both_gb200_examples_pass_with_the_gpu_operator(pack, a4x_operator, p6e_operator):
    for recorded in (a4x_operator, p6e_operator):
        assert any(r.type == RELEASE and r.inputs.get("chart", "").endswith("gpu-operator") for r in recorded)
        assert _ours(pack.stack(list(copy.deepcopy(recorded)))) == []


def test_an_amd64_only_operand_on_the_arm64_pool_is_a_violation(pack, a4x_operator):
    def edit(values):
        values["devicePlugin"] = {
            "repository": "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib",
            "image": "nccl-plugin-gib",
            "version": "v1.1.0",
        }

    (finding,) = _ours(pack.stack(_edit_operator(a4x_operator, edit)))
    assert finding[:2] == (ARM, "mandatory")
    assert finding[2].startswith(
        "Release 'gpu-runtime-gpu-operator': it runs on arm64 pool 'gb200' (Grace arm64 "
        "hosts) images without an arm64 variant"
    )
    assert "nccl-plugin-gib:v1.1.0 (amd64 only" in finding[2]


def test_an_unknown_operand_version_fails_closed(pack, p6e_operator):
    def edit(values):
        values["dcgmExporter"]["version"] = "9.9.9-distroless"

    (finding,) = _ours(pack.stack(_edit_operator(p6e_operator, edit)))
    assert (
        "images not in catalog/data/image-architectures.csv: nvcr.io/nvidia/k8s/dcgm-exporter:9.9.9-distroless"
        in finding[2]
    )


def test_a_default_off_operand_turned_on_is_checked(pack, p6e_operator):
    def edit(values):
        values["dcgm"] = {"enabled": True}

    (finding,) = _ours(pack.stack(_edit_operator(p6e_operator, edit)))
    assert "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04" in finding[2]


def test_an_operator_for_another_pool_leaves_the_opted_out_arm64_pool_alone(pack):
    l4 = {
        "name": "l4",
        "machineType": "g2-standard-24",
        "zones": ["us-central1-a"],
        "maxNodes": 2,
        "gpuRuntime": {"mode": "gpu-operator"},
    }
    recorded = _operator_stack("gke-a4x-nvl72", [l4], stack_mode=None)  # A4X stays gke-managed: operands=false
    racks = [r for r in recorded if r.type == "gcp:container/nodePool:NodePool" and r.name.startswith("gb200-rack-")]
    assert len(racks) == 2  # one node pool per rack
    assert all(p.inputs["nodeConfig"]["labels"]["nvidia.com/gpu.deploy.operands"] == "false" for p in racks)

    def edit(values):
        values["dcgmExporter"]["version"] = "9.9.9-distroless"

    assert _ours(pack.stack(_edit_operator(recorded, edit))) == []
    # the same edit with the A4X served by the operator is caught (the rule did look at the release)
    assert _ours(pack.stack(_edit_operator(_operator_stack("gke-a4x-nvl72", [l4]), edit)))
