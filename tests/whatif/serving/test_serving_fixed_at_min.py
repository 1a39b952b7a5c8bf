"""An autoscaler whose metric source gpu-cluster neither fills nor grants may read nothing: the what-if then runs
every service at replicas.min and says so in its answer; with the rendered source it scales."""

from __future__ import annotations

import pytest

from catalog import load_catalog
from stacks.plan.stack import plan_stack
from tests.support.spec.edit import edits
from whatif.serving.report import as_dict, verdict
from whatif.serving.sim import TrainingLoad, simulate
from whatif.stack import load_stack_spec, read_stack_config, stack_path


def _run(url: str | None):
    cfg = read_stack_config(stack_path("eks-serving"))
    if url is not None:
        cfg = edits(cfg, {("serving", "autoscaling", "prometheusUrl"): url})
    spec = load_stack_spec(cfg)
    facts = {f.name: f for f in plan_stack(spec, load_catalog()).facts}
    return spec, simulate(spec, facts, [TrainingLoad("l40s-serve", gpus_per_job=1)], hours=24)


def test_with_the_rendered_metric_source_the_autoscaler_scales():
    spec, result = _run(None)
    assert result.fixed_at_min is None
    assert result.services[0].replicas_max_seen > spec.serving.services[0].replicas.min


def test_with_an_unreachable_metric_source_replicas_stay_at_min_and_the_answer_says_so():
    spec, result = _run("https://prometheus.example.com")
    (svc,) = result.services
    assert svc.replicas_max_seen == spec.serving.services[0].replicas.min == 2 and svc.scale_ups == 0
    assert "replicas fixed at min" in verdict(result)[1]
    assert "is not an Amazon Managed Service for Prometheus workspace" in as_dict(spec, result)["replicasFixedAtMin"]


def _priced_and_simulated(stack: str, profile: list[float] | None):
    """The preview's replicas at peak and the what-if's replicas in each minute of the service's peak hours."""
    from stacks.plan.serving_autoscale import peak_hours
    from stacks.plan.serving_cost import serving_rows

    cfg = read_stack_config(stack_path(stack))
    if profile is not None:
        cfg = edits(cfg, {("serving", "services", 0, "traffic", "dailyProfile"): profile})
    spec = load_stack_spec(cfg)
    facts = {f.name: f for f in plan_stack(spec, load_catalog()).facts}
    result = simulate(spec, facts, [], hours=24)
    row = serving_rows(spec, list(facts.values()))[0]
    sim = next(s for s in result.services if s.name == row["service"])
    svc = spec.serving.services[0]
    peak = {sim.replicas_by_minute[h * 60 + m] for h in peak_hours(svc) for m in range(60)}
    return row, peak


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving"])
def test_the_price_at_peak_uses_the_replicas_the_what_if_runs_through_the_shipped_peak_hours(stack):
    """One autoscaler model (stacks/plan/serving_autoscale.py) for the price and the what-if: climbing the shipped
    daily profile, the what-if runs the priced replica count in every minute of the profile's peak hours."""
    row, peak = _priced_and_simulated(stack, None)
    assert peak == {row["replicasAtPeak"]}


def test_chat_climbing_its_day_runs_seven_replicas_at_peak_and_is_priced_at_seven():
    """At 150 req/s both 7 and 8 replicas are within the HPA's tolerance of the 20.42 req/s target; the day climbs
    6 -> 7 at 135 req/s and stays at 7 (150 / (7 × 20.42) = 1.049), so the price is 7 × $11.06125 per 108 M tokens."""
    row, peak = _priced_and_simulated("gke-serving", None)
    assert peak == {7} and row["replicasAtPeak"] == 7
    assert row["usdPerMillionOutputTokens"] == pytest.approx(7 * 88.49 / 8 / (150 * 200 * 3600) * 1e6, abs=1e-4)


def test_a_day_at_peak_from_midnight_fills_the_queue_and_the_price_follows_the_replicas_it_settles_on():
    """A step from min replicas to the peak fills vLLM's queue: the waiting trigger asks max, and 8 is within the
    tolerance at 150 req/s (0.918), so it stays; the price follows the same path."""
    row, peak = _priced_and_simulated("gke-serving", [1.0] * 24)
    assert peak == {8} and row["replicasAtPeak"] == 8
