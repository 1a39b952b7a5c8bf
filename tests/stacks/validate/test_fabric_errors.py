"""The fabric setting: each row pins the exact message a user reads (config path, value, allowed, fix) for a bad
fabric setting, and the warning that names the bandwidth a multi-node pool gives up with ``mode: off``."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from tests.support.spec.edit import edit, edits
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec

GKE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-east4",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
    "nodePools": [
        {"name": "mega", "machineType": "a3-megagpu-8g", "zones": ["us-east4-a"], "maxNodes": 4, "multiNode": True}
    ],
}
EKS: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {
        "name": "ml-train",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [
        {"name": "p5", "machineType": "p5.48xlarge", "zones": ["us-east-1a"], "maxNodes": 4, "multiNode": True}
    ],
}


def nets(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"network": n, "subnetwork": s} for n, s in pairs]


RDMA_OK = nets(("gvnic", "gvnic-sub"), *((("roce", f"roce-sub-{i}")) for i in range(8)))
A4 = {"name": "h200", "machineType": "a3-ultragpu-8g", "zones": ["us-east4-b"], "maxNodes": 4, "multiNode": True}
GKE_A4 = edit(GKE, "nodePools[0]", A4)


def case(config: dict[str, Any], expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(config, textwrap.dedent(expected).strip("\n"), id=id)


ERRORS = [
    case(
        edit(GKE, "nodePools[0].fabric", {"mode": "auto", "networks": nets(("a", "b"))}),
        """
        error: gpu-cluster:nodePools[0].fabric.networks: pool 'mega': networks are only read with fabric mode existing
          received: ["a/b"]
          allowed:  an empty list with mode auto (gpu-cluster creates the networks)
          fix:      set fabric.mode: existing to attach these networks, or remove networks""",
        id="networks-without-existing",
    ),
    case(
        edit(EKS, "nodePools[0].fabric", {"mode": "existing"}),
        """
        error: gpu-cluster:nodePools[0].fabric.mode: pool 'p5': existing networks are a GKE setting: EKS pools carry EFA interfaces on their own subnets
          received: 'existing'
          allowed:  auto, off
          fix:      set fabric.mode: auto (every EFA interface, on the pool's subnets) or off""",
        id="existing-on-eks",
    ),
    case(
        edit(EKS, "nodePools[0].fabric", {"mode": "offf"}),
        """
        error: gpu-cluster:nodePools[0].fabric.mode: pool 'p5': not one of the allowed values
          received: 'offf'
          allowed:  auto, off, existing, managed
          fix:      did you mean 'off'?""",
        id="typo",
    ),
    case(
        edits(
            GKE,
            {
                "nodePools[0].machineType": "g2-standard-24",
                "nodePools[0].multiNode": False,
                "nodePools[0].fabric": {"mode": "existing"},
            },
        ),
        """
        error: gpu-cluster:nodePools[0].fabric.mode: pool 'mega': g2-standard-24 has no GPU fabric to attach networks for
          received: 'existing'
          allowed:  a fabric-capable machine type: a3-highgpu-8g, a3-megagpu-8g, a3-ultragpu-8g, a4-highgpu-8g, a4x-highgpu-4g
          fix:      remove fabric from this pool, or pick a fabric-capable machine type""",
        id="no-fabric-machine",
    ),
    case(
        edit(
            GKE, "nodePools[0].fabric", {"mode": "existing", "networks": nets(*((f"n{i}", f"s{i}") for i in range(5)))}
        ),
        """
        error: gpu-cluster:nodePools[0].fabric.networks: pool 'mega': GPUDirect-TCPXO on a3-megagpu-8g needs 8 extra networks, got 5
          received: ["n0/s0", "n1/s1", "n2/s2", "n3/s3", "n4/s4"]
          allowed:  8 entries in NIC order (vpc1, vpc2, vpc3, vpc4, vpc5, vpc6, vpc7, vpc8), each its own VPC
          fix:      list 8 {network, subnetwork} pairs, or use mode auto to have gpu-cluster create them""",
        id="tcpxo-needs-8",
    ),
    case(
        edit(
            GKE,
            "nodePools[0].fabric",
            {"mode": "existing", "networks": nets(*((f"n{i % 7}", f"s{i}") for i in range(8)))},
        ),
        """
        error: gpu-cluster:nodePools[0].fabric.networks: pool 'mega': gVNIC networks must each be a separate VPC; n0 is listed more than once
          received: ["n0/s0", "n1/s1", "n2/s2", "n3/s3", "n4/s4", "n5/s5", "n6/s6", "n0/s7"]
          allowed:  one VPC network per gVNIC NIC
          fix:      create one VPC per GPU NIC (GKE attaches one interface per VPC)""",
        id="gvnic-vpc-twice",
    ),
    case(
        edit(GKE_A4, "nodePools[0].fabric", {"mode": "existing", "networks": RDMA_OK[:5]}),
        """
        error: gpu-cluster:nodePools[0].fabric.networks: pool 'h200': GPUDirect RDMA (RoCE) on a3-ultragpu-8g needs 9 extra networks, got 5
          received: ["gvnic/gvnic-sub", "roce/roce-sub-0", "roce/roce-sub-1", "roce/roce-sub-2", "roce/roce-sub-3"]
          allowed:  9 entries in NIC order (gvnic-1, rdma-0, rdma-1, rdma-2, rdma-3, rdma-4, rdma-5, rdma-6, rdma-7): 1 gVNIC network, then the 8 subnets of one RoCE VPC
          fix:      list 9 {network, subnetwork} pairs, or use mode auto to have gpu-cluster create them""",
        id="rdma-needs-9",
    ),
    case(
        edit(GKE_A4, "nodePools[0].fabric", {"mode": "existing", "networks": RDMA_OK[:8] + nets(("other", "x"))}),
        """
        error: gpu-cluster:nodePools[0].fabric.networks: pool 'h200': the 8 RDMA subnets must belong to one RoCE VPC
          received: ["gvnic/gvnic-sub", "roce/roce-sub-0", "roce/roce-sub-1", "roce/roce-sub-2", "roce/roce-sub-3", "roce/roce-sub-4", "roce/roce-sub-5", "roce/roce-sub-6", "other/x"]
          allowed:  entries 2-9 with the same network (created with the zone's -vpc-roce network profile)
          fix:      list the 8 subnets of your RoCE VPC after the gVNIC network""",
        id="rdma-one-roce-vpc",
    ),
    case(
        edit(
            GKE_A4,
            "nodePools",
            [
                A4,
                {
                    **A4,
                    "name": "h200-b",
                    "zones": ["us-east4-a"],
                    "zoneAvailabilityOverride": {"zones": ["us-east4-a"], "reason": "reservation in us-east4-a"},
                },
            ],
        ),
        """
        error: gpu-cluster:nodePools[1].zones: pool 'h200-b': RDMA pools share one RoCE VPC, which is bound to one zone, but this pool is in us-east4-a and pool 'h200' in us-east4-b
          received: ["us-east4-a"]
          allowed:  us-east4-b
          fix:      put this pool in the zone of pool 'h200'""",
        id="rdma-pools-one-zone",
    ),
    case(
        edit(
            GKE,
            "nodePools",
            [
                *GKE["nodePools"],
                {
                    "name": "mega-b",
                    "machineType": "a3-megagpu-8g",
                    "zones": ["us-east4-a"],
                    "maxNodes": 2,
                    "multiNode": True,
                    "fabric": {"mode": "existing", "networks": nets(*((f"n{i}", f"s{i}") for i in range(8)))},
                },
            ],
        ),
        """
        error: gpu-cluster:nodePools[1].fabric: pool 'mega-b': GPUDirect-TCPXO pools of one cluster share its Network objects, but this pool attaches other networks than pool 'mega'
          received: {"mode": "existing", "networks": ["n0/s0", "n1/s1", "n2/s2", "n3/s3", "n4/s4", "n5/s5", "n6/s6", "n7/s7"]}
          allowed:  the same fabric setting as pool 'mega'
          fix:      copy pool 'mega's fabric setting, or move this pool to its own cluster""",
        id="one-network-set-per-kind",
    ),
]


@pytest.mark.parametrize("config,expected", ERRORS)
def test_bad_fabric_settings_are_refused_with_the_exact_message(config, expected):
    with pytest.raises(SpecError) as exc:
        load_spec(config)
    assert [str(i) for i in exc.value.errors] == [expected]


@pytest.mark.parametrize(
    "base,bandwidth",
    [
        (GKE, "1,600 Gbps of GPUDirect-TCPXO"),
        (EKS, "3,200 Gbps of EFA"),
        (GKE_A4, "3,200 Gbps of GPUDirect RDMA (RoCE)"),
    ],
    ids=["tcpxo", "efa", "rdma"],
)
def test_fabric_off_on_a_multi_node_pool_warns_with_the_bandwidth_lost(base, bandwidth):
    _, warnings = load_spec(edit(base, "nodePools[0].fabric", {"mode": "off"}))
    name, machine = base["nodePools"][0]["name"], base["nodePools"][0]["machineType"]
    assert [str(w) for w in warnings] == [
        textwrap.dedent(f"""\
        warning: gpu-cluster:nodePools[0].fabric.mode: pool '{name}': fabric off on a multi-node pool: NCCL traffic between its {machine} nodes uses the primary NIC only, giving up {bandwidth} per node
          received: 'off'
          allowed:  auto, existing
          fix:      remove `fabric` (mode auto) unless the pool never runs jobs across nodes; the policy pack reports the pool as topology-fabric-missing (mandatory) until it gets its fabric or a waiver""")
    ]


def test_off_on_a_single_node_pool_and_valid_settings_say_nothing():
    assert load_spec(edits(GKE, {"nodePools[0].multiNode": False, "nodePools[0].fabric": {"mode": "off"}}))[1] == []
    assert load_spec(edit(GKE_A4, "nodePools[0].fabric", {"mode": "existing", "networks": RDMA_OK}))[1] == []
    tcpxo = nets(*((f"n{i}", f"s{i}") for i in range(8)))
    assert load_spec(edit(GKE, "nodePools[0].fabric", {"mode": "existing", "networks": tcpxo}))[1] == []
