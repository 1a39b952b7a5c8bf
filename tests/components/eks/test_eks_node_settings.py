"""EKS node settings under mocks: the node group's repair thresholds and the launch template's gp3 root volume
throughput/IOPS, as recorded provider inputs; omitted settings give the defaults."""

from __future__ import annotations

import pytest

from preview.engine import run_program
from tests.support.spec.edit import edit, edits
from tests.support.preview.recorded import one
from tests.support.spec.stack_configs import EKS

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ODCR = {"type": "reservation", "reservation": "cr-0123456789abcdef0"}
BLOCK = {**ODCR, "reservationKind": "capacity-block"}


def repair(rec) -> dict:
    return one(rec, NODE_GROUP, "p5").inputs["nodeRepairConfig"]


def root_ebs(rec, name: str = "p5-lt") -> dict:
    return one(rec, LAUNCH_TEMPLATE, name).inputs["blockDeviceMappings"][0]["ebs"]


@pytest.mark.parametrize(
    "capacity, expected",
    [
        (None, {"enabled": True}),
        ({"type": "spot"}, {"enabled": True}),
        (ODCR, {"enabled": True, "maxParallelNodesRepairedCount": 1}),
        (BLOCK, {"enabled": True, "maxParallelNodesRepairedCount": 1}),
    ],
    ids=["on-demand", "spot", "odcr", "capacity-block"],
)
def test_omitted_repair_repairs_one_node_at_a_time_on_reserved_capacity(capacity, expected):
    config = EKS if capacity is None else edit(EKS, "nodePools[0].capacity", capacity)
    assert repair(run_program(config)) == expected


@pytest.mark.parametrize("capacity", [None, BLOCK], ids=["on-demand", "capacity-block"])
def test_repair_thresholds_reach_the_node_group(capacity):
    changes: dict = {"nodePools[0].nodeRepair": {"maxParallelNodesRepaired": 2, "maxUnhealthyNodesThreshold": 2}}
    if capacity:
        changes["nodePools[0].capacity"] = capacity
    assert repair(run_program(edits(EKS, changes))) == {
        "enabled": True,
        "maxParallelNodesRepairedCount": 2,
        "maxUnhealthyNodeThresholdCount": 2,
    }


def test_only_a_threshold_keeps_the_capacity_block_default_for_parallel_repairs():
    rec = run_program(
        edits(EKS, {"nodePools[0].capacity": BLOCK, "nodePools[0].nodeRepair": {"maxUnhealthyNodesThreshold": 2}})
    )
    assert repair(rec) == {"enabled": True, "maxParallelNodesRepairedCount": 1, "maxUnhealthyNodeThresholdCount": 2}


def test_gpu_root_volume_defaults_to_1000_mibps_and_4000_iops_and_the_system_pool_keeps_gp3_baseline():
    rec = run_program(EKS)
    assert root_ebs(rec) == {
        "volumeSize": 200,
        "volumeType": "gp3",
        "encrypted": "true",
        "deleteOnTermination": "true",
        "throughput": 1000,
        "iops": 4000,
    }
    system = root_ebs(rec, "ml-system-lt")
    assert "throughput" not in system and "iops" not in system


@pytest.mark.parametrize(
    "setting, throughput, iops",
    [
        ({"throughputMiBps": 600, "iops": 5000}, 600, 5000),
        ({"throughputMiBps": 800}, 800, 3200),
        ({"throughputMiBps": 500}, 500, 3000),
        ({"iops": 3000}, 750, 3000),
        ({"iops": 16000}, 1000, 16000),
    ],
    ids=["both", "throughput-needs-more-iops", "throughput-within-baseline", "iops-caps-throughput", "iops-high"],
)
def test_root_volume_setting_reaches_the_launch_template(setting, throughput, iops):
    ebs = root_ebs(run_program(edit(EKS, "nodePools[0].rootVolume", setting)))
    assert (ebs["throughput"], ebs["iops"]) == (throughput, iops)
