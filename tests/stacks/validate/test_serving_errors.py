"""Bad serving sections: each case breaks one field of a valid example and checks what the user reads (config path,
the numbers, what is allowed, the fix). The fit, SLO-evidence and protection checks each have a case that passes
only while the check exists."""

from __future__ import annotations

from typing import Any


from preview.engine import PROJECT_ROOT, read_stack_file
from stacks.validate.issues import SpecError, SpecIssue
from stacks.validate.load import decode_config, load_spec
from tests.support.spec.edit import DELETE, edits

SVC = ("serving", "services", 0)


def _stack(name: str) -> dict[str, Any]:
    return decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{name}.yaml"))


GKE, EKS = _stack("gke-serving"), _stack("eks-serving")


def _issues(raw: dict[str, Any]) -> tuple[list[SpecIssue], list[SpecIssue]]:
    """(errors, warnings) about serving."""
    try:
        _, warnings = load_spec(raw)
        errors: list[SpecIssue] = []
    except SpecError as exc:
        errors, warnings = exc.errors, [i for i in exc.issues if i.warning]
    keep = [i for i in errors if "serving" in i.path], [i for i in warnings if "serving" in i.path]
    return keep


def test_examples_have_no_serving_errors_and_flag_only_evidence_from_another_engine():
    assert _issues(EKS) == ([], [])
    errors, warnings = _issues(GKE)
    assert errors == []
    # 405B: a TensorRT-LLM row only, and 8 ranks per node each streaming the whole checkpoint
    assert sorted(w.path for w in warnings) == [
        "gpu-cluster:serving.services[1].modelUri",
        "gpu-cluster:serving.services[1].server",
    ]


def test_every_rank_streaming_the_whole_405b_checkpoint_is_flagged_with_the_bytes_and_the_probe():
    _, warnings = _issues(GKE)
    (w,) = [w for w in warnings if w.path.endswith("modelUri")]
    assert "8 × 406 GB = 3,247 GB per node" in w.problem and "≈1,075 s" in w.problem
    assert "the startup probe allows 1,620 s" in w.problem and "not measured" in w.problem


def test_llama_70b_bf16_on_one_h100_is_refused_with_the_gib_missing():
    raw = edits(GKE, {(*SVC, "model"): "llama-3.1-70b", (*SVC, "precision"): "bf16", (*SVC, "maxConcurrency"): 1})
    errors, _ = _issues(raw)
    assert len(errors) == 1
    e = errors[0]
    assert e.path == "gpu-cluster:serving.services[0].gpusPerReplica"
    # 70,553,706,496 parameters × 2 bytes = 131.4 GiB of weights alone; 1 × 80 GiB × 0.92 = 73.6 GiB
    assert "weights 131.4 GiB" in e.problem and "1 × 80 GiB (a3-highgpu-8g) × 0.92" in e.problem
    assert "= 73.6 GiB: 60.3 GiB missing" in e.problem  # + one 8,192-token context: 8192 × 320 KiB = 2.5 GiB
    assert e.allowed == "at least 2 GPUs of this type per replica"
    assert e.fix.startswith("set gpusPerReplica: 2 (tensor parallel)")


def test_the_same_model_on_two_h100s_fits():
    raw = edits(
        GKE,
        {
            (*SVC, "model"): "llama-3.1-70b",
            (*SVC, "precision"): "bf16",
            (*SVC, "maxConcurrency"): 1,
            (*SVC, "gpusPerReplica"): 2,
            (*SVC, "replicas"): {"min": 1, "max": 4},
        },
    )
    errors, _ = _issues(raw)
    assert [e for e in errors if "does not fit" in e.problem] == []


def test_kv_cache_of_the_declared_concurrency_counts_toward_the_fit():
    # 8B fp8: 7.5 GiB weights; 4000 requests × 1200 tokens × 64 KiB (fp8 KV) = 293 GiB of KV cache
    errors, _ = _issues(edits(GKE, {(*SVC, "maxConcurrency"): 4000}))
    assert len(errors) == 1 and "KV cache 293.0 GiB (4,800,000 tokens × 64 KiB" in errors[0].problem


def test_an_slo_no_source_measured_is_flagged_no_evidence_not_guessed():
    _, warnings = _issues(edits(GKE, {(*SVC, "slo"): {"ttftP99Ms": 300, "tpotP99Ms": 20}}))
    flagged = [w for w in warnings if w.path.endswith("services[0].slo")]
    assert len(flagged) == 1
    assert flagged[0].problem.startswith(
        "no evidence: no measured run of llama-3.1-8b on H100_80GB in fp8 held p99 TTFT ≤ 300 ms and TPOT ≤ 20 ms"
    )


def test_a_custom_model_has_no_evidence():
    custom = {"parametersBillions": 7.0, "layers": 32, "kvHeads": 8, "headDim": 128}
    _, warnings = _issues(edits(GKE, {(*SVC, "model"): DELETE, (*SVC, "customModel"): custom}))
    assert any(w.problem.startswith("no evidence: no measured run of a custom model") for w in warnings)


def test_max_replicas_below_what_the_peak_needs_at_the_measured_throughput_is_refused():
    errors, _ = _issues(edits(GKE, {(*SVC, "traffic", "peakRequestsPerSecond"): 300}))
    assert len(errors) == 1
    e = errors[0]
    assert e.path == "gpu-cluster:serving.services[0].replicas.max"
    # RedHat 5.1-0083: 5,104 output tok/s per H100 ÷ 200 output tokens = 25.52 req/s per replica
    assert "8 replicas × 25.52 req/s = 204.2 req/s < peak 300 req/s" in e.problem
    assert "RedHat 5.1-0083 (2025-09-09)" in e.problem
    assert e.allowed == "at least 12"


def test_evidence_from_another_engine_is_flagged():
    raw = edits(
        GKE,
        {
            (*SVC, "model"): "llama-2-70b",
            (*SVC, "gpusPerReplica"): 2,
            (*SVC, "maxConcurrency"): 16,
            (*SVC, "replicas"): {"min": 2, "max": 4},
            (*SVC, "slo"): {"ttftP99Ms": 2000, "tpotP99Ms": 200},
            (*SVC, "traffic", "peakRequestsPerSecond"): 10,
        },
    )
    errors, warnings = _issues(raw)
    assert errors == []
    assert any(w.path.endswith("server") and "measured with tensorrt-llm, not vllm" in w.problem for w in warnings)


def test_serving_on_a_spot_pool_is_refused():
    errors, _ = _issues(edits(EKS, {("nodePools", 1, "capacity"): {"type": "spot"}}))
    assert [e.path for e in errors] == ["gpu-cluster:serving.services[0].pool"]
    assert "is spot-only" in errors[0].problem


def test_serving_priority_not_above_training_is_refused():
    errors, _ = _issues(edits(GKE, {("serving", "priority"): 1000}))
    assert len(errors) == 1
    assert errors[0].problem == (
        "not above training's highest priority class ('production': 1000), so training could preempt serving"
    )


def test_scale_to_zero_is_refused():
    errors, _ = _issues(edits(GKE, {(*SVC, "replicas", "min"): 0}))
    assert [e.path for e in errors] == ["gpu-cluster:serving.services[0].replicas.min"]


def test_serving_plus_training_quota_beyond_the_pool_is_refused():
    errors, _ = _issues(edits(GKE, {(*SVC, "replicas", "max"): 9}))
    assert any(
        "training quotas (24 GPUs) + serving at max replicas (25 GPUs) = 49, more than the pool has at "
        "maxNodes (6 × 8 = 48)" in e.problem
        for e in errors
    )


def test_a_serving_pool_inside_slurm_nodesets_is_refused():
    raw = edits(
        GKE,
        {
            ("scheduling",): {
                "workload": "slurm",
                "queues": [{"name": "research", "quotas": [{"pool": "h100", "gpus": 24}]}],
            }
        },
    )
    errors, _ = _issues(raw)
    assert any(e.path == "gpu-cluster:serving.services[0].pool" and "Slurm NodeSet" in e.problem for e in errors)


def test_multi_node_replicas_take_whole_nodes_of_a_multi_node_pool():
    errors, _ = _issues(
        edits(
            GKE, {(*SVC, "nodesPerReplica"): 2, (*SVC, "gpusPerReplica"): 8, (*SVC, "replicas"): {"min": 1, "max": 1}}
        )
    )
    assert [e.allowed for e in errors] == ["16"]


def test_eks_needs_a_prometheus_url_for_keda():
    errors, _ = _issues(edits(EKS, {("serving", "autoscaling", "prometheusUrl"): DELETE}))
    assert [e.path for e in errors] == ["gpu-cluster:serving.autoscaling.prometheusUrl"]


def test_unknown_model_gets_did_you_mean():
    errors, _ = _issues(edits(GKE, {(*SVC, "model"): "llama-3.1-8"}))
    assert errors[0].path.endswith("services[0].model") and "did you mean 'llama-3.1-8b'" in errors[0].fix


def test_a_replica_slower_to_start_than_the_ramp_is_warned_with_its_parts():
    raw = edits(EKS, {(*SVC, "replicas", "min"): 1, (*SVC, "traffic", "rampSeconds"): 60})
    _, warnings = _issues(raw)
    ramp = [w for w in warnings if w.path.endswith("traffic.rampSeconds")]
    assert (
        len(ramp) == 1
        and "longer than the 60 s ramp" in ramp[0].problem
        and "weights and server start" in ramp[0].problem
    )


def test_the_eks_cold_start_counts_amps_30_s_scrape_and_a_keda_poll():
    raw = edits(EKS, {(*SVC, "replicas", "min"): 1, (*SVC, "traffic", "rampSeconds"): 60})
    (ramp,) = [w for w in _issues(raw)[1] if w.path.endswith("traffic.rampSeconds")]
    assert "metric polls 45 s" in ramp.problem  # one 30 s scrape (AMP's minimum) + one 15 s KEDA poll


def test_a_training_queue_may_not_take_the_name_of_servings_default_cluster_queue():
    errors, _ = _issues(edits(GKE, {("scheduling", "queues", 0, "name"): "serving-default"}))
    assert any(e.value == "serving-default" and "serving's own ClusterQueues" in e.problem for e in errors)


def test_a_cohort_that_never_reclaims_is_refused_since_serving_could_not_scale_up():
    raw = edits(GKE, {("scheduling", "preemption", "reclaimWithinCohort"): "Never"})
    try:
        load_spec(raw)
        errors: list[SpecIssue] = []
    except SpecError as exc:
        errors = exc.errors
    (err,) = [e for e in errors if e.path.endswith("reclaimWithinCohort")]
    assert err.path == "gpu-cluster:scheduling.preemption.reclaimWithinCohort"
    assert "cannot take them back" in err.problem and "LowerPriority" in err.fix
    load_spec(edits(GKE, {("scheduling", "preemption", "reclaimWithinCohort"): "Any"}))  # any reclaim is enough
