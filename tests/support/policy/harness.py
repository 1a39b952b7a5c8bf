"""Policy test helpers: baseline resources recorded from the real components, and the pack driven through the
analyzer protocol in process (the SDK's servicer, with the CLI's config reconciliation). Change one field of a
resource with ``with_props(r, edit(wire(r), "nodeConfig.taints[0].effect", "X"))`` (``tests.support.spec.edit``)."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

from google.protobuf import json_format

from preview.policy.analyzer import LEVELS, InProcessAnalyzer, to_struct
from preview.engine import PROJECT_ROOT, Registered, read_stack_file, run_program
from preview.policy.config import configure_request, parse_config_text, reconcile
from tests.support.spec.stack_configs import EKS, GKE

FIXED_DATE = "2026-12-02"
"""cost-price-age judges ages on this date in tests, so results do not change with the calendar."""


@functools.cache
def _recording(cloud: str) -> tuple[Registered, ...]:
    return tuple(run_program({"gcp": GKE, "aws": EKS}[cloud]).resources)


def baseline(cloud: str) -> list[Registered]:
    """The resources the real components create for tests.support.spec.stack_configs.GKE / EKS (copies: safe to change)."""
    return [copy.deepcopy(r) for r in _recording(cloud)]


@functools.cache
def _example_recording(stack: str) -> tuple[Registered, ...]:
    return tuple(run_program(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"), stack).resources)


def example(stack: str) -> list[Registered]:
    """The resources an example stack file (``Pulumi.<stack>.yaml``) creates, run once per test session (copies:
    safe to change)."""
    return [copy.deepcopy(r) for r in _example_recording(stack)]


def find(resources: list[Registered], type_: str, name: str) -> Registered:
    hits = [r for r in resources if r.type == type_ and r.name == name]
    assert len(hits) == 1, f"no single {type_} {name}: {[r.name for r in resources if r.type == type_]}"
    return hits[0]


def wire(r: Registered) -> dict[str, Any]:
    """The inputs exactly as the engine sends them (secrets and unknowns encoded), as a plain dict."""
    return json_format.MessageToDict(r.raw_inputs)


def with_props(r: Registered, props: dict[str, Any]) -> Registered:
    out = copy.deepcopy(r)
    out.raw_inputs = to_struct(props)
    out.inputs = props
    return out


def fake(type_: str, name: str, props: dict[str, Any], parent: str = "", provider: str = "") -> Registered:
    return Registered(
        type=type_,
        name=name,
        urn=f"urn:pulumi:test::gpu-cluster::{type_}::{name}",
        parent_urn=parent,
        custom=True,
        inputs=props,
        raw_inputs=to_struct(props),
        provider=provider,
    )


class Pack:
    """The real pack in process; ``configure`` applies a --policy-pack-config dict the way the CLI does."""

    def __init__(self) -> None:
        self.analyzer = InProcessAnalyzer()
        self.info = self.analyzer.info()
        self.configure()

    def configure(self, config: dict[str, Any] | None = None) -> None:
        given = {"cost-price-age": {"evaluationDate": FIXED_DATE}, **(config or {})}
        self.analyzer.configure_stack("test")
        self.analyzer.configure(configure_request(reconcile(self.info, parse_config_text(json.dumps(given), "t"))))

    @staticmethod
    def _diags(response) -> list[tuple[str, str, str]]:
        out = []
        for d in response.diagnostics:
            message = d.message[len(d.description) + 1 :] if d.message.startswith(d.description + "\n") else d.message
            out.append((d.policyName, LEVELS[d.enforcementLevel], message))
        return out

    def resource(self, r: Registered, resources: list[Registered] | None = None) -> list[tuple[str, str, str]]:
        """Diagnostics of Analyze on one resource (its provider looked up in ``resources``)."""
        providers = {p.urn: p for p in (resources or []) if p.type.startswith("pulumi:providers:")}
        return self._diags(self.analyzer.analyze(r, providers))

    def stack(self, resources: list[Registered]) -> list[tuple[str, str, str]]:
        providers = {p.urn: p for p in resources if p.type.startswith("pulumi:providers:")}
        return self._diags(self.analyzer.analyze_stack(resources, providers))

    def everything(self, resources: list[Registered]) -> list[tuple[str, str, str]]:
        out = [d for r in resources for d in self.resource(r, resources)]
        return out + self.stack(resources)

    def not_applicable(self, r: Registered, resources: list[Registered] | None = None) -> list[tuple[str, str]]:
        providers = {p.urn: p for p in (resources or []) if p.type.startswith("pulumi:providers:")}
        return [(n.policy_name, n.reason) for n in self.analyzer.analyze(r, providers).not_applicable]
