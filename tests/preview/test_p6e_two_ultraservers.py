"""Two P6e-GB200 UltraServers (36 nodes, 144 GPUs) on EKS: the `eks-p6e-gb200` example with min/maxNodes 36, the two
capacity blocks' IDs in `capacity.reservations` and the fee of both, as docs/nvl72.md shows it. It previews with the
policies passing, renders one node group per UltraServer (an EKS managed node group on capacity blocks needs its
block's ID in the launch template), starts all 36 nodes at the block's start (no scale-from-zero for DRA pods), and
Slurm gets one topology block per UltraServer."""

from __future__ import annotations

import copy

import yaml

from preview.__main__ import main
from tests.conftest import PROJECT_ROOT

BLOCKS = ["cr-0123456789abcdef0", "cr-0123456789abcdef1"]


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
    capacity.update(reservations=BLOCKS, upfrontFeeUsd=511999.48)  # 2 x 72 GPUs x 336 h x $10.582
    cfg["config"]["gpu-cluster:scheduling"]["queues"][0]["quotas"][0]["gpus"] = 144
    return cfg


def test_two_ultraservers_preview_with_the_policies_passing(capsys, tmp_path):
    path = tmp_path / "Pulumi.p6e-x2.yaml"
    path.write_text(yaml.safe_dump(two_ultraservers(), sort_keys=False))
    assert main(["--stack", "p6e-x2", "--stack-file", str(path), "--format", "json"]) == 0
    report = yaml.safe_load(capsys.readouterr().out)
    assert report["exitCode"] == 0 and report["violations"] == [] and report["errors"] == []
    resources = {(r["type"].rsplit(":", 1)[-1], r["name"]): r["inputs"] for r in report["resources"]}
    groups = {n: inputs for (kind, n), inputs in resources.items() if kind == "NodeGroup" and n.startswith("gb200")}
    assert sorted(groups) == [
        "gb200-slurm-system",
        "gb200-us-0",
        "gb200-us-1",
    ]  # one managed node group per UltraServer block
    for i, block in enumerate(BLOCKS):
        lt = resources[("LaunchTemplate", f"gb200-us-{i}-lt")]
        target = lt["capacityReservationSpecification"]["capacityReservationTarget"]
        assert target == {"capacityReservationId": block}  # its own block's ID, as the EKS guide requires
        group = groups[f"gb200-us-{i}"]
        assert group["scalingConfig"]["maxSize"] == 18
        assert group["labels"]["gpu-cluster/pool"] == "gb200"  # one pool for Kueue, Slurm and the policies
        assert group["tags"]["gpu-cluster/reserved-nodes"] == "18"
        assert group["tags"]["gpu-cluster/capacity-block-usd"] == "255999.74"
        up = resources[("Schedule", f"gb200-us-{i}-scale-up")]
        assert (up["minSize"], up["desiredCapacity"], up["maxSize"]) == (18, 18, 18)  # each block's nodes at its start
        down = resources[("Schedule", f"gb200-us-{i}-scale-down")]
        assert (down["minSize"], down["desiredCapacity"], down["maxSize"]) == (0, 0, 0)
    assert "topology gb200: 2 blocks of 18 nodes" in str(report["queues"])  # one Slurm block per UltraServer
    (pool,) = report["cost"]["pools"]
    assert (pool["reserved_nodes"], pool["block"]["usdTotal"]) == (36, 511999.48)  # one pool: both blocks' fee


def test_a_reservation_group_on_an_eks_pool_exits_2_citing_the_eks_guide(capsys, tmp_path):
    cfg = two_ultraservers()
    capacity = cfg["config"]["gpu-cluster:nodePools"][0]["capacity"]
    capacity.pop("reservations")
    capacity["reservationGroup"] = "arn:aws:resource-groups:us-east-1:123456789012:group/gb200-ultraservers"
    path = tmp_path / "Pulumi.p6e-x2.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    assert main(["--stack", "p6e-x2", "--stack-file", str(path)]) == 2
    out = capsys.readouterr()
    err = out.out + out.err
    assert "capacity.reservationGroup" in err and "capacity-blocks-mng.html" in err


def test_each_ultraserver_group_registers_tainted_until_its_slurm_block_is_annotated(capsys, tmp_path):
    """Slinky copies the node's block annotation onto the slurmd pod when it binds: each group's nodes carry their
    block as a label and a startup taint the slurmd pods do not tolerate, which the annotator (list/patch nodes only,
    valid against the Kubernetes 1.35 schema) removes once it wrote the annotation."""
    from tests.support.helm.checks import object_errors

    path = tmp_path / "Pulumi.p6e-x2.yaml"
    path.write_text(yaml.safe_dump(two_ultraservers(), sort_keys=False))
    assert main(["--stack", "p6e-x2", "--stack-file", str(path), "--format", "json"]) == 0
    report = yaml.safe_load(capsys.readouterr().out)
    assert not [w for w in report.get("warnings", []) if "topology.slinky.slurm.net/spec" in str(w)]
    resources = {(r["type"], r["name"]): r["inputs"] for r in report["resources"]}
    taint = {"key": "startup-taint.cluster-autoscaler.kubernetes.io/slurm-topology", "value": "pending"}
    for i in range(2):
        group = resources[("aws:eks/nodeGroup:NodeGroup", f"gb200-us-{i}")]
        assert group["labels"]["gpu-cluster/slurm-block"] == f"gb200-b{i}"  # the block topology.yaml names
        assert {**taint, "effect": "NO_SCHEDULE"} in group["taints"]
    nodeset = resources[("kubernetes:helm.sh/v3:Release", "slurm-slurm")]["values"]["nodesets"]["gb200"]
    assert not [t for t in nodeset["podSpec"]["tolerations"] if "slurm-topology" in str(t)]  # slurmd waits for it
    objects = {k[1]: v for k, v in resources.items() if k[0].startswith("kubernetes:") and "block-annotator" in k[1]}
    kinds = {o["kind"] for o in objects.values()}
    assert kinds == {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment"}
    for obj in objects.values():
        assert object_errors(obj, {}) == []
    (role,) = [o for o in objects.values() if o["kind"] == "ClusterRole"]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "patch"]}]
    (deploy,) = [o for o in objects.values() if o["kind"] == "Deployment"]
    env = deploy["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "TOPOLOGIES", "value": '{"gb200": "gb200"}'}]
    # it may patch nodes: it runs by the digest the registry returns at deploy, not by a tag that can move
    image = deploy["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "docker.io/library/python:3.13-alpine3.22@sha256:resolved-at-deploy", image


def test_one_ultraserver_has_no_registration_taint_nothing_would_remove(capsys):
    """The annotator is rendered only where the taint is: a group tainted without it would never run slurmd."""
    assert main(["--stack", "eks-p6e-gb200", "--format", "json"]) == 0
    report = yaml.safe_load(capsys.readouterr().out)
    assert "slurm-topology" not in str(report["resources"]) and "block-annotator" not in str(report["resources"])


def test_the_registration_taint_is_a_violation_without_the_annotator_that_removes_it():
    """cross-layer-scheduler-tolerations lets slurmd pods not tolerate the registration taint only when the stack
    runs the annotator that removes it; otherwise the pods would wait forever."""
    from preview.engine import run_program
    from tests.support.policy.harness import Pack

    rule = "cross-layer-scheduler-tolerations"
    resources = list(run_program(two_ultraservers()["config"], "p6e-x2").resources)
    pack = Pack()
    assert not [d for d in pack.stack(resources) if d[0] == rule]
    without = [r for r in resources if r.name != "slurm-block-annotator-deployment"]
    assert len(without) == len(resources) - 1
    found = [d for d in pack.stack(without) if d[0] == rule]
    assert found and "startup-taint.cluster-autoscaler.kubernetes.io/slurm-topology" in str(found)
