"""One autoscaler for the rendered ScaledObject and the what-if: the completion-rate trigger the cluster runs and the
one the simulation evaluates divide by the same target, the replica count follows ceil(served/s ÷ (0.8 × the
measured rate)) whatever the time requests spend in the server, and a metric within the HPA's tolerance leaves the
replica count alone."""

from __future__ import annotations

import functools
import math

import pytest

from catalog import load_catalog
from render.serving import render_serving
from stacks.plan.serving import evidence, served_target
from stacks.plan.serving_autoscale import desired_replicas
from stacks.plan.stack import plan_stack
from whatif.stack import load_stack_spec, read_stack_config, stack_path

MU = 5104 / 200  # gke-serving chat: RedHat 5.1-0083, 5,104 output tok/s per H100 ÷ 200 tokens = 25.52 req/s


@functools.cache
def _plan(stack: str):
    return plan_stack(load_stack_spec(read_stack_config(stack_path(stack))), load_catalog())


def _chat(stack: str = "gke-serving"):
    plan = _plan(stack)
    svc = plan.spec.serving.services[0]
    facts = {f.name: f for f in plan.facts}
    return plan, svc, evidence(svc, facts[svc.pool].machine.gpu_model)


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving"])
def test_the_rendered_completion_trigger_and_the_simulated_one_use_the_same_target(stack):
    plan, svc, ev = _chat(stack)
    objs = render_serving(
        plan.spec.serving,
        {f.name: f for f in plan.facts},
        plan.cloud,
        plan.spec.region,
        plan.spec.project,
        plan.kueue is not None,
    )
    (trigger,) = [t for t in objs.services[0].scaled_object["spec"]["triggers"] if t["name"] == "served"]
    assert "vllm:request_success_total" in trigger["metadata"]["query"]
    assert float(trigger["metadata"]["threshold"]) == served_target(svc, ev)
    a = plan.spec.serving.autoscaling
    target = float(trigger["metadata"]["threshold"])
    for served in (0.5 * target, 2.5 * target, 4.2 * target):  # the HPA: ceil(total / AverageValue target)
        want = min(svc.replicas.max, max(svc.replicas.min, math.ceil(served / target)))
        assert desired_replicas(svc, ev, a, served, 3, 1e12, current=3) == want


def test_replicas_follow_the_completion_rate_not_the_time_in_server():
    _, svc, ev = _chat()
    a = _plan("gke-serving").spec.serving.autoscaling
    assert served_target(svc, ev) == pytest.approx(round(0.8 * MU, 2))  # 20.42 req/s per replica
    # peak 150 req/s: ceil(150 / 20.42) = 8 (7.35), with no KV pressure and no queue
    assert desired_replicas(svc, ev, a, 150.0, 2, 1e12, current=2) == 8
    # 60 req/s: ceil(60 / 20.42) = 3 (2.94)
    assert desired_replicas(svc, ev, a, 60.0, 2, 1e12, current=2) == 3


def test_a_metric_within_the_hpa_tolerance_keeps_the_replica_count():
    _, svc, ev = _chat()
    a = _plan("gke-serving").spec.serving.autoscaling
    # 150 req/s on 7 replicas: 150 / (7 × 20.42) = 1.049, within 10 %: the HPA stays at 7, not ceil(7.35) = 8
    assert desired_replicas(svc, ev, a, 150.0, 7, 1e12, current=7) == 7
    # 160 req/s: 1.119, outside: ceil(160 / 20.42) = 8
    assert desired_replicas(svc, ev, a, 160.0, 7, 1e12, current=7) == 8


def _kv_tokens_for_usage(svc, ev, served: float, ready: int, usage: float) -> float:
    """KV-cache tokens per replica that put ``ready`` replicas at ``usage`` while serving ``served`` req/s."""
    from stacks.plan.serving import time_in_server_s

    tokens = served * time_in_server_s(svc, ev) * (svc.traffic.input_tokens + svc.traffic.output_tokens / 2)
    return tokens / (ready * usage)


def test_kv_usage_within_tolerance_keeps_every_replica_while_new_ones_start():
    """The KV trigger is a Value metric: the HPA tests |usage / target - 1| itself, not scaled by ready / all pods.
    3 ready of 5 (2 starting), usage 1.05 × the target: within 10 %, so 5 stay (not ceil(3 × 1.05 / 5 × 5) = 4)."""
    _, svc, ev = _chat()
    a = _plan("gke-serving").spec.serving.autoscaling
    served = 10.0  # the completion-rate trigger asks min replicas
    kv = _kv_tokens_for_usage(svc, ev, served, 3, 1.05 * a.kv_cache_usage)
    assert desired_replicas(svc, ev, a, served, 3, kv, current=5) == 5


def test_kv_usage_outside_tolerance_scales_the_ready_replicas():
    """Outside the tolerance the HPA asks ceil(usage / target × ready pods): 3 ready at 1.2 × the target -> 4."""
    _, svc, ev = _chat()
    a = _plan("gke-serving").spec.serving.autoscaling
    served = 10.0
    kv = _kv_tokens_for_usage(svc, ev, served, 3, 1.2 * a.kv_cache_usage)
    assert desired_replicas(svc, ev, a, served, 3, kv, current=3) == 4
