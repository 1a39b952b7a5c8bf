"""The manager's egress addresses end to end, through the program as recorded: the GKE manager reserves its static NAT
address and its Cloud NAT uses only it; the manager exports them as ``fleetEgressAddresses``; a worker with
``fleet.manager`` reads that output through a StackReference and admits it in its API's authorized networks (GKE
master authorized networks, EKS public access CIDRs). Offline the manager's addresses do not exist yet, so the worker
records only its literal networks; fed a deployed manager's output, the same program admits it."""

from __future__ import annotations

import pytest

from preview.engine import run_program
from stacks.spec.fleet import EGRESS_OUTPUT
from tests.support.spec.fleet_configs import encoded, raw, stack_config
from tests.support.helm.examples import recording
from tests.support.spec.edit import DELETE, edits

MANAGER = "acme/gpu-cluster/fleet"
DEPLOYED = ["198.51.100.77/32", "198.51.100.78/32"]
"""The manager's addresses once it is deployed (what its stack output then holds)."""


def one(resources, typ: str):
    found = [r for r in resources if r.type == typ]
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def test_the_gke_manager_reserves_its_nat_address_and_uses_only_it():
    rec = recording("fleet")
    addresses = [r for r in rec.resources if r.type == "gcp:compute/address:Address"]
    assert [a.name for a in addresses] == ["fleet-manager-egress-ip-0"]
    assert addresses[0].inputs["addressType"] == "EXTERNAL" and addresses[0].inputs["region"] == "us-central1"
    nat = one(rec.resources, "gcp:compute/routerNat:RouterNat").inputs
    assert nat["natIpAllocateOption"] == "MANUAL_ONLY" and len(nat["natIps"]) == 1
    assert EGRESS_OUTPUT in rec.outputs  # offline the address has no value yet: the list is empty, never invented
    assert rec.outputs[EGRESS_OUTPUT] == []


def test_more_reserved_addresses_and_a_declared_egress():
    three = run_program(
        encoded(edits(raw("fleet"), {("fleet", "egressAddresses"): 3})), "fleet", stack_references=recording_refs()
    )
    assert len([r for r in three.resources if r.type == "gcp:compute/address:Address"]) == 3
    assert len(one(three.resources, "gcp:compute/routerNat:RouterNat").inputs["natIps"]) == 3
    declared = run_program(
        encoded(
            edits(raw("fleet"), {("fleet", "egressAddresses"): DELETE, ("fleet", "egressCidrs"): ["203.0.113.7/32"]})
        ),
        "fleet",
        stack_references=recording_refs(),
    )
    assert [r for r in declared.resources if r.type == "gcp:compute/address:Address"] == []
    assert one(declared.resources, "gcp:compute/routerNat:RouterNat").inputs["natIpAllocateOption"] == "AUTO_ONLY"
    assert declared.outputs[EGRESS_OUTPUT] == ["203.0.113.7/32"]


def recording_refs() -> dict:
    """The workers' outputs as the manager's preview resolves them."""
    return {f"acme/gpu-cluster/{w}": recording(w).outputs for w in ("fleet-gke", "fleet-eks")}


def _gke_networks(rec) -> list[tuple[str, str]]:
    cluster = one(rec.resources, "gcp:container/cluster:Cluster").inputs
    return [(b["cidrBlock"], b["displayName"]) for b in cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"]]


def test_gke_worker_admits_the_deployed_managers_addresses():
    offline = recording("fleet-gke")
    assert _gke_networks(offline) == [("198.51.100.0/24", "authorized-0")]  # the manager's address: unknown here
    deployed = run_program(
        stack_config("fleet-gke"), "fleet-gke", stack_references={MANAGER: {EGRESS_OUTPUT: DEPLOYED}}
    )
    assert _gke_networks(deployed) == [
        ("198.51.100.0/24", "authorized-0"),
        (DEPLOYED[0], "fleet-manager-0"),
        (DEPLOYED[1], "fleet-manager-1"),
    ]
    cluster = one(deployed.resources, "gcp:container/cluster:Cluster").inputs
    assert cluster["privateClusterConfig"]["enablePrivateEndpoint"] is False


def _eks_access(rec) -> tuple[bool, list[str] | None]:
    vpc = one(rec.resources, "aws:eks/cluster:Cluster").inputs["vpcConfig"]
    return vpc["endpointPublicAccess"], vpc.get("publicAccessCidrs")


def test_eks_worker_admits_the_deployed_managers_addresses():
    assert _eks_access(recording("fleet-eks")) == (True, ["198.51.100.0/24"])
    deployed = run_program(
        stack_config("fleet-eks"), "fleet-eks", stack_references={MANAGER: {EGRESS_OUTPUT: DEPLOYED}}
    )
    assert _eks_access(deployed) == (True, ["198.51.100.0/24", *DEPLOYED])


@pytest.mark.parametrize("manager_output", [{}, {EGRESS_OUTPUT: DEPLOYED}])
def test_eks_worker_with_only_the_manager_never_opens_its_endpoint_to_everyone(manager_output):
    """EKS reads an empty publicAccessCidrs as 0.0.0.0/0: before the manager exists the endpoint stays private."""
    config = encoded(edits(raw("fleet-eks"), {("cluster", "authorizedNetworks"): DELETE}), base="fleet-eks")
    rec = run_program(config, "fleet-eks", stack_references={MANAGER: manager_output})
    assert _eks_access(rec) == ((True, DEPLOYED) if manager_output else (False, None))


def test_an_eks_manager_reads_its_nat_gateways_and_reserves_nothing():
    manager = edits(
        raw("fleet"),
        {
            "cloud": "aws",
            "region": "us-east-1",
            "accountId": "123456789012",
            "project": DELETE,
            ("fleet", "egressAddresses"): DELETE,
            ("cluster", "kubernetesVersion"): "1.35",
            ("cluster", "network"): DELETE,
            ("cluster", "subnetwork"): DELETE,
            ("cluster", "cloudNat"): DELETE,
            ("cluster", "subnets"): {
                "us-east-1a": "subnet-0a1b2c3d4e5f60011",
                "us-east-1b": "subnet-0a1b2c3d4e5f60012",
            },
        },
    )
    rec = run_program(encoded(manager, base="fleet-eks"), "fleet", stack_references=recording_refs())
    assert [r for r in rec.resources if r.type.startswith(("gcp:", "aws:ec2/eip", "aws:ec2/natGateway"))] == []
    assert (
        rec.outputs[EGRESS_OUTPUT] == []
    )  # offline the lookups find nothing (tests/components/eks/test_fleet_egress_lookup.py)
    assert one(rec.resources, "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig").inputs["spec"]["clusters"] == [
        "gke",
        "eks",
    ]  # the program ran through to the manager's objects
