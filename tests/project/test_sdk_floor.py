"""The SDK floor of the benchmarks (``bench/sdk_floor.py``) registers each recorded resource through the provider class
the program used: every type token of every example maps to that class (a wrong map would time another class or
fail half-way through a benchmark run)."""

from __future__ import annotations

import pytest

from bench.sdk_floor import class_path, provider_class
from preview.engine import PROJECT_ROOT, read_stack_file, run_program


@pytest.mark.parametrize(
    "token, expected",
    [
        ("gcp:container/nodePool:NodePool", ("pulumi_gcp.container", "NodePool")),
        ("aws:eks/nodeGroup:NodeGroup", ("pulumi_aws.eks", "NodeGroup")),
        ("kubernetes:helm.sh/v3:Release", ("pulumi_kubernetes.helm.v3", "Release")),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", ("pulumi_kubernetes.rbac.v1", "ClusterRole")),
        ("kubernetes:apiextensions.k8s.io:CustomResource", ("pulumi_kubernetes.apiextensions", "CustomResource")),
        ("random:index/randomBytes:RandomBytes", ("pulumi_random", "RandomBytes")),
        ("pulumi:providers:kubernetes", ("pulumi_kubernetes", "Provider")),
    ],
)
def test_class_path(token, expected):
    assert class_path(token) == expected


@pytest.mark.parametrize("stack", ["gke-h100-512", "eks-p5-efa"])
def test_every_registered_type_resolves_to_the_class_the_program_used(stack):
    rec = run_program(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"), stack)
    for r in rec.resources:
        if r.custom:
            assert isinstance(provider_class(r.type), type), r.type
    crds = {r.type for r in rec.resources if r.type == "kubernetes:networking.gke.io/v1:Network"}
    assert stack != "gke-h100-512" or [provider_class(t).__name__ for t in crds] == ["CustomResource"]


@pytest.mark.slow
def test_a_fleet_managers_floor_registers_its_workers_programs_too(tmp_path):
    """The manager's preview runs each worker's program to answer its StackReferences, so the floor registers the
    workers' resources as well (each under its own stack name, before the manager's), not only the manager's."""
    from bench.sdk_floor import record, replay, resource_count
    import json

    out = tmp_path / "fleet.json"
    record("fleet", PROJECT_ROOT / "Pulumi.fleet.yaml", out)
    data = json.loads(out.read_text())
    workers = {w["stack"]: len(w["resources"]) for w in data["workers"]}
    assert sorted(workers) == ["fleet-eks", "fleet-gke"]
    for name, count in workers.items():  # the same program the worker's own preview runs
        config = read_stack_file(PROJECT_ROOT / f"Pulumi.{name}.yaml")
        assert count == len(run_program(config, name).resources) > 0
    assert resource_count(data) == len(data["resources"]) + sum(workers.values())
    assert replay(out) == resource_count(data)
