"""Two P6e-GB200 UltraServers (36 nodes, 144 GPUs) on EKS: the `eks-p6e-gb200` example with min/maxNodes 36, the two
capacity blocks in a Capacity Reservation Resource Group and the fee of both, as docs/nvl72.md shows it. It previews
with the policies passing, targets the group, starts all 36 nodes at the block's start (no scale-from-zero for DRA
pods), and Slurm gets one topology block per UltraServer."""

from __future__ import annotations

import copy

import yaml

from preview.__main__ import main
from tests.conftest import PROJECT_ROOT

GROUP = "arn:aws:resource-groups:us-east-1:123456789012:group/gb200-ultraservers"


def two_ultraservers() -> dict:
    """The variant docs/nvl72.md gives, from the one-UltraServer example."""
    doc = yaml.safe_load((PROJECT_ROOT / "Pulumi.eks-p6e-gb200.yaml").read_text())
    cfg = copy.deepcopy(doc)
    (pool,) = cfg["config"]["gpu-cluster:nodePools"]
    pool["minNodes"] = pool["maxNodes"] = (
        36  # several Slurm blocks: every node up (a pool following the queue is refused)
    )
    capacity = pool["capacity"]
    capacity.pop("reservation")
    capacity.update(reservationGroup=GROUP, upfrontFeeUsd=511999.48)  # 2 x 72 GPUs x 336 h x $10.582
    cfg["config"]["gpu-cluster:scheduling"]["queues"][0]["quotas"][0]["gpus"] = 144
    return cfg


def test_two_ultraservers_preview_with_the_policies_passing(capsys, tmp_path):
    path = tmp_path / "Pulumi.p6e-x2.yaml"
    path.write_text(yaml.safe_dump(two_ultraservers(), sort_keys=False))
    assert main(["--stack", "p6e-x2", "--stack-file", str(path), "--format", "json"]) == 0
    report = yaml.safe_load(capsys.readouterr().out)
    assert report["exitCode"] == 0 and report["violations"] == [] and report["errors"] == []
    resources = {(r["type"].rsplit(":", 1)[-1], r["name"]): r["inputs"] for r in report["resources"]}
    target = resources[("LaunchTemplate", "gb200-lt")]["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target == {"capacityReservationResourceGroupArn": GROUP}  # the group, not one block's reservation
    up = resources[("Schedule", "gb200-scale-up")]
    assert (up["minSize"], up["desiredCapacity"], up["maxSize"]) == (36, 36, 36)  # both UltraServers at the start
    assert "topology gb200: 2 blocks of 18 nodes" in str(report["queues"])  # one Slurm block per UltraServer
