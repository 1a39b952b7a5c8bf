"""Bad fleet sections: each row breaks one of the example's stacks once; the user reads the config path, the problem,
what is allowed and the fix, and nothing is created (exit 2)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.spec.fleet_configs import raw
from tests.support.spec.edit import DELETE, edits
from stacks.validate.issues import SpecError
from stacks.validate.load import load_spec


def errors(config: dict[str, Any], stack: str = "fleet") -> list[str]:
    with pytest.raises(SpecError) as exc:
        load_spec(config, stack_name=stack)
    return [str(e) for e in exc.value.errors]


def one(config: dict[str, Any], path: str, *words: str, stack: str = "fleet") -> str:
    found = errors(config, stack)
    matches = [e for e in found if e.startswith(f"error: gpu-cluster:{path}:")]
    assert len(matches) == 1, found
    match = matches[0]
    for word in words:
        assert word in match, match
    assert "  fix:" in match and "  allowed:" in match, match
    return match


def test_the_examples_are_valid_and_a_manager_needs_no_gpu_pool():
    spec, _ = load_spec(raw("fleet"), stack_name="fleet")
    assert spec.node_pools == [] and spec.fleet is not None and len(spec.fleet.workers) == 2
    for worker in ("fleet-gke", "fleet-eks"):
        assert load_spec(raw(worker), stack_name=worker)[0].fleet.role.value == "worker"


def test_a_worker_needs_a_gpu_pool():
    found = errors(edits(raw("fleet-gke"), {"nodePools": DELETE}), "fleet-gke")
    assert any(e.startswith("error: gpu-cluster:nodePools: required setting is missing") for e in found), found


def test_a_standalone_stack_still_needs_a_gpu_pool():
    config = edits(raw("fleet-gke"), {"nodePools": [], "fleet": DELETE})
    assert any("nodePools: must be a non-empty list" in e for e in errors(config, "x")), errors(config, "x")


def test_slurm_worker_is_refused_with_the_reason():
    config = raw("fleet-gke")
    config["scheduling"] = {
        "workload": "slurm",
        "queues": [{"name": "research", "quotas": [{"pool": "h100", "gpus": 8}]}],
    }
    one(config, "fleet.role", "a Slurm stack cannot be a MultiKueue worker", "workload: kubeflow", stack="fleet-gke")


def test_worker_without_scheduling_is_refused():
    one(edits(raw("fleet-gke"), {"scheduling": DELETE}), "fleet.role", "has no scheduling section", stack="fleet-gke")


def test_duplicate_worker_name_and_stack():
    config = edits(raw("fleet"), {("fleet", "workers", 1): {"name": "gke", "stack": "acme/gpu-cluster/fleet-gke"}})
    found = errors(config)
    assert [e.split("\n")[0] for e in found] == [
        "error: gpu-cluster:fleet.workers[1].name: worker name listed 2 times; MultiKueue needs unique clusters",
        "error: gpu-cluster:fleet.workers[1].stack: worker stack listed 2 times; MultiKueue needs unique clusters",
    ]


def test_manager_as_its_own_worker():
    config = edits(raw("fleet"), {("fleet", "workers", 1, "stack"): "acme/gpu-cluster/fleet"})
    one(config, "fleet.workers[1].stack", "the manager lists itself as a worker", "role sharing")


def test_more_than_twenty_workers():
    workers = [{"name": f"w{i}", "stack": f"acme/gpu-cluster/w{i}"} for i in range(21)]
    one(edits(raw("fleet"), {("fleet", "workers"): workers}), "fleet.workers", "21 workers", "at most 20")


def test_twenty_workers_are_fine():
    workers = [{"name": f"w{i}", "stack": f"acme/gpu-cluster/w{i}"} for i in range(20)]
    load_spec(edits(raw("fleet"), {("fleet", "workers"): workers}), stack_name="fleet")


def test_manager_without_workers():
    one(edits(raw("fleet"), {("fleet", "workers"): []}), "fleet.workers", "at least one worker")


def test_stack_name_must_be_fully_qualified():
    one(
        edits(raw("fleet"), {("fleet", "workers", 0, "stack"): "fleet-gke"}),
        "fleet.workers[0].stack",
        "not a fully qualified stack name",
        "<org>/<project>/<stack>",
    )


def test_manager_pool_with_queued_provisioning_is_refused():
    pool = {
        "name": "h100",
        "machineType": "a3-highgpu-8g",
        "zones": ["us-central1-a"],
        "maxNodes": 2,
        "capacity": {"type": "flex-start"},
    }
    one(
        edits(raw("fleet"), {"nodePools": [pool]}),
        "fleet.role",
        "pool 'h100' uses queued provisioning",
        "MultiKueueWithProvisioningRequest",
        "inactive",
    )


def test_manager_with_its_own_scheduling_section_is_refused():
    config = raw("fleet")
    config["nodePools"] = [{"name": "h100", "machineType": "a3-highgpu-8g", "zones": ["us-central1-a"], "maxNodes": 2}]
    config["scheduling"] = {
        "workload": "kubeflow",
        "queues": [{"name": "local", "quotas": [{"pool": "h100", "gpus": 8}]}],
    }
    one(config, "fleet.role", "a scheduling section would install a second set of queues")


def test_manager_only_settings_on_a_worker():
    one(
        edits(raw("fleet-gke"), {("fleet", "dispatcher"): "Incremental"}),
        "fleet.dispatcher",
        "only a fleet manager has this setting",
        stack="fleet-gke",
    )


def test_bad_egress_cidr_and_duplicate_queue():
    config = edits(
        raw("fleet"),
        {
            ("fleet", "egressCidrs"): ["203.0.113.7"],
            ("fleet", "egressAddresses"): DELETE,
            ("fleet", "queues", 1, "name"): "research",
        },
    )
    config["fleet"]["egressCidrs"] = ["203.0.113.7/33"]
    found = errors(config)
    assert any(e.startswith("error: gpu-cluster:fleet.egressCidrs[0]: not a CIDR") for e in found), found
    assert any(e.startswith("error: gpu-cluster:fleet.queues[1].name: queue listed twice") for e in found), found


@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "0.0.0.0/4", "::/0"])
def test_declared_egress_wider_than_a_slash_8_is_refused_as_every_worker_would_admit_it(cidr):
    config = edits(raw("fleet"), {("fleet", "egressCidrs"): [cidr], ("fleet", "egressAddresses"): DELETE})
    one(config, "fleet.egressCidrs[0]", "every worker's Kubernetes API would admit", "never 0.0.0.0/0")


def test_declared_egress_of_nat_addresses_is_accepted():
    load_spec(
        edits(
            raw("fleet"),
            {("fleet", "egressCidrs"): ["203.0.113.7/32", "198.51.100.0/28"], ("fleet", "egressAddresses"): DELETE},
        ),
        stack_name="fleet",
    )


@pytest.mark.parametrize("origin", ["multi kueue", "-fleet", "x" * 64, ""])
def test_an_origin_that_is_not_a_label_value_is_refused(origin):
    one(edits(raw("fleet"), {("fleet", "origin"): origin}), "fleet.origin", "not a Kubernetes label value")


def test_unknown_dispatcher_names_the_allowed_values():
    found = errors(edits(raw("fleet"), {("fleet", "dispatcher"): "RoundRobin"}))
    assert any("fleet.dispatcher" in e and "AllAtOnce" in e and "Incremental" in e for e in found), found


# ---- the manager's egress addresses: reserved (GKE), read from NAT gateways (EKS) or declared ----

EKS_MANAGER = {
    "cloud": "aws",
    "region": "us-east-1",
    "accountId": "123456789012",
    "project": DELETE,
    ("cluster", "network"): DELETE,
    ("cluster", "subnetwork"): DELETE,
    ("cluster", "cloudNat"): DELETE,
    ("cluster", "kubernetesVersion"): "1.35",
    ("cluster", "subnets"): {"us-east-1a": "subnet-0a1b2c3d4e5f60011", "us-east-1b": "subnet-0a1b2c3d4e5f60012"},
}


def test_the_example_manager_reserves_one_address_and_its_workers_reference_it():
    from stacks.plan.fleet_egress import EgressSource, egress_plan

    spec, _ = load_spec(raw("fleet"), stack_name="fleet")
    plan = egress_plan(spec.fleet, spec.cloud, spec.cluster)
    assert plan is not None and (plan.source, plan.count, plan.known_offline) == (EgressSource.RESERVED, 1, False)
    for worker in ("fleet-gke", "fleet-eks"):
        spec, _ = load_spec(raw(worker), stack_name=worker)
        assert (
            spec.fleet.manager == "acme/gpu-cluster/fleet" and egress_plan(spec.fleet, spec.cloud, spec.cluster) is None
        )


def test_egress_plan_per_cloud_and_declared():
    from stacks.plan.fleet_egress import EgressSource, egress_plan

    spec, _ = load_spec(edits(raw("fleet"), {**EKS_MANAGER, ("fleet", "egressAddresses"): DELETE}), stack_name="fleet")
    plan = egress_plan(spec.fleet, spec.cloud, spec.cluster)
    assert (plan.source, plan.subnets) == (
        EgressSource.NAT_GATEWAYS,
        ("subnet-0a1b2c3d4e5f60011", "subnet-0a1b2c3d4e5f60012"),
    )
    spec, _ = load_spec(
        edits(raw("fleet"), {("fleet", "egressCidrs"): ["203.0.113.7/32"], ("fleet", "egressAddresses"): DELETE}),
        stack_name="fleet",
    )
    plan = egress_plan(spec.fleet, spec.cloud, spec.cluster)
    assert (plan.source, plan.declared, plan.count, plan.known_offline) == (
        EgressSource.DECLARED,
        ("203.0.113.7/32",),
        0,
        True,
    )
    spec, _ = load_spec(edits(raw("fleet"), {("fleet", "egressAddresses"): 3}), stack_name="fleet")
    assert egress_plan(spec.fleet, spec.cloud, spec.cluster).count == 3


def test_reserved_and_declared_addresses_are_exclusive():
    one(
        edits(raw("fleet"), {("fleet", "egressCidrs"): ["203.0.113.7/32"]}),
        "fleet.egressAddresses",
        "both reserved NAT addresses and declared egressCidrs",
    )


def test_reserved_addresses_need_gpu_clusters_cloud_nat():
    own_network = {
        ("cluster", "network"): "corp-vpc",
        ("cluster", "subnetwork"): "gke",
        ("cluster", "cloudNat"): DELETE,
    }
    one(edits(raw("fleet"), own_network), "fleet.egressAddresses", "this cluster has none", "cluster.cloudNat: true")
    one(
        edits(raw("fleet"), {**own_network, ("fleet", "egressAddresses"): DELETE}),
        "fleet.egressCidrs",
        "its egress addresses are unknown",
        "cluster.cloudNat: true",
    )
    load_spec(edits(raw("fleet"), {**own_network, ("cluster", "cloudNat"): True}), stack_name="fleet")
    load_spec(
        edits(
            raw("fleet"),
            {**own_network, ("fleet", "egressAddresses"): DELETE, ("fleet", "egressCidrs"): ["203.0.113.7/32"]},
        ),
        stack_name="fleet",
    )


def test_zero_reserved_addresses_and_none_declared_is_refused():
    one(
        edits(raw("fleet"), {("fleet", "egressAddresses"): 0}),
        "fleet.egressAddresses",
        "ephemeral addresses no worker can admit",
    )
    found = errors(edits(raw("fleet"), {("fleet", "egressAddresses"): 17}))
    assert any(e.startswith("error: gpu-cluster:fleet.egressAddresses:") and "16" in e for e in found), found


def test_eks_manager_reads_nat_gateways_and_reserves_nothing():
    one(edits(raw("fleet"), EKS_MANAGER), "fleet.egressAddresses", "GKE only", "omitted (or 0) on EKS")
    eks = {**EKS_MANAGER, ("fleet", "egressAddresses"): DELETE}
    load_spec(edits(raw("fleet"), eks), stack_name="fleet")
    one(
        edits(raw("fleet"), {**eks, ("cluster", "mode"): "existing", ("cluster", "subnets"): {}}),
        "fleet.egressCidrs",
        "cluster.subnets is empty",
    )


def test_worker_manager_reference_is_checked():
    one(
        edits(raw("fleet-gke"), {("fleet", "manager"): "fleet"}),
        "fleet.manager",
        "not a fully qualified stack name",
        stack="fleet-gke",
    )
    one(
        edits(raw("fleet-gke"), {("fleet", "manager"): "acme/gpu-cluster/fleet-gke"}),
        "fleet.manager",
        "names itself as its manager",
        stack="fleet-gke",
    )
    one(
        edits(raw("fleet"), {("fleet", "manager"): "acme/gpu-cluster/fleet"}),
        "fleet.manager",
        "only a fleet worker has this setting",
    )


def test_existing_clusters_cannot_reserve_or_admit():
    one(
        edits(raw("fleet"), {("cluster", "mode"): "existing"}),
        "fleet.egressCidrs",
        "the manager is an existing cluster",
    )
    load_spec(
        edits(
            raw("fleet"),
            {
                ("cluster", "mode"): "existing",
                ("fleet", "egressAddresses"): DELETE,
                ("fleet", "egressCidrs"): ["203.0.113.7/32"],
            },
        ),
        stack_name="fleet",
    )
    one(
        edits(raw("fleet-gke"), {("cluster", "mode"): "existing"}),
        "fleet.manager",
        "an existing cluster's authorized networks are not gpu-cluster's to change",
        stack="fleet-gke",
    )
