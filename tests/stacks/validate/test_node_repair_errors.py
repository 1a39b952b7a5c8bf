"""EKS node settings (``nodeRepair``, ``rootVolume``): each row pins the exact message a user reads (config path,
value, allowed, fix): EKS-only settings refused on GKE, repair thresholds within the pool, gp3 limits."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from tests.support.spec.edit import edit, edits
from tests.stacks.validate.test_fabric_errors import EKS, GKE
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec


def case(config: dict[str, Any], expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(config, textwrap.dedent(expected).strip("\n"), id=id)


ERRORS = [
    case(
        edit(GKE, "nodePools[0].nodeRepair", {"maxParallelNodesRepaired": 1}),
        """
        error: gpu-cluster:nodePools[0].nodeRepair: pool 'mega': node repair thresholds are an EKS setting: GKE node auto-repair has no per-pool thresholds
          received: {"maxParallelNodesRepaired": 1}
          allowed:  no nodeRepair on GKE
          fix:      remove nodeRepair from this pool""",
        id="repair-on-gke",
    ),
    case(
        edit(GKE, "nodePools[0].rootVolume", {"throughputMiBps": 500}),
        """
        error: gpu-cluster:nodePools[0].rootVolume: pool 'mega': root volume throughput and IOPS are an EKS setting: GKE boot disks are sized with diskSizeGib; their performance follows the disk type and size
          received: {"throughputMiBps": 500}
          allowed:  no rootVolume on GKE
          fix:      remove rootVolume from this pool""",
        id="root-volume-on-gke",
    ),
    case(
        edit(EKS, "nodePools[0].nodeRepair", {"maxParallelNodesRepaired": 0}),
        """
        error: gpu-cluster:nodePools[0].nodeRepair.maxParallelNodesRepaired: pool 'p5': input should be greater than or equal to 1
          received: 0
          allowed:  1 or more
          fix:      raise the value""",
        id="parallel-zero",
    ),
    case(
        edit(EKS, "nodePools[0].nodeRepair", {"maxUnhealthyNodesThreshold": 9}),
        """
        error: gpu-cluster:nodePools[0].nodeRepair.maxUnhealthyNodesThreshold: pool 'p5': more than the pool's maxNodes (4)
          received: 9
          allowed:  1-4
          fix:      set maxUnhealthyNodesThreshold to at most 4, or raise maxNodes""",
        id="threshold-above-max-nodes",
    ),
    case(
        edit(EKS, "nodePools[0].nodeRepair", {"maxParallelNodesRepaired": 5}),
        """
        error: gpu-cluster:nodePools[0].nodeRepair.maxParallelNodesRepaired: pool 'p5': more than the pool's maxNodes (4)
          received: 5
          allowed:  1-4
          fix:      set maxParallelNodesRepaired to at most 4, or raise maxNodes""",
        id="parallel-above-max-nodes",
    ),
    case(
        edit(EKS, "nodePools[0].rootVolume", {"throughputMiBps": 1000, "iops": 3000}),
        """
        error: gpu-cluster:nodePools[0].rootVolume.throughputMiBps: pool 'p5': gp3 throughput above IOPS x 0.25 (3000 IOPS allow 750 MiB/s)
          received: 1000
          allowed:  125-750 with 3000 IOPS
          fix:      raise iops to at least 4000, or lower throughputMiBps""",
        id="throughput-above-iops",
    ),
    case(
        edit(EKS, "nodePools[0].rootVolume", {"throughputMiBps": 1001}),
        """
        error: gpu-cluster:nodePools[0].rootVolume.throughputMiBps: pool 'p5': input should be less than or equal to 1000
          received: 1001
          allowed:  1000 or less
          fix:      lower the value""",
        id="throughput-above-gp3",
    ),
    case(
        edit(EKS, "nodePools[0].rootVolume", {"throughputMiBps": 100}),
        """
        error: gpu-cluster:nodePools[0].rootVolume.throughputMiBps: pool 'p5': input should be greater than or equal to 125
          received: 100
          allowed:  125 or more
          fix:      raise the value""",
        id="throughput-below-gp3",
    ),
    case(
        edit(EKS, "nodePools[0].rootVolume", {"iops": 2000}),
        """
        error: gpu-cluster:nodePools[0].rootVolume.iops: pool 'p5': input should be greater than or equal to 3000
          received: 2000
          allowed:  3000 or more
          fix:      raise the value""",
        id="iops-below-gp3",
    ),
    case(
        edit(EKS, "nodePools[0].rootVolume", {"iops": 16001}),
        """
        error: gpu-cluster:nodePools[0].rootVolume.iops: pool 'p5': input should be less than or equal to 16000
          received: 16001
          allowed:  16000 or less
          fix:      lower the value""",
        id="iops-above-gp3",
    ),
    case(
        edit(EKS, "nodePools[0].rootVolume", {"throughputMibps": 500}),
        """
        error: gpu-cluster:nodePools[0].rootVolume.throughputMibps: pool 'p5': unknown setting
          received: 'throughputMibps'
          allowed:  throughputMiBps, iops
          fix:      did you mean 'throughputMiBps'?""",
        id="key-typo",
    ),
]


@pytest.mark.parametrize("config,expected", ERRORS)
def test_bad_node_settings_are_refused_with_the_exact_message(config, expected):
    with pytest.raises(SpecError) as exc:
        load_spec(config)
    assert [str(i) for i in exc.value.errors] == [expected]


@pytest.mark.parametrize(
    "changes",
    [
        {"nodePools[0].nodeRepair": {"maxParallelNodesRepaired": 1, "maxUnhealthyNodesThreshold": 4}},
        {"nodePools[0].rootVolume": {"throughputMiBps": 1000, "iops": 4000}},
        {"nodePools[0].rootVolume": {"throughputMiBps": 800}},
        {"nodePools[0].rootVolume": {"iops": 3000}},
    ],
    ids=["repair", "root-volume", "throughput-only", "iops-only"],
)
def test_valid_eks_node_settings_load_without_warnings(changes):
    assert load_spec(edits(EKS, changes))[1] == []
