"""Node settings of GKE fabric pools as the program registers them (under mocks): cluster-toolkit's TCP buffer
sysctls through ``linux_node_config`` on fabric pools only (other pools are left as they are)."""
from __future__ import annotations

from preview.engine import run_program
from stacks.fabric import GPU_TCP_SYSCTLS
from tests.support.edit import edits
from tests.support.recorded import one
from tests.support.stack_configs import GKE

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
