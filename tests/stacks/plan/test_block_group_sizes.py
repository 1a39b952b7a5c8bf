"""A capacity-block node group whose scale-up brings every node up (DRA pools: the autoscaler cannot scale them from
zero) carries the window's sizes itself once the block is open, so a ``pulumi up`` during the block sends the
block's size, not the 0/0 the group was created with (EKS would apply that to the Auto Scaling group and stop every
node mid-training)."""

from __future__ import annotations

import copy
import datetime as dt

from catalog import load_catalog
from preview.engine import PROJECT_ROOT, read_stack_file
from stacks.plan.stack import plan_stack
from stacks.validate.load import decode_config, load_spec

P6E = read_stack_file(PROJECT_ROOT / "Pulumi.eks-p6e-gb200.yaml")
START = dt.datetime(2030, 6, 3, 11, 30, tzinfo=dt.timezone.utc)  # the example's window start


def _group(now: dt.datetime, cfg: dict | None = None):
    spec, _ = load_spec(decode_config(copy.deepcopy(cfg or P6E)))
    return plan_stack(spec, load_catalog(), now).pools["gb200"].eks


def test_before_the_block_the_group_is_created_at_zero_and_the_schedule_fills_it():
    eks = _group(START - dt.timedelta(days=1))
    assert eks.scaling_config == {"min_size": 0, "desired_size": 0, "max_size": 18}
    assert [(a.role, a.min_size, a.desired) for a in eks.schedule] == [("scale-up", 18, 18), ("scale-down", 0, 0)]


def test_during_the_block_an_update_keeps_min_and_desired_at_the_whole_block():
    eks = _group(START + dt.timedelta(days=3))
    assert eks.scaling_config == {"min_size": 18, "desired_size": 18, "max_size": 18}
    # the schedule owns desiredSize too: ignoring it would send the created 0 next to min 18
    assert "scalingConfig.desiredSize" not in eks.ignore_changes
    assert [a.role for a in eks.schedule] == ["scale-down"]


def test_groups_the_autoscaler_sizes_keep_desired_size_ignored_and_min_nodes():
    cfg = copy.deepcopy(P6E)
    cfg["gpu-cluster:nodePools"][0]["multiNode"] = False  # no ComputeDomain claim: the autoscaler scales it
    cfg["gpu-cluster:scheduling"]["topology"] = {"mode": "none"}
    eks = _group(START + dt.timedelta(days=3), cfg)
    assert eks.scaling_config == {"min_size": 0, "desired_size": 0, "max_size": 18}
    assert "scalingConfig.desiredSize" in eks.ignore_changes


def test_roll_nodes_during_the_block_asks_for_zero_so_eks_can_upgrade_the_group():
    cfg = copy.deepcopy(P6E)
    cfg["gpu-cluster:nodePools"][0]["capacity"]["rollNodes"] = True
    eks = _group(START + dt.timedelta(days=3), cfg)
    assert eks.scaling_config == {"min_size": 0, "desired_size": 0, "max_size": 18}
    assert "scalingConfig.desiredSize" not in eks.ignore_changes  # sent: the 0 EKS's upgrade needs
