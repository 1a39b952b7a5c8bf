"""One Cloud NAT per project, region and VPC network across a fleet's stack files: GCP allows no second NAT beside
one over all subnetworks (catalog/data/cloud-limits.csv), so a manager and a GKE worker sharing the `default` network
would fail at the second `pulumi up`; the preview refuses that before anything is created (exit 2)."""

from __future__ import annotations

from preview.run import preview_config
from stacks.validate.fleet_nat import shared_nat_issues
from tests.support.spec.fleet_configs import encoded, raw

SCOPE = {"project": "ml-platform-prod", "region": "us-central1", "network": "default"}


def test_a_manager_sharing_the_workers_network_is_exit_2_citing_the_gcp_limit():
    manager = raw("fleet")
    manager["cluster"]["network"] = "fleet-gke"  # the manager in the GKE worker's network
    rep = preview_config("fleet", encoded(manager))
    assert rep.exit_code == 2 and rep.resources == []
    (err,) = rep.errors
    assert err.path == "gpu-cluster:fleet.workers[0].stack"
    assert "worker 'gke' (stack fleet-gke) and the manager" in err.problem
    assert "must be the only Cloud NAT of its VPC network in its region" in err.problem and "RouterNat" in err.problem
    assert "cluster.network" in (err.fix or "")


def test_the_shipped_manager_has_its_own_network_so_no_two_nats_share_one():
    rep = preview_config("fleet", encoded(raw("fleet")))
    assert rep.exit_code == 0 and rep.errors == []
    routers = [r for r in rep.resources if r.type == "gcp:compute/router:Router"]
    assert [r.inputs["network"] for r in routers] == ["fleet-manager"]


def test_two_workers_in_one_network_and_region_are_refused_and_other_regions_are_not():
    other = dict(SCOPE, region="europe-west4")
    issues = shared_nat_issues(
        None,
        [(0, "a", "fleet-a", SCOPE), (1, "b", "fleet-b", SCOPE), (2, "c", "fleet-c", other), (3, "d", "fleet-d", None)],
    )
    assert [i.path for i in issues] == ["gpu-cluster:fleet.workers[1].stack"]
    assert "worker 'b' (stack fleet-b) and worker 'a' (stack fleet-a)" in issues[0].problem


def test_only_a_gke_cluster_gpu_cluster_creates_has_a_nat_scope():
    from dataclasses import dataclass

    from stacks.plan.fleet_egress import nat_scope

    @dataclass
    class Cluster:  # the ClusterPlan fields nat_scope reads
        cloud_nat: bool
        create: bool
        project: str = "p"
        region: str = "r"
        network: str | None = None

    assert nat_scope("gcp", Cluster(True, True)) == {"project": "p", "region": "r", "network": "default"}
    assert nat_scope("gcp", Cluster(True, False)) is None  # an existing cluster: its NAT is not made here
    assert nat_scope("gcp", Cluster(False, True)) is None and nat_scope("aws", Cluster(True, True)) is None
