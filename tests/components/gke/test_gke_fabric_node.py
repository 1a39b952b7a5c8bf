"""Node settings of GKE fabric pools as the program registers them (under mocks): cluster-toolkit's TCP buffer
sysctls through ``linux_node_config`` on fabric pools only (other pools are left as they are), and compact placement
that names the placement policy a specific reservation was created with."""

from __future__ import annotations

from preview.engine import run_program
from stacks.plan.fabric import GPU_TCP_SYSCTLS
from tests.support.spec.edit import edits
from tests.support.preview.recorded import one
from tests.support.spec.stack_configs import GKE

NODE_POOL = "gcp:container/nodePool:NodePool"


def test_fabric_pool_gets_cluster_toolkits_tcp_buffer_sysctls():
    rec = run_program(GKE)
    sysctls = one(rec, NODE_POOL, "h100").inputs["nodeConfig"]["linuxNodeConfig"]["sysctls"]
    assert sysctls == {"net.ipv4.tcp_rmem": "4096 87380 16777216", "net.ipv4.tcp_wmem": "4096 16384 16777216"}
    assert sysctls == GPU_TCP_SYSCTLS
    assert "linuxNodeConfig" not in one(rec, NODE_POOL, "ml-system").inputs["nodeConfig"]


def test_pools_without_a_fabric_keep_the_kernel_defaults():
    rec = run_program(edits(GKE, {"nodePools[0].multiNode": False}))
    assert "linuxNodeConfig" not in one(rec, NODE_POOL, "h100").inputs["nodeConfig"]


RESERVED = {
    "nodePools[0].capacity": {"type": "reservation", "reservation": "h100-res"},
    "nodePools[0].minNodes": 4,
    "nodePools[0].upgrade": {"maxSurge": 0, "maxUnavailable": 1},
}


def test_a_reservation_pool_names_the_reservations_placement_policy():
    rec = run_program(edits(GKE, {**RESERVED, "nodePools[0].capacity.placementPolicy": "h100-compact"}))
    pool = one(rec, NODE_POOL, "h100").inputs
    assert pool["placementPolicy"] == {"type": "COMPACT", "policyName": "h100-compact"}
    assert pool["nodeConfig"]["reservationAffinity"]["values"] == ["h100-res"]


def test_without_a_policy_name_compact_placement_is_plain_and_single_node_pools_get_none():
    assert one(run_program(edits(GKE, RESERVED)), NODE_POOL, "h100").inputs["placementPolicy"] == {"type": "COMPACT"}
    single = run_program(edits(GKE, {"nodePools[0].multiNode": False}))
    assert "placementPolicy" not in one(single, NODE_POOL, "h100").inputs
