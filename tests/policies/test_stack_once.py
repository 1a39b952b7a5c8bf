"""The in-process AnalyzeStack (resources built once for all stack rules) answers exactly as the SDK's servicer:
the same diagnostics, in the same order, and the same "not applicable" entries, on example stacks with and
without violations and on a pack config that disables a rule and raises another to mandatory."""

from __future__ import annotations

import json

import pytest

from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from preview.policy.analyzer import Analyzer, InProcessAnalyzer
from preview.policy.config import configure_request, parse_config_text, reconcile
from preview.policy.stack_once import analyze_stack
from pulumi.runtime.proto import analyzer_pb2 as apb


class Capture(InProcessAnalyzer):
    """Keeps the AnalyzeStack request instead of answering it."""

    def _call(self, method, request):
        if method == "AnalyzeStack":
            self.request = request
            return apb.AnalyzeResponse()
        return super()._call(method, request)


def servicer_and_request(stack: str, given: dict | None = None):
    analyzer = Capture()
    info = analyzer.info()
    analyzer.configure_stack(stack)
    analyzer.configure(configure_request(reconcile(info, parse_config_text(json.dumps(given or {}), "t"), "t")))
    resources = run_program(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"), stack).resources
    providers = {r.urn: r for r in resources if r.type.startswith("pulumi:providers:")}
    Analyzer.analyze_stack(analyzer, resources, providers)
    return analyzer._svc, analyzer.request


@pytest.mark.parametrize("stack", ["dev", "gke-a3-spread", "eks-over-budget", "gke-kueue", "fleet"])
def test_built_once_answers_as_the_servicer(stack):
    svc, request = servicer_and_request(stack)
    ours, sdks = analyze_stack(svc, request), svc.AnalyzeStack(request, None)
    assert ours == sdks  # protobuf equality: every diagnostic field, in order
    assert len(request.resources) > 10


def test_levels_from_the_config_are_honoured_as_by_the_servicer():
    svc, request = servicer_and_request(
        "eks-over-budget",
        {
            "cost-stack-budget": {"enforcementLevel": "disabled"},
            "cost-gpu-hour-limit": {"enforcementLevel": "mandatory"},
        },
    )
    ours, sdks = analyze_stack(svc, request), svc.AnalyzeStack(request, None)
    assert ours == sdks
    assert not any(d.policyName == "cost-stack-budget" for d in ours.diagnostics)
