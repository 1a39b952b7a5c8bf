"""Impossible GPU runtime combinations: each row pins the exact error a user reads, and the program refuses the
config before it registers a single resource.

Rows mutate a small valid baseline per cloud. The expected text is ``str(SpecIssue)``: path and problem, then
received / allowed / fix lines, so message edits are deliberate and reviewed here.
"""

from __future__ import annotations

import copy
import textwrap
from typing import Any

import pulumi
import pytest

from preview.engine import execute_program, install_mocks
from tests.support.spec.edit import edits
from tests.support.spec.cases import assert_pool_issues_name_their_pool
from stacks.validate.issues import NAMESPACE, SpecError
from stacks.validate.load import load_spec

GKE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-central1",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
    "nodePools": [{"name": "h100", "machineType": "a3-highgpu-8g", "zones": ["us-central1-a"], "maxNodes": 4}],
}
EKS: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {
        "name": "ml-train",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [{"name": "h100", "machineType": "p5.48xlarge", "zones": ["us-east-1a"], "maxNodes": 4}],
}


def cfg(
    base: dict[str, Any],
    runtime: dict | None = None,
    pool: dict | None = None,
    extra_pool: dict | None = None,
    **pool_fields: Any,
) -> dict[str, Any]:
    """``base`` with a stack ``gpuRuntime``, the first pool's ``gpuRuntime`` override and other pool fields."""
    changes: dict[str, Any] = {}
    if extra_pool is not None:
        changes["nodePools"] = [*base["nodePools"], extra_pool]
    if runtime is not None:
        changes["gpuRuntime"] = runtime
    if pool is not None:
        changes["nodePools[0].gpuRuntime"] = pool
    changes.update({f"nodePools[0].{name}": value for name, value in pool_fields.items()})
    return edits(base, changes)


def case(config: dict[str, Any], *expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(config, [textwrap.dedent(e).strip("\n") for e in expected], id=id)


CASES = [
    case(
        cfg(EKS, {"mode": "gke-managed"}),
        """
        error: gpu-cluster:gpuRuntime.mode: gke-managed is a GKE mode; this stack's cloud is aws
          received: 'gke-managed'
          allowed:  device-plugin, gpu-operator
          fix:      use device-plugin (NVIDIA device plugin chart; the EKS NVIDIA AMI ships the driver) or gpu-operator
        """,
        id="gke-managed-on-eks",
    ),
    case(
        cfg(GKE, pool={"mode": "device-plugin"}),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.mode: pool 'h100': the NVIDIA device plugin chart alone does not work on GKE's COS nodes (no NVIDIA container toolkit to mount the driver into pods)
          received: 'device-plugin'
          allowed:  gke-managed, gpu-operator
          fix:      use gke-managed (GKE's plugin does time-sharing, MPS and MIG too) or gpu-operator
        """,
        id="device-plugin-on-gke",
    ),
    case(
        cfg(EKS, {"driverVersion": "latest"}),
        """
        error: gpu-cluster:gpuRuntime.driverVersion: EKS NVIDIA AMIs ship their own driver; gpu-cluster cannot install a newer one
          received: 'latest'
          allowed:  default
          fix:      remove driverVersion: the AMI's driver is used (newer AMI releases bring newer drivers)
        """,
        id="latest-driver-on-eks",
    ),
    case(
        cfg(GKE, pool={"sharing": {"mode": "mig", "migProfile": "1g.10gb"}}, machineType="g2-standard-8"),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.sharing.mode: pool 'h100': L4 GPUs (g2-standard-8) do not support MIG
          received: 'mig'
          allowed:  MIG GPUs: A100_40GB, A100_80GB, B200, H100_80GB, H200_141GB
          fix:      use time-slicing or mps on this pool, or a MIG-capable machine type
        """,
        id="mig-on-l4",
    ),
    case(
        cfg(GKE, pool={"sharing": {"mode": "time-slicing", "replicas": 4, "migProfile": "1g.10gb"}}),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.sharing: pool 'h100': time-slicing and MIG cannot be combined on one pool
          received: {"migProfile": "1g.10gb", "mode": "time-slicing"}
          allowed:  mode: mig with migProfile, or mode: time-slicing with replicas
          fix:      remove migProfile (keep time-slicing), or set mode: mig and remove replicas
        """,
        id="time-slicing-with-mig",
    ),
    case(
        cfg(GKE, {"sharing": {"mode": "time-slicing"}}),
        """
        error: gpu-cluster:gpuRuntime.sharing.replicas: time-slicing needs replicas (pods per physical GPU)
          allowed:  2-48
          fix:      add sharing.replicas, e.g. 4
        """,
        id="time-slicing-without-replicas",
    ),
    case(
        cfg(GKE, pool={"sharing": {"replicas": 4}}),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.sharing.replicas: pool 'h100': replicas only applies to sharing mode time-slicing or mps
          received: 4
          allowed:  time-slicing, mps
          fix:      set sharing.mode: time-slicing (or mps), or remove replicas
        """,
        id="replicas-without-sharing",
    ),
    case(
        cfg(GKE, pool={"sharing": {"migProfile": "1g.10gb"}}),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.sharing.migProfile: pool 'h100': migProfile only applies to sharing mode mig
          received: '1g.10gb'
          allowed:  mig
          fix:      set sharing.mode: mig, or remove migProfile
        """,
        id="mig-profile-without-mig",
    ),
    case(
        cfg(GKE, pool={"sharing": {"mode": "mig"}}),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.sharing.migProfile: pool 'h100': mode mig needs migProfile
          allowed:  1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb
          fix:      add sharing.migProfile, e.g. 1g.10gb
        """,
        id="mig-without-profile",
    ),
    case(
        cfg(GKE, pool={"sharing": {"mode": "mig", "migProfile": "1g.10gb", "replicas": 2}}),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.sharing.replicas: pool 'h100': MIG instances are not shared further: replicas only applies to time-slicing and mps
          received: 2
          allowed:  no replicas with mode mig
          fix:      remove replicas
        """,
        id="mig-with-replicas",
    ),
    case(
        cfg(GKE, pool={"sharing": {"mode": "mig", "migProfile": "1g.5gb"}}),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.sharing.migProfile: pool 'h100': 1g.5gb is not a MIG profile of H100_80GB
          received: '1g.5gb'
          allowed:  1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb
          fix:      did you mean '1g.10gb'?
        """,
        id="mig-profile-of-another-gpu",
    ),
    case(
        cfg(GKE, pool={"sharing": {"mode": "mig", "migProfile": "4g.40gb"}}),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.sharing.migProfile: pool 'h100': GKE cannot partition H100_80GB into 4g.40gb
          received: '4g.40gb'
          allowed:  1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 7g.80gb
          fix:      pick a GKE partition size, or set the pool's gpuRuntime.mode: gpu-operator (its MIG manager applies any profile)
        """,
        id="mig-profile-gke-cannot-partition",
    ),
    case(
        cfg(EKS, {"sharing": {"mode": "mig", "migProfile": "1g.10gb"}}),
        """
        error: gpu-cluster:gpuRuntime.sharing.mode: pool 'h100': MIG needs a MIG manager to partition the GPUs, and device-plugin mode has none
          received: 'mig'
          allowed:  mig with gpu-operator (its MIG manager)
          fix:      set the pool's gpuRuntime.mode: gpu-operator, or use time-slicing / mps
        """,
        id="mig-with-device-plugin",
    ),
    case(
        cfg(EKS, pool={"efaDevicePlugin": True}, machineType="g6e.xlarge"),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.efaDevicePlugin: pool 'h100': g6e.xlarge has no EFA interface, so the EFA device plugin has nothing to advertise
          received: true
          allowed:  EFA instance types: g4dn.12xlarge, g4dn.16xlarge, g4dn.8xlarge, g4dn.metal, g5.12xlarge, g5.16xlarge, g5.24xlarge, g5.48xlarge, g5.8xlarge, g6.12xlarge, g6.16xlarge, g6.24xlarge, … (27 in all)
          fix:      remove efaDevicePlugin, or pick an EFA instance type and set multiNode: true
        """,
        id="efa-plugin-on-non-efa-type",
    ),
    case(
        cfg(EKS, pool={"efaDevicePlugin": True}, machineType="g6e.48xlarge"),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.efaDevicePlugin: pool 'h100' has no EFA interfaces: gpu-cluster attaches them to multiNode pools only
          received: true
          allowed:  efaDevicePlugin: true with multiNode: true
          fix:      set multiNode: true (one AZ, a cluster placement group, every EFA interface), or remove efaDevicePlugin
        """,
        id="efa-plugin-on-single-node-pool",
    ),
    case(
        cfg(GKE, {"efaDevicePlugin": True}, pool={"efaDevicePlugin": False}),
        """
        error: gpu-cluster:gpuRuntime.efaDevicePlugin: efaDevicePlugin is an EKS setting; this stack's cloud is gcp
          received: true
          fix:      remove it (GKE multi-node pools use GPUDirect, not EFA)
        """,
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.efaDevicePlugin: pool 'h100': efaDevicePlugin is an EKS setting; this stack's cloud is gcp
          received: false
          fix:      remove it (GKE multi-node pools use GPUDirect, not EFA)
        """,
        id="efa-plugin-on-gke",
    ),
    case(
        cfg(EKS, {"dcgmExporter": True}),
        """
        error: gpu-cluster:gpuRuntime.dcgmExporter: the DCGM exporter comes with the GPU Operator, and no pool uses gpu-operator
          received: true
          allowed:  true only with a gpu-operator pool; false
          fix:      set mode: gpu-operator (stack or pool), or remove dcgmExporter
        """,
        id="dcgm-without-operator",
    ),
    case(
        cfg(GKE, labels={"gke-no-default-nvidia-gpu-device-plugin": "true", "nvidia.com/gpu.deploy.dcgm": "false"}),
        """
        error: gpu-cluster:nodePools[0].labels.gke-no-default-nvidia-gpu-device-plugin: pool 'h100': node label key is owned by the GPU runtime (it decides who advertises the GPUs)
          received: 'gke-no-default-nvidia-gpu-device-plugin'
          allowed:  any key except gke-no-default-nvidia-gpu-device-plugin, nvidia.com/device-plugin.config, nvidia.com/mig.config, nvidia.com/gpu.deploy.operands or keys starting with nvidia.com/gpu.deploy. or nvidia.com/mig.
          fix:      remove it: gpu-cluster sets it from gpuRuntime (mode, sharing)
        """,
        """
        error: gpu-cluster:nodePools[0].labels.nvidia.com/gpu.deploy.dcgm: pool 'h100': node label key is owned by the GPU runtime (it decides who advertises the GPUs)
          received: 'nvidia.com/gpu.deploy.dcgm'
          allowed:  any key except gke-no-default-nvidia-gpu-device-plugin, nvidia.com/device-plugin.config, nvidia.com/mig.config, nvidia.com/gpu.deploy.operands or keys starting with nvidia.com/gpu.deploy. or nvidia.com/mig.
          fix:      remove it: gpu-cluster sets it from gpuRuntime (mode, sharing)
        """,
        id="runtime-owned-label",
    ),
    case(
        cfg(
            GKE,
            {"mode": "gpu-operator"},
            pool={"driverVersion": "latest"},
            extra_pool={
                "name": "a100",
                "machineType": "a2-highgpu-1g",
                "zones": ["us-central1-a"],
                "maxNodes": 1,
                "gpuRuntime": {"driverVersion": "default"},
            },
        ),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.driverVersion: pool 'h100': GKE pools without gke-managed share one COS driver installer, so they need one driver version (default: a100; latest: h100)
          received: 'latest'
          allowed:  the same driverVersion on every device-plugin / gpu-operator pool
          fix:      set the same driverVersion on those pools (or only on gpuRuntime)
        """,
        """
        error: gpu-cluster:nodePools[1].gpuRuntime.driverVersion: pool 'a100': GKE pools without gke-managed share one COS driver installer, so they need one driver version (default: a100; latest: h100)
          received: 'default'
          allowed:  the same driverVersion on every device-plugin / gpu-operator pool
          fix:      set the same driverVersion on those pools (or only on gpuRuntime)
        """,
        id="cos-installer-driver-versions-differ",
    ),
    case(
        cfg(GKE, {"sharing": {"mode": "mps", "replicas": 64}}),
        """
        error: gpu-cluster:gpuRuntime.sharing.replicas: input should be less than or equal to 48
          received: 64
          allowed:  48 or less
          fix:      lower the value
        """,
        id="replicas-above-gke-limit",
    ),
    case(
        cfg(GKE, {"sharing": {"mode": "time-slicing", "replicas": 1}}),
        """
        error: gpu-cluster:gpuRuntime.sharing.replicas: input should be greater than or equal to 2
          received: 1
          allowed:  2 or more
          fix:      raise the value
        """,
        id="time-slicing-with-one-replica",
    ),
    case(
        cfg(GKE, {"mode": "operator"}),
        """
        error: gpu-cluster:gpuRuntime.mode: not one of the allowed values
          received: 'operator'
          allowed:  gke-managed, device-plugin, gpu-operator
          fix:      did you mean 'gpu-operator'?
        """,
        id="unknown-mode",
    ),
    case(
        cfg(GKE, pool={"sharring": {"mode": "mps"}}),
        """
        error: gpu-cluster:nodePools[0].gpuRuntime.sharring: pool 'h100': unknown setting
          received: 'sharring'
          allowed:  mode, driverVersion, sharing, efaDevicePlugin
          fix:      did you mean 'sharing'?
        """,
        id="unknown-pool-runtime-key",
    ),
]


@pytest.mark.parametrize("config, expected", CASES)
def test_rejected_combination_message(config, expected):
    with pytest.raises(SpecError) as info:
        load_spec(config)
    assert [str(issue) for issue in info.value.errors] == expected


@pytest.mark.parametrize("config, expected", CASES)
def test_every_pool_issue_names_its_pool(config, expected):
    """A pool's own override is reported naming the pool; a stack value many pools inherit is not."""
    assert_pool_issues_name_their_pool(config)


@pytest.mark.parametrize("config, expected", CASES)
def test_rejected_combination_registers_nothing(config, expected):
    """What `pulumi preview` does: __main__.py raises before the first resource, with the same first message."""
    monitor = install_mocks({f"{NAMESPACE}:{key}": value for key, value in config.items()})
    with pytest.raises(pulumi.RunError) as info:
        execute_program()
    assert expected[0] in str(info.value)
    assert monitor.registered == []


@pytest.mark.parametrize("base", [GKE, EKS], ids=["gke", "eks"])
def test_baselines_are_valid_so_every_row_tests_one_thing(base):
    spec, warnings = load_spec(copy.deepcopy(base))
    assert spec.node_pools[0].name == "h100" and warnings == []


def test_efa_plugin_without_any_efa_pool_is_a_warning_not_an_error():
    _, warnings = load_spec(cfg(EKS, {"efaDevicePlugin": True}, multiNode=False))
    assert [str(w) for w in warnings] == [
        textwrap.dedent("""
        warning: gpu-cluster:gpuRuntime.efaDevicePlugin: no pool is multiNode, so no pool has EFA interfaces and the EFA device plugin would not run anywhere
          received: true
          fix:      set multiNode: true on the pools that need EFA, or remove efaDevicePlugin""").strip("\n")
    ]


def test_feature_discovery_on_an_all_gke_managed_stack_is_a_warning():
    _, warnings = load_spec(cfg(GKE, {"gpuFeatureDiscovery": True}))
    assert len(warnings) == 1 and warnings[0].path == "gpu-cluster:gpuRuntime.gpuFeatureDiscovery"
    assert "GKE labels its GPU nodes itself" in warnings[0].problem
    _, quiet = load_spec(copy.deepcopy(GKE))  # the default (true, not written) stays quiet
    assert quiet == []


def test_one_bad_stack_value_inherited_by_many_pools_is_reported_once():
    many = cfg(
        EKS,
        {"mode": "gke-managed"},
        extra_pool={"name": "l40s", "machineType": "g6e.xlarge", "zones": ["us-east-1a"], "maxNodes": 2},
    )
    with pytest.raises(SpecError) as info:
        load_spec(many)
    assert [e.path for e in info.value.errors] == ["gpu-cluster:gpuRuntime.mode"]
