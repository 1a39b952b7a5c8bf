"""GPU runtime facts, pure: advertised nvidia.com/gpu per node, the MIG table, and the single-advertiser invariant
over random stacks (whatever mix of modes and sharing validates, each pool has exactly one advertiser)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog import Cloud, GpuModel, load_catalog, load_mig_catalog
from stacks.validate.issues import SpecError
from stacks.plan.facts import pool_facts
from stacks.plan.gpu_runtime import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    GKE_NO_DEFAULT_PLUGIN_LABEL,
    MIG_CONFIG_LABEL,
    OPERANDS_LABEL,
    Advertiser,
)
from stacks.plan.gpu_runtime_plan import runtime_plan
from stacks.spec.gpu_runtime import GpuRuntimeMode
from stacks.validate.load import load_spec
from tests.support.spec.edit import edit

CAT, MIG = load_catalog(), load_mig_catalog()
NON_MIG_GPUS = {GpuModel.L4, GpuModel.L40S, GpuModel.A10G, GpuModel.T4, GpuModel.V100_16GB, GpuModel.V100_32GB}
"""GPU models without MIG (MIG needs Ampere data-center parts or newer: A100/A30, H100, H200, B200)."""
MIG_PROFILES_NOT_CATALOGUED = {GpuModel.RTX_PRO_6000, GpuModel.GB200}
"""MIG-capable GPUs whose profiles no stored source lists: MIG on them is refused until mig-profiles.csv has them."""

GKE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-central1",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
    "nodePools": [],
}
EKS: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {
        "name": "ml-train",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [],
}
MACHINES = {
    Cloud.GCP: ["a3-highgpu-8g", "a2-highgpu-1g", "a2-ultragpu-8g", "g2-standard-24"],
    Cloud.AWS: ["p5.48xlarge", "p4d.24xlarge", "g6e.xlarge", "g5.12xlarge"],
}


def facts_of(raw: dict[str, Any]):
    spec, _ = load_spec(raw)
    return spec, [pool_facts(spec, p, CAT) for p in spec.node_pools]


def one_pool(base: dict, machine: str, runtime: dict, zone: str) -> dict:
    return edit(
        base,
        "nodePools",
        [{"name": "p", "machineType": machine, "zones": [zone], "maxNodes": 2, "gpuRuntime": runtime}],
    )


@pytest.mark.parametrize(
    "base, machine, zone, runtime, physical, advertised",
    [
        (GKE, "a3-highgpu-8g", "us-central1-a", {}, 8, 8),
        (GKE, "a3-highgpu-8g", "us-central1-a", {"sharing": {"mode": "time-slicing", "replicas": 4}}, 8, 32),
        (GKE, "a3-highgpu-8g", "us-central1-a", {"sharing": {"mode": "mig", "migProfile": "1g.10gb"}}, 8, 56),
        (
            GKE,
            "a3-highgpu-8g",
            "us-central1-a",
            {"mode": "gpu-operator", "sharing": {"mode": "mig", "migProfile": "4g.40gb"}},
            8,
            8,
        ),
        (GKE, "a2-highgpu-1g", "us-central1-a", {"sharing": {"mode": "mig", "migProfile": "2g.10gb"}}, 1, 3),
        (
            EKS,
            "p4d.24xlarge",
            "us-east-1a",
            {"mode": "gpu-operator", "sharing": {"mode": "mig", "migProfile": "3g.20gb"}},
            8,
            16,
        ),
        (EKS, "g6e.xlarge", "us-east-1a", {"sharing": {"mode": "mps", "replicas": 6}}, 1, 6),
    ],
    ids=["none", "ts4", "mig-1g10", "mig-4g40-operator", "a100-2g10", "p4d-3g20", "mps6"],
)
def test_advertised_gpus_per_node(base, machine, zone, runtime, physical, advertised):
    _, (f,) = facts_of(one_pool(base, machine, runtime, zone))
    assert (f.runtime.gpus_per_node, f.runtime.advertised_gpus_per_node) == (physical, advertised)
    assert f.gpus_per_node == physical and f.max_gpus == physical * 2, "capacity and cost stay physical"


def test_cost_per_gpu_hour_ignores_sharing():
    plain = facts_of(one_pool(GKE, "a3-highgpu-8g", {}, "us-central1-a"))[1][0]
    shared = facts_of(
        one_pool(GKE, "a3-highgpu-8g", {"sharing": {"mode": "mig", "migProfile": "1g.10gb"}}, "us-central1-a")
    )[1][0]
    assert shared.usd_per_gpu_hour == plain.usd_per_gpu_hour == plain.price.usd_per_hour / 8
    assert shared.runtime.advertised_gpus_per_node == 7 * plain.runtime.advertised_gpus_per_node


# -- the MIG table ----------------------------------------------------------------------------------------------------
def test_every_gpu_model_is_either_in_the_mig_table_or_known_without_mig():
    assert set(MIG.mig_models()) | NON_MIG_GPUS | MIG_PROFILES_NOT_CATALOGUED == set(GpuModel)
    assert not set(MIG.mig_models()) & NON_MIG_GPUS


@pytest.mark.parametrize("model", sorted({m for (m, _) in MIG.profiles}, key=lambda m: m.value), ids=lambda m: m.value)
def test_mig_profiles_are_consistent(model):
    profiles = [p for (m, _), p in MIG.profiles.items() if m == model]
    whole = max(profiles, key=lambda p: p.compute_slices)
    assert (whole.compute_slices, whole.max_instances_per_gpu) == (7, 1), "a 7g profile is the whole GPU"
    smallest = min(profiles, key=lambda p: (p.compute_slices, p.memory_gib))
    assert (smallest.compute_slices, smallest.max_instances_per_gpu) == (1, 7)
    for p in profiles:
        match = re.fullmatch(r"(\d)g\.(\d+)gb", p.profile)
        assert match and int(match.group(1)) == p.compute_slices and int(match.group(2)) == p.memory_gib
        assert p.compute_slices * p.max_instances_per_gpu <= 7, f"{p.profile}: more slices than a GPU has"
    assert MIG.profile_names(model, gke_only=True), "GKE partitions every MIG GPU in some way"


def test_catalog_memory_per_gpu_bounds_the_mig_profiles():
    by_model = {m.gpu_model: m.gpu_memory_gib_per_gpu for m in CAT.machines.values()}
    for (model, _), p in MIG.profiles.items():
        assert p.memory_gib <= by_model[model] + 2, f"{model.value} {p.profile} exceeds the GPU's memory"


# -- one advertiser per pool, for any stack that validates --------------------------------------------------------------
SHARING = st.sampled_from(
    [
        {},
        {"mode": "time-slicing", "replicas": 2},
        {"mode": "mps", "replicas": 3},
        {"mode": "mig", "migProfile": "1g.10gb"},
        {"mode": "mig", "migProfile": "3g.40gb"},
    ]
)
MODES = st.sampled_from([None, "gke-managed", "device-plugin", "gpu-operator"])


@st.composite
def stacks(draw):
    cloud = draw(st.sampled_from([Cloud.GCP, Cloud.AWS]))
    raw = copy.deepcopy(GKE if cloud == Cloud.GCP else EKS)
    zone = "us-central1-a" if cloud == Cloud.GCP else "us-east-1a"
    stack_mode = draw(MODES)
    if stack_mode:
        raw["gpuRuntime"] = {"mode": stack_mode}
    for i in range(draw(st.integers(1, 4))):
        runtime = {k: v for k, v in (("mode", draw(MODES)), ("sharing", draw(SHARING))) if v}
        raw["nodePools"].append(
            {
                "name": f"p{i}",
                "machineType": draw(st.sampled_from(MACHINES[cloud])),
                "zones": [zone],
                "maxNodes": draw(st.integers(1, 8)),
                "gpuRuntime": runtime,
            }
        )
    return raw


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stacks())
def test_every_valid_stack_has_exactly_one_advertiser_per_pool(raw):
    try:
        spec, facts = facts_of(raw)
    except SpecError:
        return  # refused before anything exists: nothing to advertise
    plan = runtime_plan(spec, facts)
    operator_in_stack = any(f.runtime.mode == GpuRuntimeMode.GPU_OPERATOR for f in facts)
    for f in facts:
        rt, labels = f.runtime, f.runtime.node_labels
        owners = [f in plan.device_plugin_pools, f in plan.operator_pools, rt.mode == GpuRuntimeMode.GKE_MANAGED]
        assert sum(owners) == 1, f"{f.name}: {owners}"
        if rt.mode == GpuRuntimeMode.GKE_MANAGED:
            assert spec.cloud == Cloud.GCP and rt.advertiser == Advertiser.GKE
            assert GKE_NO_DEFAULT_PLUGIN_LABEL not in labels and rt.gke_driver_installation != "INSTALLATION_DISABLED"
        elif spec.cloud == Cloud.GCP:  # a chart advertises: GKE's driver install and plugin must be off
            assert labels[GKE_NO_DEFAULT_PLUGIN_LABEL] == "true"
            assert rt.gke_driver_installation == "INSTALLATION_DISABLED" and rt.gke_accelerator_sharing == {}
            assert plan.cos_driver_installer is not None, "someone must install the driver"
        # the operator deploys its plugin wherever it finds a GPU unless told not to
        assert (labels.get(OPERANDS_LABEL) == "false") == (operator_in_stack and rt.mode != GpuRuntimeMode.GPU_OPERATOR)
        assert (MIG_CONFIG_LABEL in labels) == (rt.mig is not None and rt.mode == GpuRuntimeMode.GPU_OPERATOR)
        assert (DEVICE_PLUGIN_CONFIG_LABEL in labels) == (rt.device_plugin_config is not None)
        assert rt.advertised_gpus_per_node >= f.gpus_per_node
