"""The rendered serving objects of both examples (and a multi-node variant) against the staged upstream CRDs and the
Kubernetes schema, and what they must do: scale on vLLM's own signals, run above training's priority, be admitted
through serving's Kueue queue (which lends its idle GPUs and never borrows), and route through the InferencePool."""

from __future__ import annotations

import functools

import kubernetes_validate
import pytest

from catalog import load_catalog
from preview.engine import PROJECT_ROOT, read_stack_file
from render.kueue import render_kueue
from render.serving import render_serving
from stacks.plan.serving import SERVING_PRIORITY_CLASS, SERVING_QUEUE
from stacks.plan.stack import plan_stack
from stacks.validate.load import decode_config, load_spec
from tests.support.kube.crd_schemas import CRD_FILES, cel_errors, schema_errors
from tests.support.kube.schema import K8S_VERSION
from tests.support.spec.edit import edits

SVC = ("serving", "services", 0)


def _raw(stack: str) -> dict:
    return decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"))


# the GKE example with a second service whose replica spans two nodes (a LeaderWorkerSet)
_BIG = {
    "name": "big",
    "model": "llama-3.1-405b",
    "modelUri": "gs://ml-platform-prod-models/llama-3.1-405b-fp8",
    "precision": "fp8",
    "pool": "h100",
    "gpusPerReplica": 16,
    "nodesPerReplica": 2,
    "replicas": {"min": 1, "max": 1},
    "slo": {"ttftP99Ms": 6000, "tpotP99Ms": 175},
    "traffic": {"peakRequestsPerSecond": 0.5, "inputTokens": 2000, "outputTokens": 600},
    "maxConcurrency": 64,
}
MULTI_NODE = edits(
    _raw("gke-serving"),
    {
        ("serving", "services"): [_raw("gke-serving")["serving"]["services"][0], _BIG],
        ("scheduling", "queues", 0, "quotas", 0, "gpus"): 4,
        ("scheduling", "queues", 1, "quotas", 0, "gpus"): 4,
    },
)


@functools.cache
def _plan(stack: str):
    raw = MULTI_NODE if stack == "multi-node" else _raw(stack)
    spec, _ = load_spec(raw)
    return plan_stack(spec, load_catalog())


def _objects(stack: str):
    plan = _plan(stack)
    return render_serving(
        plan.spec.serving,
        {f.name: f for f in plan.facts},
        plan.cloud,
        plan.spec.region,
        plan.spec.project,
        plan.kueue is not None,
    )


STACKS = ["gke-serving", "eks-serving", "multi-node"]


@pytest.mark.parametrize("stack", STACKS)
def test_every_serving_object_validates_against_its_crd_or_the_kubernetes_schema(stack):
    objs = _objects(stack).objects()
    checked = 0
    for obj in objs:
        group = obj["apiVersion"].rpartition("/")[0]
        if (group, obj["kind"]) in CRD_FILES:
            assert schema_errors(obj) == [], obj["kind"]
            assert cel_errors(obj)[0] == [], obj["kind"]
            checked += 1
        elif obj["kind"] == "PodMonitoring":
            continue  # GKE Managed Service for Prometheus CRD: no schema staged (named in docs/serving.md)
        else:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    assert checked >= 2  # ScaledObject and TriggerAuthentication at least


def test_multi_node_replicas_render_as_a_leaderworkerset_the_autoscaler_targets():
    big = next(s for s in _objects("multi-node").services if s.name == "big")
    lws = big.workload
    assert lws["kind"] == "LeaderWorkerSet" and lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    assert leader["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert "--tensor-parallel-size 8" in leader["command"][2] and "--pipeline-parallel-size 2" in leader["command"][2]
    assert big.scaled_object["spec"]["scaleTargetRef"]["kind"] == "LeaderWorkerSet"
    assert big.service["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving"])
def test_autoscaling_reads_vllm_queue_depth_kv_cache_usage_and_completion_rate(stack):
    svc = _objects(stack).services[0]
    triggers = svc.scaled_object["spec"]["triggers"]
    assert [t["metadata"]["query"].split("{")[0] for t in triggers] == [
        "sum(vllm:num_requests_waiting",
        "avg(vllm:kv_cache_usage_perc",
        "sum(rate(vllm:request_success_total",
    ]
    assert [t["metricType"] for t in triggers] == ["AverageValue", "Value", "AverageValue"]
    # completed requests/s per replica: 0.8 × the row's rate (output tok/s per GPU ÷ output tokens per request),
    # no time in server in it; a rate over 4 scrapes (GKE 15 s, EKS 30 s)
    served, window = {
        "gke-serving": (round(0.8 * 5104 / 200, 2), "[1m]"),
        "eks-serving": (round(0.8 * 1207 / 200, 2), "[2m]"),
    }[stack]
    assert [t["metadata"]["threshold"] for t in triggers] == ["5", "0.8", f"{served:g}"]
    assert triggers[2]["metadata"]["query"].endswith(f"{window}))")
    spec = _plan(stack).spec.serving.services[0]
    assert (svc.scaled_object["spec"]["minReplicaCount"], svc.scaled_object["spec"]["maxReplicaCount"]) == (
        spec.replicas.min,
        spec.replicas.max,
    )
    address = triggers[0]["metadata"]["serverAddress"]
    assert address.startswith(
        "https://monitoring.googleapis.com/"
        if stack == "gke-serving"
        else "https://aps-workspaces.us-east-1.amazonaws.com/"
    )


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving"])
def test_serving_runs_above_training_and_is_admitted_through_its_own_queue(stack):
    plan = _plan(stack)
    objs = _objects(stack)
    top_training = max(pc.value for pc in plan.spec.scheduling.priority_classes)
    assert objs.priority_class["value"] > top_training
    pod = objs.services[0].workload["spec"]["template"]
    assert pod["spec"]["priorityClassName"] == SERVING_PRIORITY_CLASS
    assert pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == SERVING_QUEUE
    assert objs.services[0].pdb["spec"]["minAvailable"] == plan.spec.serving.services[0].replicas.min


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving"])
def test_serving_queue_lends_idle_gpus_to_the_training_cohort_and_never_borrows(stack):
    plan = _plan(stack)
    kueue = render_kueue(plan.kueue.scheduling, list(plan.facts), plan.kueue.placements)
    cq = next(
        o for o in kueue.custom_resources() if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == SERVING_QUEUE
    )
    assert cq["spec"]["cohortName"] == plan.spec.scheduling.cohort
    svcs = plan.spec.serving.services  # all on one pool in both examples
    gpu = next(
        r
        for g in cq["spec"]["resourceGroups"]
        for f in g["flavors"]
        for r in f["resources"]
        if r["name"] == "nvidia.com/gpu"
    )
    assert gpu["nominalQuota"] == sum(s.replicas.max * s.gpus_per_replica for s in svcs)  # gke: 8 + 16
    assert gpu["borrowingLimit"] == 0  # nothing borrowed, so no reclaim can ever preempt serving
    assert gpu["lendingLimit"] == sum((s.replicas.max - s.replicas.min) * s.gpus_per_replica for s in svcs)  # gke: 6
    # serving runs above every training class, so Any and LowerPriority both take its lent GPUs back from training
    assert cq["spec"]["preemption"]["reclaimWithinCohort"] in ("Any", "LowerPriority")
    wpc = next(
        o
        for o in kueue.custom_resources()
        if o["kind"] == "WorkloadPriorityClass" and o["metadata"]["name"] == SERVING_PRIORITY_CLASS
    )
    assert wpc["value"] == plan.spec.serving.priority
    for obj in kueue.custom_resources():
        if obj["kind"] in ("ClusterQueue", "WorkloadPriorityClass", "LocalQueue"):
            assert schema_errors(obj) == []


def test_gke_routes_each_service_through_its_inference_pool():
    objs = _objects("gke-serving")
    route = objs.services[0].route
    assert route["spec"]["rules"][0]["backendRefs"] == [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "chat"}
    ]
    assert objs.gateway["spec"]["gatewayClassName"] == "gke-l7-rilb"
    values = objs.services[0].inference_pool_values
    assert values["inferencePool"]["modelServers"]["matchLabels"] == {
        "app.kubernetes.io/name": "vllm",
        "app.kubernetes.io/instance": "chat",
    }
    assert values["provider"]["name"] == "gke"


def test_eks_has_no_gateway_objects():
    objs = _objects("eks-serving")
    assert objs.gateway is None and objs.services[0].route is None and objs.services[0].inference_pool_values is None


def test_vllm_flags_follow_the_spec():
    cmd = _objects("gke-serving").services[0].workload["spec"]["template"]["spec"]["containers"][0]["command"][2]
    # what a replica holds at its measured rate (Little's law): 5,104 tok/s ÷ 200 tokens = 25.52 req/s × 200 tokens ×
    # 25.1 ms = 128.1 -> 129 sequences, not 413 (peak ÷ max replicas × the SLO latency), so load above the measured
    # rate waits in vLLM's queue, which the waiting trigger reads, instead of slowing every decode
    for flag in (
        "--max-num-seqs 129",
        "--max-model-len 8192",
        "--gpu-memory-utilization 0.92",
        "--kv-cache-dtype fp8",
        "--load-format runai_streamer",
        "--tensor-parallel-size 1",
    ):
        assert flag in cmd


@pytest.mark.parametrize("stack", STACKS)
def test_workloads_the_autoscaler_scales_leave_their_replica_count_to_it(stack):
    # a replicas field would conflict with the HPA under server-side apply, or reset replicas to min on each update
    for svc in _objects(stack).services:
        assert svc.scaled_object["spec"]["scaleTargetRef"]["name"] == svc.workload["metadata"]["name"]
        assert "replicas" not in svc.workload["spec"]
