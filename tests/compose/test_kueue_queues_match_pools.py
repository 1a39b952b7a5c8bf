"""Every kubeflow example stack's Kueue queues match its pools exactly as the program registers them (one
ResourceFlavor per pool, ClusterQueues as configured, flavors that exist). The import-direction guard that used to
live beside these is tests/project/test_architecture.py."""

from __future__ import annotations

import pytest

from stacks.plan.kueue_pods import SERVING_DEFAULT_CLUSTER_QUEUE
from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from stacks.validate.load import decode_config
from tests.support.preview.recorded import of_type

KUBEFLOW_STACKS = sorted(
    p.name[len("Pulumi.") : -len(".yaml")]
    for p in PROJECT_ROOT.glob("Pulumi.*.yaml")
    if (decode_config(read_stack_file(p)).get("scheduling") or {}).get("workload") == "kubeflow"
)


def test_there_is_a_gke_and_an_eks_kubeflow_example_with_two_or_more_teams():
    clouds = {}
    for stack in KUBEFLOW_STACKS:
        raw = decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"))
        if len(raw["scheduling"]["queues"]) >= 2:
            clouds.setdefault(raw["cloud"], []).append(stack)
    assert {"gcp", "aws"} <= set(clouds), KUBEFLOW_STACKS


@pytest.mark.parametrize("stack", KUBEFLOW_STACKS)
def test_registered_queues_match_the_stacks_pools_exactly(stack):
    config = read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml")
    raw = decode_config(config)
    rec = run_program(config, stack)
    pools = {p["name"] for p in raw["nodePools"]}
    serving = ["serving"] if raw.get("serving") else []  # serving's ClusterQueue joins the training cohort
    every_flavor = [r.redacted_inputs for r in of_type(rec, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")]
    # serving's pods that name no queue (endpoint pickers) land in a 0-GPU queue on a plain flavor of no pool
    plain = [f for f in every_flavor if not f["spec"].get("nodeLabels")]
    assert [f["metadata"]["name"] for f in plain] == ([SERVING_DEFAULT_CLUSTER_QUEUE] if serving else [])
    flavors = {f["spec"]["nodeLabels"]["gpu-cluster/pool"]: f for f in every_flavor if f not in plain}
    assert set(flavors) == pools
    assert all(f["metadata"]["name"].startswith(f"{pool}-") for pool, f in flavors.items())
    every_queue = of_type(rec, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
    queues = [q for q in every_queue if q.redacted_inputs["metadata"]["name"] != SERVING_DEFAULT_CLUSTER_QUEUE]
    assert len(every_queue) - len(queues) == len(serving)
    assert sorted(q.redacted_inputs["metadata"]["name"] for q in queues) == sorted(
        [q["name"] for q in raw["scheduling"]["queues"]] + serving
    )
    for q in queues:
        for group in q.redacted_inputs["spec"]["resourceGroups"]:
            assert {f["name"] for f in group["flavors"]} <= {f["metadata"]["name"] for f in flavors.values()}
    # one LocalQueue per ClusterQueue, and serving's namespace's "default" one (its pods that name no queue)
    assert len(of_type(rec, "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")) == len(queues) + len(serving)
    runtimes = {
        r.redacted_inputs["metadata"]["name"]
        for r in of_type(rec, "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime")
    }
    fleet = {n for n in runtimes if n.startswith("fleet-")}  # a fleet worker's runtimes per GPU model (docs/fleet.md)
    assert not fleet or (raw.get("fleet") or {}).get("role") == "worker"
    # GKE pools of several racks also get a runtime for gangs of whole racks (docs/nvl72.md)
    racks = {p["name"] for p in raw.get("nodePools") or [] if (p.get("racks") or 1) > 1}
    assert runtimes - fleet <= {f"torch-{p}" for p in pools} | {f"torch-{p}-block" for p in racks}
