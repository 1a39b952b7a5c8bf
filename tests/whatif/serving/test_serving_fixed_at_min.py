"""An autoscaler whose metric source gpu-cluster neither fills nor grants may read nothing: the what-if then runs
every service at replicas.min and says so in its answer; with the rendered source it scales."""

from __future__ import annotations

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


def test_the_price_at_peak_uses_the_replicas_the_simulated_autoscaler_reaches_at_a_steady_peak():
    """One autoscaler model (stacks/plan/serving.py desired_replicas) for the price and the what-if: at the peak all
    day, the what-if settles on the preview's replicas at peak."""
    from stacks.plan.serving_cost import serving_rows

    for stack, svc_index in (("gke-serving", 0), ("eks-serving", 0)):
        cfg = edits(
            read_stack_config(stack_path(stack)),
            {("serving", "services", svc_index, "traffic", "dailyProfile"): [1.0] * 24},
        )
        spec = load_stack_spec(cfg)
        facts = {f.name: f for f in plan_stack(spec, load_catalog()).facts}
        result = simulate(spec, facts, [], hours=4)
        row = serving_rows(spec, list(facts.values()))[svc_index]
        sim = next(s for s in result.services if s.name == row["service"])
        assert sim.replicas_max_seen == row["replicasAtPeak"], stack
