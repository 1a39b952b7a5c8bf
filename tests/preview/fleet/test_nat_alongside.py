"""Stacks of one Pulumi project deployed together (``python -m preview --stack X --with Y,Z``): two gpu-cluster Cloud
NATs over all subnetworks of one project, region and network are refused before anything is created (GCP allows one
such NAT per network and region: `gcp-cloud-nat-all-subnetworks` in catalog/data/cloud-limits.csv), naming both
stacks; the shipped fleet worker has its own network, so it deploys beside the other examples of its project."""

from __future__ import annotations

from pathlib import Path

import yaml

from preview.__main__ import main
from preview.engine import PROJECT_ROOT, read_stack_file
from preview.fleet.stack_files import FolderStackFiles
from preview.run import preview_config
from stacks.plan.fleet_egress import nat_scope
from stacks.validate.load import decode_config
from stacks.validate.planned import load_planned


def scope(stack: str) -> dict | None:
    planned = load_planned(decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")), stack_name=stack)
    return nat_scope(planned.spec.cloud.value, planned.plan.cluster)


def copy_stack(tmp_path: Path, source: str, name: str) -> dict:
    config = read_stack_file(PROJECT_ROOT / f"Pulumi.{source}.yaml")
    (tmp_path / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))
    return config


def test_the_fleet_worker_no_longer_shares_gke_kueues_nat_on_the_default_network():
    assert scope("gke-kueue") == {"project": "ml-platform-prod", "region": "us-central1", "network": "default"}
    assert scope("fleet-gke") == {"project": "ml-platform-prod", "region": "us-central1", "network": "fleet-gke"}
    assert main(["--stack", "fleet-gke", "--with", "gke-kueue,fleet", "--no-policies", "--format", "json"]) == 0


def test_two_stacks_with_one_nat_scope_deployed_together_are_exit_2_naming_both(tmp_path):
    config = copy_stack(tmp_path, "gke-kueue", "team-a")
    copy_stack(tmp_path, "gke-kueue", "team-b")
    rep = preview_config("team-a", config, stack_files=FolderStackFiles(tmp_path), alongside=["team-b"])
    assert rep.exit_code == 2 and rep.resources == []
    (err,) = rep.errors
    assert err.path == "gpu-cluster:cluster.network"
    assert (
        "stacks team-a and team-b would each create a Cloud NAT over all subnetworks of project ml-platform-prod, "
        "region us-central1, network default" in err.problem
    )
    assert "must be the only Cloud NAT of its VPC network in its region" in err.problem
    assert "Pulumi.team-b.yaml" in (err.fix or "") and "cluster.cloudNat: true" in (err.fix or "")


def test_a_stack_listed_with_that_has_no_file_is_exit_2(tmp_path, capsys):
    config = copy_stack(tmp_path, "gke-kueue", "team-a")
    rep = preview_config("team-a", config, stack_files=FolderStackFiles(tmp_path), alongside=["nowhere"])
    assert rep.exit_code == 2 and "no stack file Pulumi.nowhere.yaml" in rep.errors[0].problem
    assert main(["--stack", "gke-kueue", "--with", "nowhere"]) == 2
    assert "no stack file Pulumi.nowhere.yaml" in capsys.readouterr().out


def test_stacks_in_other_networks_regions_or_clouds_pass(tmp_path):
    config = copy_stack(tmp_path, "gke-kueue", "team-a")
    for name, key, value in (
        ("team-b", "cluster", {"name": "b", "network": "team-b", "subnetwork": "team-b-us-central1", "cloudNat": True}),
        ("team-d", "project", "another-project"),
    ):
        other = copy_stack(tmp_path, "gke-kueue", name)
        other[f"gpu-cluster:{key}"] = value
        (tmp_path / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": other}))
    copy_stack(tmp_path, "eks-kueue", "team-c")  # EKS: gpu-cluster makes no Cloud NAT there
    rep = preview_config(
        "team-a", config, stack_files=FolderStackFiles(tmp_path), alongside=["team-b", "team-c", "team-d"]
    )
    assert rep.errors == [], rep.errors
    assert preview_config("team-a", config, stack_files=FolderStackFiles(tmp_path), alongside=["team-a"]).errors == []
