"""The preview's violations do not depend on the order resources were registered in (the SDK registers
from a thread pool, so that order varies run to run): the same stack gives the same JSON every time."""

from __future__ import annotations

import copy

from catalog.loader import load_catalog
from preview.engine import PROJECT_ROOT, read_stack_file
from preview.policy.check import PolicyOptions, apply_policies
from preview.run import preview_stack
from tests.support.policy.harness import wire, with_props
from stacks.validate.load import decode_config, load_spec

STACK = "eks-over-budget"  # node groups h200-team-a, h200-team-b and the system one, each with a launch template
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _imdsv1(r):
    """The launch template with IMDSv1 allowed: one security-eks-imdsv2 finding per template (a resource rule)."""
    if r.type != LAUNCH_TEMPLATE:
        return r
    props = wire(r)
    props["metadataOptions"]["httpTokens"] = "optional"
    return with_props(r, props)


def _violations(reverse: bool) -> list:
    recorded = preview_stack(STACK, policies=PolicyOptions(enabled=False))
    spec, _ = load_spec(decode_config(read_stack_file(PROJECT_ROOT / f"Pulumi.{STACK}.yaml")), load_catalog())
    report = copy.copy(recorded)
    report.cost = copy.deepcopy(recorded.cost)
    report.warnings = list(recorded.warnings)
    resources = [_imdsv1(r) for r in recorded.resources]
    report.resources = list(reversed(resources)) if reverse else resources
    apply_policies(report, spec, PolicyOptions())
    return report.violations


def test_violations_come_out_in_one_order_whatever_the_registration_order():
    forward, backward = _violations(False), _violations(True)
    assert len([v for v in forward if v["policy"] == "security-eks-imdsv2"]) == 3  # one per template: an order
    assert forward == backward


def test_the_markdown_resource_table_does_not_depend_on_the_registration_order():
    from preview.render.markdown import render_markdown

    recorded = preview_stack("dev", policies=PolicyOptions(enabled=False))
    backward = copy.copy(recorded)
    backward.resources = list(reversed(recorded.resources))
    forward_page, backward_page = render_markdown(recorded), render_markdown(backward)
    assert "| `gpu-cluster:gcp:GkeGpuNodePool` | l4 | stack |" in forward_page  # the table is there
    assert forward_page == backward_page
